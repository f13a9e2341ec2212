package elicit

import (
	"encoding/json"
	"strings"
	"testing"
)

const schema = `{
  "type": "object",
  "properties": {
    "nick": {"type": "string", "title": "Nickname", "minLength": 2, "maxLength": 10},
    "name": {"type": "string", "title": "Name"},
    "mail": {"type": "string", "format": "email"},
    "age": {"type": "integer", "minimum": 1, "maximum": 120, "default": 30},
    "ratio": {"type": "number"},
    "ok": {"type": "boolean", "default": false},
    "color": {"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"]},
    "hero": {"type": "string", "oneOf": [{"const": "h1", "title": "Superman"}, {"const": "h2", "title": "Batman"}]},
    "tools": {"type": "array", "items": {"type": "string", "enum": ["saw", "drill"]}, "minItems": 1}
  },
  "required": ["name", "color"]
}`

func TestParseMapsEveryFieldType(t *testing.T) {
	f, err := Parse(json.RawMessage(schema))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, fd := range f.Fields {
		s := fd.Name + ":" + fd.Type
		if fd.Required {
			s += "*"
		}
		got = append(got, s)
	}
	// Required first, then the schema's order.
	want := "name:string* color:enum* nick:string mail:string age:integer ratio:number ok:boolean hero:enum tools:multi"
	if strings.Join(got, " ") != want {
		t.Fatalf("fields = %s\nwant     %s", strings.Join(got, " "), want)
	}
	color := f.Fields[1]
	if len(color.Options) != 2 || color.Options[0] != (Option{Value: "r", Label: "Red"}) {
		t.Fatalf("enumNames not used: %+v", color.Options)
	}
	hero := f.Fields[7]
	if len(hero.Options) != 2 || hero.Options[1] != (Option{Value: "h2", Label: "Batman"}) {
		t.Fatalf("oneOf titles not used: %+v", hero.Options)
	}
	if d := f.Defaults(); d["age"] != float64(30) || d["ok"] != false || len(d) != 2 {
		t.Fatalf("defaults = %v", d)
	}
	if miss := f.MissingRequired(f.Defaults()); strings.Join(miss, ",") != "Name,color" {
		t.Fatalf("missing = %v", miss)
	}
}

func TestParseRefusesNestedAndUnknownTypes(t *testing.T) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"type":"object"}}}`,
		`{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"}}}}`,
		`{"type":"array"}`,
		`not json`,
	} {
		if _, err := Parse(json.RawMessage(s)); err == nil {
			t.Errorf("Parse(%s) accepted", s)
		}
	}
	if f, err := Parse(nil); err != nil || len(f.Fields) != 0 {
		t.Fatalf("empty schema: %v %v", f, err)
	}
}

func TestInputParsesWhatAPersonTypes(t *testing.T) {
	f, _ := Parse(json.RawMessage(schema))
	field := map[string]Field{}
	for _, fd := range f.Fields {
		field[fd.Name] = fd
	}
	cases := []struct {
		name, in string
		want     any
		bad      bool
	}{
		{"age", "42", int64(42), false},
		{"age", "4.5", nil, true},
		{"age", "x", nil, true},
		{"ratio", "0.25", 0.25, false},
		{"ok", "yes", true, false},
		{"ok", "N", false, false},
		{"ok", "maybe", nil, true},
		{"color", "Green", "g", false},
		{"color", "r", "r", false},
		{"color", "2", "g", false},
		{"color", "blue", nil, true},
		{"name", "  Ada ", "Ada", false},
		{"name", "", nil, false},
	}
	for _, c := range cases {
		got, err := field[c.name].Input(c.in)
		if (err != nil) != c.bad || (!c.bad && got != c.want) {
			t.Errorf("%s.Input(%q) = %v, %v; want %v (error %v)", c.name, c.in, got, err, c.want, c.bad)
		}
	}
	got, err := field["tools"].Input("saw, 2")
	if err != nil || len(got.([]any)) != 2 || got.([]any)[1] != "drill" {
		t.Fatalf("multi = %v, %v", got, err)
	}
	if s := field["tools"].Show([]any{"saw"}); s != "saw" {
		t.Fatalf("show = %q", s)
	}
	if s := field["color"].Show("g"); s != "Green" {
		t.Fatalf("show enum = %q", s)
	}
}

func TestValidateChecksAnswersAgainstTheSchema(t *testing.T) {
	f, _ := Parse(json.RawMessage(schema))
	ok := map[string]any{"name": "Ada", "color": "r", "age": 40, "mail": "ada@example.com", "tools": []any{"saw"}}
	if err := f.Validate(ok); err != nil {
		t.Fatalf("valid answer refused: %v", err)
	}
	bad := []struct {
		content map[string]any
		want    string
	}{
		{map[string]any{"color": "r"}, "required: Name"},
		{map[string]any{"name": "Ada", "color": "blue"}, "color"},
		{map[string]any{"name": "Ada", "color": "r", "age": 500}, "age"},
		{map[string]any{"name": "Ada", "color": "r", "mail": "not-an-email"}, "mail"},
		{map[string]any{"name": "Ada", "color": "r", "nick": "x"}, "nick"},
		{map[string]any{"name": "Ada", "color": "r", "tools": []any{}}, "tools"},
		{map[string]any{"name": "Ada", "color": "r", "extra": 1}, "not fields of the form: extra"},
		{map[string]any{"name": 5, "color": "r"}, "name"},
	}
	for _, b := range bad {
		err := f.Validate(b.content)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("Validate(%v) = %v; want an error naming %q", b.content, err, b.want)
		}
	}
}

func TestAnswerDecodesDecisions(t *testing.T) {
	if c, cancel, err := Answer(true, `{"a":1}`); err != nil || cancel || c["a"] != float64(1) {
		t.Fatalf("accept = %v %v %v", c, cancel, err)
	}
	if _, cancel, _ := Answer(false, CancelMessage); !cancel {
		t.Fatal("cancel not recognised")
	}
	if c, cancel, _ := Answer(false, ""); c != nil || cancel {
		t.Fatal("decline misread")
	}
	if _, _, err := Answer(true, `[1]`); err == nil {
		t.Fatal("a non-object answer accepted")
	}
}
