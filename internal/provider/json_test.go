package provider

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

func TestWalkObject(t *testing.T) {
	data := []byte(` {"a":1, "b" : {"c":[1,2,{"d":null}]}, "e":"x\"y", "f":true,"g":-1.5e+3} `)
	var keys []string
	var vals []string
	ok := WalkObject(data, func(k, v []byte) bool {
		keys, vals = append(keys, string(k)), append(vals, string(v))
		return true
	})
	if !ok || !reflect.DeepEqual(keys, []string{"a", "b", "e", "f", "g"}) ||
		!reflect.DeepEqual(vals, []string{"1", `{"c":[1,2,{"d":null}]}`, `"x\"y"`, "true", "-1.5e+3"}) {
		t.Errorf("ok %v keys %q vals %q", ok, keys, vals)
	}
	for _, bad := range []string{``, `[]`, `{`, `{"a":}`, `{"a":1,}`, `{"a":1} x`, `{"a":01}`, `{"a":"` + "\x01" + `"}`,
		`{"a":"\q"}`, `{"a":tru}`, `{"a":[1,]}`, `{"a":1 "b":2}`, `{"a":"\u12"}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`} {
		if WalkObject([]byte(bad), nil) {
			t.Errorf("accepted %q", bad)
		}
	}
	var n int
	WalkArray([]byte(`[ {"x":1}, 2 ,"s"]`), func(e []byte) bool { n++; return true })
	if n != 3 {
		t.Errorf("array elems %d", n)
	}
	if s, ok := JSONText([]byte(`"a\u00e9\n"`)); !ok || s != "aé\n" {
		t.Errorf("JSONText %q %v", s, ok)
	}
	if s, ok := JSONText([]byte(`"plain"`)); !ok || s != "plain" {
		t.Errorf("JSONText %q %v", s, ok)
	}
	if _, ok := JSONText([]byte(`null`)); ok {
		t.Error("null is not text")
	}
}

// FuzzWalkObject checks the walker against encoding/json: same verdict on
// validity for objects, and the members it reports are the object's.
func FuzzWalkObject(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":[1,{"b":"\u00e9"}],"c":null}`, `{}`, `{"a":"x\"}`, ` {"k": -0.5E-2} `, `[1]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var members []string
		got := WalkObject(data, func(k, v []byte) bool {
			members = append(members, string(k))
			return true
		})
		var m map[string]json.RawMessage
		want := json.Valid(data) && json.Unmarshal(data, &m) == nil && m != nil
		if got != want {
			t.Fatalf("WalkObject=%v json=%v for %q", got, want, data)
		}
		if got {
			for _, k := range members {
				if bytes.IndexByte([]byte(k), '\\') >= 0 || !utf8.ValidString(k) {
					continue // keys are reported raw: escapes and bad UTF-8 kept
				}
				if _, ok := m[k]; !ok {
					t.Fatalf("member %q not in %q", k, data)
				}
			}
		}
	})
}

// Value reads members of a stream event as the decoders need them: paths of
// keys, a string's text, other values as sent, integers, array elements.
func TestValue(t *testing.T) {
	v := Value(`{"a":{"b":"x\u00e9","n":42,"f":1.5,"t":true,"o":{"k":[1]}},"z":null,"arr":[{"i":1},{"i":2}]}`)
	for _, c := range []struct {
		path []string
		str  string
		n    int64
	}{
		{[]string{"a", "b"}, "xé", 0}, {[]string{"a", "n"}, "42", 42}, {[]string{"a", "f"}, "1.5", 0},
		{[]string{"a", "t"}, "true", 0}, {[]string{"a", "o"}, `{"k":[1]}`, 0}, {[]string{"z"}, "", 0},
		{[]string{"missing"}, "", 0}, {[]string{"a", "b", "deeper"}, "", 0},
	} {
		got := v.Get(c.path...)
		if got.String() != c.str || got.Int() != c.n {
			t.Errorf("%v: %q %d, want %q %d", c.path, got.String(), got.Int(), c.str, c.n)
		}
	}
	if !v.Get("z").Exists() || !v.Get("z").IsNull() || v.Get("nope").Exists() || !v.Get("nope").IsNull() {
		t.Error("null and absent are told apart by Exists only")
	}
	if !v.Get("a").IsObject() || !v.Get("a", "b").IsString() || v.Get("a", "n").IsString() {
		t.Error("kinds")
	}
	var is []int64
	v.Get("arr").Each(func(e Value) bool { is = append(is, e.Get("i").Int()); return true })
	v.Get("a").Each(func(Value) bool { t.Error("an object has no elements"); return true })
	if !reflect.DeepEqual(is, []int64{1, 2}) {
		t.Errorf("elements %v", is)
	}
}
