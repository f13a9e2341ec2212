// Package elicit turns the flat JSON Schema of an MCP elicitation (elicitation/create,
// form mode) into form fields every front end renders the same way, parses what a
// person types into a field, and validates a whole answer against the requested
// schema before it is sent back to the server.
//
// An elicitation reaches a front end as an approval of Kind "form" whose Form holds
// the requested schema. The answer travels as a tool.Decision: Allow with Message the
// JSON object of the values (accept); not Allow (decline); not Allow with Message
// CancelMessage (cancel: dismissed without a choice).
package elicit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	jsv "github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Kind is the approval kind of an elicitation form.
const Kind = "form"

// URLKind is the approval kind of a URL elicitation: the URL is shown, never opened
// by lovia; allowing means the person says they completed it.
const URLKind = "url"

// AcceptMessage is the message of an allowed URL elicitation: the person says they
// opened the URL (an allow without it, as --approve all gives, declines).
const AcceptMessage = "elicitation:accept"

// CancelMessage marks a refused form as cancelled (dismissed) rather than declined.
const CancelMessage = "elicitation:cancel"

// Field types.
const (
	TypeString  = "string"
	TypeNumber  = "number"
	TypeInteger = "integer"
	TypeBoolean = "boolean"
	TypeEnum    = "enum"  // one of Options
	TypeMulti   = "multi" // a list of Options
)

// Option is one choice of an enum field: the value sent and the label shown.
type Option struct {
	Value string `json:"value"`
	Label string `json:"label"`
}

