// Package yamlfile decodes lovia's YAML files (config, presets, scripts, eval cases,
// skills' front matter) strictly, refuses documents too deep or whose aliases expand
// too far (Check), and turns decoder failures into errors that name the file, the
// line and the fix.
package yamlfile

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/token"

	"github.com/lovia-dev/lovia/internal/errs"
)

// Decode unmarshals data (read from path) into v, rejecting unknown keys and
// documents beyond the limits of Check. Errors are *errs.Error of kind KindConfig
// with a message "PATH:LINE:COL: what" and a hint; an unknown key's hint suggests the
// closest known key of v's type.
func Decode(path string, data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := Check(path, data); err != nil {
		return err
	}
	err := yaml.UnmarshalWithOptions(data, v, yaml.DisallowUnknownField())
	if err == nil {
		return nil
	}
	var ye yaml.Error
	if !errors.As(err, &ye) {
		// Some conversion errors (durations) carry no position: find the value.
		if line := lineOfQuoted(data, err.Error()); line > 0 {
			hint := "fix the value"
			if strings.Contains(err.Error(), "duration") {
				hint = "use a duration like 500ms, 30s or 2m"
			}
			return &errs.Error{Kind: errs.KindConfig, Msg: fmt.Sprintf("%s:%d: %v", path, line, err), Hint: hint}
		}
	}
	return Wrap(path, err, KnownKeys(reflect.TypeOf(v)))
}

// lineOfQuoted returns the 1-based line of data holding the first "quoted" value of msg.
func lineOfQuoted(data []byte, msg string) int {
	i := strings.IndexByte(msg, '"')
	if i < 0 {
		return 0
	}
	j := strings.IndexByte(msg[i+1:], '"')
	if j <= 0 {
		return 0
	}
	val := msg[i+1 : i+1+j]
	for n, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, val) {
			return n + 1
		}
	}
	return 0
}

// Wrap classifies a goccy/go-yaml error for path; known lists the keys accepted
// anywhere in the document (for "did you mean").
func Wrap(path string, err error, known []string) error {
	var ye yaml.Error
	if !errors.As(err, &ye) {
		return errs.Wrap(errs.KindConfig, err, path, "fix the YAML syntax of "+path)
	}
	loc := path
	if tk := ye.GetToken(); tk != nil && tk.Position != nil {
		loc = fmt.Sprintf("%s:%d:%d", path, tk.Position.Line, tk.Position.Column)
	}
	msg := ye.GetMessage()
	hint := "fix the YAML syntax at " + loc
	var uf *yaml.UnknownFieldError
	var te *yaml.TypeError
	switch {
	case errors.As(err, &uf):
		key := strings.Trim(strings.TrimPrefix(msg, "unknown field "), `"`)
		msg = fmt.Sprintf("unknown key %q", key)
		list := ""
		if len(known) > 0 && len(known) <= 20 {
			list = " (known keys: " + strings.Join(known, ", ") + ")"
		}
		if s := Closest(key, known); s != "" {
			hint = fmt.Sprintf("did you mean %q?%s", s, list)
		} else {
			hint = "remove it or fix its spelling" + list
		}
	case errors.As(err, &te):
		msg = typeMessage(te, ye.GetToken())
		hint = "give it a value of the expected type (" + typeName(te.DstType) + ")"
	}
	return &errs.Error{Kind: errs.KindConfig, Msg: loc + ": " + msg, Hint: hint}
}

// typeMessage names the key whose value has the wrong type, as the file spells it
// (the decoder's StructFieldName is the Go path of the enclosing struct, such as
// "File.Workspace").
func typeMessage(te *yaml.TypeError, tk *token.Token) string {
	field := ""
	if tk != nil && tk.Prev != nil && tk.Prev.Type == token.MappingValueType && tk.Prev.Prev != nil {
		field = " for " + tk.Prev.Prev.Value
	} else if te.StructFieldName != nil {
		field = " for " + *te.StructFieldName
	}
	return fmt.Sprintf("wrong type%s: got %s, want %s", field, typeName(te.SrcType), typeName(te.DstType))
}

// typeName says a Go type in YAML words.
func typeName(t reflect.Type) string {
	if t == nil {
		return "nothing"
	}
	if t.String() == "time.Duration" {
		return "a duration like 30s"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	case reflect.Pointer:
		return typeName(t.Elem())
	}
	return t.String()
}

// KnownKeys lists the yaml keys of t's struct fields, recursively, sorted and unique.
func KnownKeys(t reflect.Type) []string {
	seen := map[string]bool{}
	visited := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map || t.Kind() == reflect.Array) {
			t = t.Elem()
		}
		if t == nil || t.Kind() != reflect.Struct || visited[t] {
			return
		}
		visited[t] = true
		for f := range t.Fields() {
			if !f.IsExported() {
				continue
			}
			tag := f.Tag.Get("yaml")
			name, opts, _ := strings.Cut(tag, ",")
			if name == "-" {
				continue
			}
			if f.Anonymous && (name == "" || strings.Contains(opts, "inline")) {
				walk(f.Type)
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			seen[name] = true
			walk(f.Type)
		}
	}
	walk(t)
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Closest returns the candidate nearest to s by edit distance, or "" if none is close.
func Closest(s string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if d := distance(strings.ToLower(s), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if bestD > max(2, len(s)/3) {
		return ""
	}
	return best
}

func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// JSONable converts YAML-decoded values (maps with non-string keys) to values
// encoding/json accepts, so YAML-written JSON (schemas, tool arguments) can be sent on.
func JSONable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, v := range x {
			m[k] = JSONable(v)
		}
		return m
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, v := range x {
			m[fmt.Sprint(k)] = JSONable(v)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, v := range x {
			out[i] = JSONable(v)
		}
		return out
	}
	return v
}
