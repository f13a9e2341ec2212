package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/invopop/jsonschema"
	jsv "github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// New builds a Tool from a typed function. A's exported fields (json tags for names,
// `jsonschema:"description=..."` tags for descriptions, omitempty for optional) give the
// JSON Schema; arguments are validated against it, then decoded into A. A built-in
// tool's schema is prebuilt (schemas_gen.go, kept current by a test in internal/app):
// reflecting every tool's type cost each run about a millisecond.
func New[A any](name, desc string, fn func(ctx context.Context, rc *RunContext, args A) (string, error), opts ...Option) Tool {
	return NewResult(name, desc, func(ctx context.Context, rc *RunContext, args A) (Result, error) {
		s, err := fn(ctx, rc, args)
		return Result{Text: s}, err
	}, opts...)
}

// NewResult is New for functions that return a full Result.
func NewResult[A any](name, desc string, fn func(ctx context.Context, rc *RunContext, args A) (Result, error), opts ...Option) Tool {
	args := &argsType{key: typeKey(reflect.TypeFor[A]()), reflect: SchemaFor[A]}
	var schema json.RawMessage
	if pre := prebuiltSchema(args.key); pre != "" {
		schema = json.RawMessage(pre)
	} else {
		var err error
		if schema, err = SchemaFor[A](); err != nil {
			panic(fmt.Sprintf("tool %s: %v", name, err)) // a programming error in a tool declaration
		}
	}
	s := Spec{Name: name, Description: desc, Schema: schema, Parallel: true, Validate: lazyValidator(name, schema), args: args}
	for _, o := range opts {
		o(&s)
	}
	return &FuncTool{S: s, Fn: func(ctx context.Context, rc *RunContext, raw json.RawMessage) (Result, error) {
		var a A
		if len(bytes.TrimSpace(raw)) > 0 {
			if err := json.Unmarshal(raw, &a); err != nil {
				return Result{Text: "invalid arguments: " + err.Error(), IsError: true}, nil
			}
		}
		return fn(ctx, rc, a)
	}}
}

// argsType is the Go type a tool built by New decodes its arguments into.
type argsType struct {
	key     string // typeKey
	reflect func() (json.RawMessage, error)
}

// typeKey names a named type (or a pointer to one) by package path and name; it is
// "" for unnamed types, which have no prebuilt schema.
func typeKey(t reflect.Type) string {
	star := ""
	if t != nil && t.Kind() == reflect.Pointer {
		star, t = "*", t.Elem()
	}
	if t == nil || t.Name() == "" || t.PkgPath() == "" {
		return ""
	}
	return star + t.PkgPath() + "." + t.Name()
}

// ReflectedSchema returns, for a Spec made by New or NewResult (and copies of it),
// the key of its argument type in the prebuilt schemas (schemas_gen.go; "" when the
// type cannot have one) and the schema SchemaFor reflects from that type; ok is false
// for other Specs. It is for the test that keeps schemas_gen.go current.
func (s Spec) ReflectedSchema() (key string, schema json.RawMessage, ok bool, err error) {
	if s.args == nil {
		return "", nil, false, nil
	}
	schema, err = s.args.reflect()
	return s.args.key, schema, true, err
}

// PrebuiltSchemas returns a copy of the prebuilt schemas by type key.
func PrebuiltSchemas() map[string]string {
	keys := prebuiltKeys()
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		out[k] = prebuiltSchema(k)
	}
	return out
}

// SchemaFor returns the JSON Schema of A's arguments object, inlined (no $ref, no
// $schema/$id) so every provider accepts it.
func SchemaFor[A any]() (json.RawMessage, error) {
	var zero A
	t := reflect.TypeOf(zero)
	if t == nil || (t.Kind() != reflect.Struct && !(t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct)) {
		return nil, fmt.Errorf("argument type must be a struct, got %v", t)
	}
	r := jsonschema.Reflector{DoNotReference: true, Anonymous: true, ExpandedStruct: true}
	s := r.Reflect(zero)
	s.Version = ""
	s.ID = ""
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	// An empty struct reflects without "properties"; providers want an object schema.
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if _, ok := m["properties"]; !ok {
		m["properties"] = map[string]any{}
	}
	m["type"] = "object"
	return json.Marshal(m)
}

// lazyValidator compiles a built-in tool's schema on its first call, once: a run
// builds every tool at start but calls few, and compiling costs start-up time. The
// schema was reflected from a Go type, so failing to compile is a programming error
// (workspace.TestToolSchemasCompile), reported to the caller rather than panicking mid-run.
func lazyValidator(name string, schema json.RawMessage) func(json.RawMessage) error {
	compile := sync.OnceValues(func() (func(json.RawMessage) error, error) { return CompileSchema(schema) })
	return func(args json.RawMessage) error {
		v, err := compile()
		if err != nil {
			return fmt.Errorf("tool %s: schema: %w", name, err)
		}
		return v(args)
	}
}

// CompileSchema compiles a JSON Schema into a validator whose errors read well to a
// model ("missing property 'path'", "at /limit: expected integer").
func CompileSchema(schema json.RawMessage) (func(json.RawMessage) error, error) {
	doc, err := jsv.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	c := jsv.NewCompiler()
	if err := c.AddResource("mem://schema.json", doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile("mem://schema.json")
	if err != nil {
		return nil, err
	}
	return func(args json.RawMessage) error {
		if len(bytes.TrimSpace(args)) == 0 {
			args = json.RawMessage(`{}`)
		}
		inst, err := jsv.UnmarshalJSON(bytes.NewReader(args))
		if err != nil {
			return fmt.Errorf("arguments are not valid JSON: %v", err)
		}
		if err := sch.Validate(inst); err != nil {
			var ve *jsv.ValidationError
			if ok := asValidation(err, &ve); ok {
				return fmt.Errorf("arguments do not match the schema: %s", flatten(ve))
			}
			return fmt.Errorf("arguments do not match the schema: %v", err)
		}
		return nil
	}, nil
}

func asValidation(err error, out **jsv.ValidationError) bool {
	ve, ok := err.(*jsv.ValidationError)
	if ok {
		*out = ve
	}
	return ok
}

// flatten lists the leaf causes of a validation error on one line.
func flatten(ve *jsv.ValidationError) string {
	printer := message.NewPrinter(language.English)
	var parts []string
	var walk func(e *jsv.ValidationError)
	walk = func(e *jsv.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "/" + strings.Join(e.InstanceLocation, "/")
			parts = append(parts, fmt.Sprintf("at %s: %s", loc, e.ErrorKind.LocalizedString(printer)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return strings.Join(parts, "; ")
}

// Truncate caps s at max characters (runes), keeping the head and the tail and
// announcing what was cut. It reports whether s was cut. max <= 0 disables the cap.
func Truncate(s string, max int) (string, bool) {
	if max <= 0 || len(s) <= max {
		return s, false
	}
	r := []rune(s)
	if len(r) <= max {
		return s, false
	}
	head := max * 2 / 3
	tail := max - head
	cut := len(r) - head - tail
	return string(r[:head]) + fmt.Sprintf("\n\n[... %d characters truncated; showing the first %d and the last %d ...]\n\n", cut, head, tail) + string(r[len(r)-tail:]), true
}
