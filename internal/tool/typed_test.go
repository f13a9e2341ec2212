package tool

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

type addArgs struct {
	A     int    `json:"a" jsonschema:"description=first addend"`
	B     int    `json:"b" jsonschema:"description=second addend"`
	Label string `json:"label,omitempty"`
}

func TestNewSchemaAndValidation(t *testing.T) {
	tl := New("add", "adds", func(_ context.Context, _ *RunContext, a addArgs) (string, error) {
		return a.Label + ":" + string(rune('0'+a.A+a.B)), nil
	})
	s := tl.Spec()
	var m map[string]any
	if err := json.Unmarshal(s.Schema, &m); err != nil {
		t.Fatal(err)
	}
	if m["type"] != "object" || !strings.Contains(string(s.Schema), "first addend") {
		t.Fatalf("schema: %s", s.Schema)
	}
	if _, ok := m["$schema"]; ok {
		t.Fatalf("schema keeps $schema: %s", s.Schema)
	}
	req, _ := m["required"].([]any)
	if len(req) != 2 {
		t.Fatalf("required = %v", req)
	}
	tests := []struct {
		args    string
		wantErr string
	}{
		{`{"a":1,"b":2}`, ""},
		{`{"a":1}`, "missing"},
		{`{"a":"x","b":2}`, "/a"},
		{`{"a":1,"b":2,"c":3}`, "additional"},
		{`not json`, "not valid JSON"},
	}
	for _, tc := range tests {
		err := s.Validate(json.RawMessage(tc.args))
		if tc.wantErr == "" && err != nil {
			t.Errorf("%s: unexpected %v", tc.args, err)
		}
		if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: err = %v, want containing %q", tc.args, err, tc.wantErr)
		}
	}
	res, err := tl.Invoke(context.Background(), &RunContext{}, json.RawMessage(`{"a":1,"b":2,"label":"x"}`))
	if err != nil || res.Text != "x:3" {
		t.Fatalf("invoke = %+v, %v", res, err)
	}
}

func TestTruncate(t *testing.T) {
	s := strings.Repeat("a", 100) + strings.Repeat("b", 100)
	out, cut := Truncate(s, 60)
	if !cut || !strings.HasPrefix(out, "aaaa") || !strings.HasSuffix(out, "bbbb") || !strings.Contains(out, "140 characters truncated") {
		t.Fatalf("truncate: %v %q", cut, out)
	}
	if out, cut := Truncate("short", 60); cut || out != "short" {
		t.Fatal("short string changed")
	}
}

// TestLazyValidatorReportsBadSchema: a schema that cannot compile is reported on the
// call, naming the tool, instead of panicking.
func TestLazyValidatorReportsBadSchema(t *testing.T) {
	v := lazyValidator("broken", json.RawMessage(`{"type":"object","properties":{"a":{"type":"no-such-type"}}}`))
	for range 2 {
		err := v(json.RawMessage(`{"a":1}`))
		if err == nil || !strings.Contains(err.Error(), "tool broken: schema:") {
			t.Fatalf("err = %v, want the tool's schema error", err)
		}
	}
	ok := lazyValidator("fine", json.RawMessage(`{"type":"object","required":["a"],"properties":{"a":{"type":"integer"}}}`))
	if err := ok(json.RawMessage(`{"a":1}`)); err != nil {
		t.Fatalf("valid arguments: %v", err)
	}
	if err := ok(json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), "missing property") {
		t.Fatalf("missing argument: %v", err)
	}
}

type keyedArgs struct {
	Path string `json:"path" jsonschema:"description=A path"`
}

// TestReflectedSchema: a tool built by New offers the schema reflected from its
// argument type (prebuilt or not) and names that type for schemas_gen.go.
func TestReflectedSchema(t *testing.T) {
	named := New("named", "d", func(context.Context, *RunContext, keyedArgs) (string, error) { return "", nil }).Spec()
	key, schema, ok, err := named.ReflectedSchema()
	if err != nil || !ok || key != "github.com/lovia-dev/lovia/internal/tool.keyedArgs" || string(schema) != string(named.Schema) {
		t.Fatalf("named: %q %s %v %v (offered %s)", key, schema, ok, err, named.Schema)
	}
	anon := New("anon", "d", func(context.Context, *RunContext, struct {
		N int `json:"n"`
	}) (string, error) {
		return "", nil
	}).Spec()
	key, schema, ok, err = anon.ReflectedSchema()
	if err != nil || !ok || key != "" || string(schema) != string(anon.Schema) {
		t.Fatalf("anonymous: %q %s %v %v (offered %s)", key, schema, ok, err, anon.Schema)
	}
	if _, _, ok, _ := (Spec{Name: "foreign"}).ReflectedSchema(); ok {
		t.Fatal("a Spec not made by New has no argument type")
	}
}