// Field is one property of the requested schema.
type Field struct {
	Name        string   `json:"name"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Type        string   `json:"type"`
	Format      string   `json:"format,omitempty"`
	Required    bool     `json:"required,omitempty"`
	Default     any      `json:"default,omitempty"`
	Options     []Option `json:"options,omitempty"`
	Min         *float64 `json:"min,omitempty"`
	Max         *float64 `json:"max,omitempty"`
}

// Label is the field's title, else its name.
func (f Field) Label() string {
	if f.Title != "" {
		return f.Title
	}
	return f.Name
}

// Form is the requested schema as fields, in the schema's property order.
type Form struct {
	Fields []Field
	schema *jsv.Schema
}

// maxFields bounds a form: a server is untrusted and a person reads every field.
const maxFields = 50

// Parse maps a requested schema (a flat object of primitive properties, as MCP
// allows) to a form. An empty schema is a form without fields.
func Parse(schema json.RawMessage) (*Form, error) {
	if len(bytes.TrimSpace(schema)) == 0 || string(bytes.TrimSpace(schema)) == "null" {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	var top struct {
		Type       string          `json:"type"`
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(schema, &top); err != nil {
		return nil, fmt.Errorf("the requested schema is not a JSON object: %w", err)
	}
	if top.Type != "" && top.Type != "object" {
		return nil, fmt.Errorf("the requested schema must describe an object, not %q", top.Type)
	}
	names, err := orderedKeys(top.Properties)
	if err != nil {
		return nil, fmt.Errorf("properties: %w", err)
	}
	if len(names) > maxFields {
		return nil, fmt.Errorf("the form has %d fields; at most %d are shown", len(names), maxFields)
	}
	props := map[string]json.RawMessage{}
	if len(top.Properties) > 0 {
		if err := json.Unmarshal(top.Properties, &props); err != nil {
			return nil, fmt.Errorf("properties: %w", err)
		}
	}
	required := map[string]bool{}
	for _, r := range top.Required {
		required[r] = true
	}
	// Required fields first (the SDK hands the schema over as a map, so the server's
	// own order is lost; what stays is stable).
	sort.SliceStable(names, func(i, j int) bool { return required[names[i]] && !required[names[j]] })
	f := &Form{}
	for _, name := range names {
		fd, err := parseField(name, props[name])
		if err != nil {
			return nil, err
		}
		fd.Required = required[name]
		f.Fields = append(f.Fields, fd)
	}
	c := jsv.NewCompiler()
	c.AssertFormat()
	doc, err := jsv.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	if err := c.AddResource("mem://elicitation.json", doc); err != nil {
		return nil, err
	}
	if f.schema, err = c.Compile("mem://elicitation.json"); err != nil {
		return nil, fmt.Errorf("the requested schema does not compile: %w", err)
	}
	return f, nil
}

type propSchema struct {
	Type        string        `json:"type"`
	Title       string        `json:"title"`
	Description string        `json:"description"`
	Format      string        `json:"format"`
	Default     any           `json:"default"`
	Enum        []any         `json:"enum"`
	EnumNames   []string      `json:"enumNames"`
	OneOf       []constOption `json:"oneOf"`
	AnyOf       []constOption `json:"anyOf"`
	Items       *propSchema   `json:"items"`
	Minimum     *float64      `json:"minimum"`
	Maximum     *float64      `json:"maximum"`
	MinLength   *float64      `json:"minLength"`
	MaxLength   *float64      `json:"maxLength"`
	MinItems    *float64      `json:"minItems"`
	MaxItems    *float64      `json:"maxItems"`
}

type constOption struct {
	Const any    `json:"const"`
	Title string `json:"title"`
}

func options(p *propSchema) []Option {
	var out []Option
	for i, v := range p.Enum {
		o := Option{Value: fmt.Sprint(v), Label: fmt.Sprint(v)}
		if i < len(p.EnumNames) && p.EnumNames[i] != "" {
			o.Label = p.EnumNames[i]
		}
		out = append(out, o)
	}
	for _, c := range append(append([]constOption(nil), p.OneOf...), p.AnyOf...) {
		if c.Const == nil {
			continue
		}
		o := Option{Value: fmt.Sprint(c.Const), Label: c.Title}
		if o.Label == "" {
			o.Label = o.Value
		}
		out = append(out, o)
	}
	return out
}

func parseField(name string, raw json.RawMessage) (Field, error) {
	var p propSchema
	if err := json.Unmarshal(raw, &p); err != nil {
		return Field{}, fmt.Errorf("property %q: %w", name, err)
	}
	f := Field{Name: name, Title: p.Title, Description: p.Description, Format: p.Format, Default: p.Default, Min: p.Minimum, Max: p.Maximum}
	switch p.Type {
	case TypeString:
		f.Type = TypeString
		if f.Options = options(&p); len(f.Options) > 0 {
			f.Type = TypeEnum
		}
		if f.Type == TypeString {
			f.Min, f.Max = p.MinLength, p.MaxLength
		}
	case TypeNumber, TypeInteger, TypeBoolean:
		f.Type = p.Type
	case "array":
		if p.Items != nil {
			f.Options = options(p.Items)
		}
		if len(f.Options) == 0 {
			return Field{}, fmt.Errorf("property %q: a list must offer its choices (items.enum or items.anyOf)", name)
		}
		f.Type, f.Min, f.Max = TypeMulti, p.MinItems, p.MaxItems
	default:
		if opts := options(&p); len(opts) > 0 {
			f.Type, f.Options = TypeEnum, opts
			break
		}
		return Field{}, fmt.Errorf("property %q: type %q is not a form field (string, number, integer, boolean, enum)", name, p.Type)
	}
	return f, nil
}

// orderedKeys returns the keys of a JSON object in document order.
func orderedKeys(raw json.RawMessage) ([]string, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not an object")
	}
	var keys []string
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	return keys, nil
}

// Defaults returns the values the schema gives defaults for.
func (f *Form) Defaults() map[string]any {
	out := map[string]any{}
	for _, fd := range f.Fields {
		if fd.Default != nil {
			out[fd.Name] = fd.Default
		}
	}
	return out
}

// MissingRequired lists the required fields without a value in content.
func (f *Form) MissingRequired(content map[string]any) []string {
	var out []string
	for _, fd := range f.Fields {
		if fd.Required {
			if _, ok := content[fd.Name]; !ok {
				out = append(out, fd.Label())
			}
		}
	}
	return out
}

// Complete returns content with the defaults of the fields it leaves out.
func (f *Form) Complete(content map[string]any) map[string]any {
	out := f.Defaults()
	for k, v := range content {
		out[k] = v
	}
	return out
}

// Validate checks content against the requested schema: only the form's fields,
// each of its type, every required one present. The error is for a person.
func (f *Form) Validate(content map[string]any) error {
	known := map[string]bool{}
	for _, fd := range f.Fields {
		known[fd.Name] = true
	}
	var extra []string
	for k := range content {
		if !known[k] {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return fmt.Errorf("not fields of the form: %s", strings.Join(extra, ", "))
	}
	if miss := f.MissingRequired(content); len(miss) > 0 {
		return fmt.Errorf("required: %s", strings.Join(miss, ", "))
	}
	// Round-trip through JSON so numbers are json.Number-like for the validator.
	b, err := json.Marshal(content)
	if err != nil {
		return err
	}
	inst, err := jsv.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	if err := f.schema.Validate(inst); err != nil {
		var ve *jsv.ValidationError
		if errors.As(err, &ve) {
			return errors.New(describe(ve))
		}
		return err
	}
	return nil
}

// describe flattens a validation error to its leaf causes, each with its field.
func describe(ve *jsv.ValidationError) string {
	printer := message.NewPrinter(language.English)
	var msgs []string
	var walk func(e *jsv.ValidationError)
	walk = func(e *jsv.ValidationError) {
		if len(e.Causes) == 0 {
			loc := strings.Join(e.InstanceLocation, "/")
			msg := strings.TrimSpace(e.ErrorKind.LocalizedString(printer))
			if loc != "" {
				msg = loc + ": " + msg
			}
			msgs = append(msgs, msg)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return strings.Join(msgs, "; ")
}

// Input parses what a person typed into a field: numbers and integers as numbers;
// booleans as yes/no/true/false/y/n/1/0; an enum as its value, its label or its
// 1-based number; a list as such choices separated by commas. Empty means "no value"
// (nil, nil).
func (fd Field) Input(text string) (any, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, nil
	}
	switch fd.Type {
	case TypeString:
		return text, nil
	case TypeNumber, TypeInteger:
		n, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return nil, fmt.Errorf("%s: %q is not a number", fd.Label(), text)
		}
		if fd.Type == TypeInteger {
			if n != math.Trunc(n) {
				return nil, fmt.Errorf("%s: %q is not a whole number", fd.Label(), text)
			}
			return int64(n), nil
		}
		return n, nil
	case TypeBoolean:
		switch strings.ToLower(text) {
		case "y", "yes", "true", "1", "on":
			return true, nil
		case "n", "no", "false", "0", "off":
			return false, nil
		}
		return nil, fmt.Errorf("%s: answer yes or no", fd.Label())
	case TypeEnum:
		return fd.option(text)
	case TypeMulti:
		var out []any
		for _, part := range strings.Split(text, ",") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			v, err := fd.option(part)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: unknown field type %q", fd.Label(), fd.Type)
}

func (fd Field) option(text string) (any, error) {
	text = strings.TrimSpace(text)
	for _, o := range fd.Options {
		if o.Value == text {
			return o.Value, nil
		}
	}
	for _, o := range fd.Options {
		if strings.EqualFold(o.Label, text) {
			return o.Value, nil
		}
	}
	if n, err := strconv.Atoi(text); err == nil && n >= 1 && n <= len(fd.Options) {
		return fd.Options[n-1].Value, nil
	}
	labels := make([]string, len(fd.Options))
	for i, o := range fd.Options {
		labels[i] = fmt.Sprintf("%d. %s", i+1, o.Label)
	}
	return nil, fmt.Errorf("%s: choose one of %s", fd.Label(), strings.Join(labels, ", "))
}

// Show renders a value for display (and as the text to edit).
func (fd Field) Show(v any) string {
	if v == nil {
		return ""
	}
	label := func(s string) string {
		for _, o := range fd.Options {
			if o.Value == s {
				return o.Label
			}
		}
		return s
	}
	switch x := v.(type) {
	case string:
		if fd.Type == TypeEnum {
			return label(x)
		}
		return x
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = label(fmt.Sprint(e))
		}
		return strings.Join(parts, ", ")
	case []string:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = label(e)
		}
		return strings.Join(parts, ", ")
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// Answer decodes a decision's message into the accepted values (accept), reporting
// whether it is a cancel rather than a decline when not allowed.
func Answer(allow bool, message string) (content map[string]any, cancel bool, err error) {
	if !allow {
		return nil, message == CancelMessage, nil
	}
	message = strings.TrimSpace(message)
	if message == "" {
		return map[string]any{}, false, nil
	}
	dec := json.NewDecoder(strings.NewReader(message))
	if err := dec.Decode(&content); err != nil {
		return nil, false, fmt.Errorf("the form's answer is not a JSON object: %w", err)
	}
	if content == nil {
		content = map[string]any{}
	}
	return content, false, nil
}
