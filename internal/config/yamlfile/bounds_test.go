package yamlfile

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/errs"
)

// bomb is the "billion laughs" shape: levels anchors, each a list of fan aliases of
// the one before.
func bomb(levels, fan int) string {
	var b strings.Builder
	b.WriteString(`a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	for i := 1; i <= levels; i++ {
		refs := make([]string, fan)
		for j := range refs {
			refs[j] = fmt.Sprintf("*a%d", i-1)
		}
		fmt.Fprintf(&b, "a%d: &a%d [%s]\n", i, i, strings.Join(refs, ","))
	}
	return b.String()
}

func TestCheckRefusesAliasBomb(t *testing.T) {
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var m map[string]any
	err := Decode(".lovia/presets/x.yaml", []byte(bomb(9, 9)), &m)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if err == nil || errs.KindOf(err) != errs.KindConfig {
		t.Fatalf("alias bomb: err %v", err)
	}
	for _, want := range []string{".lovia/presets/x.yaml:", "aliases expand to more than 100000 nodes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if h := errs.HintOf(err); !strings.Contains(h, "write the values out") {
		t.Errorf("hint %q", h)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 50<<20 {
		t.Errorf("checking the bomb allocated %d MiB", grew>>20)
	}
}

func TestCheckRefusesDeepNesting(t *testing.T) {
	tests := map[string]string{
		"flow sequences": "a: " + strings.Repeat("[", 200_000) + strings.Repeat("]", 200_000),
		"flow mappings":  "a: " + strings.Repeat("{a: ", 5000) + strings.Repeat("}", 5000),
		"block entries":  strings.Repeat("- ", 100_000) + "x\n",
		"block mappings": func() string {
			var b strings.Builder
			for i := range 150 {
				b.WriteString(strings.Repeat(" ", i) + "k:\n")
			}
			return b.String()
		}(),
		"through aliases": func() string {
			s := "a0: &a0 " + strings.Repeat("[", 60) + strings.Repeat("]", 60) + "\n"
			s += "a1: &a1 " + strings.Repeat("[", 30) + "*a0" + strings.Repeat("]", 30) + "\n"
			return s + "a2: " + strings.Repeat("[", 30) + "*a1" + strings.Repeat("]", 30) + "\n"
		}(),
	}
	for name, src := range tests {
		var v any
		err := Decode("deep.yaml", []byte(src), &v)
		if err == nil || !strings.Contains(err.Error(), "nested deeper than 100 levels") || !strings.Contains(errs.HintOf(err), "flatten deep.yaml") {
			t.Errorf("%s: err %v (hint %q)", name, err, errs.HintOf(err))
		}
	}
}

func TestCheckAcceptsOrdinaryAliases(t *testing.T) {
	src := `
defaults: &d {model: "openai:gpt-5", max_turns: 10}
cases:
  - {<<: *d, name: one}
  - {<<: *d, name: two}
list: &l [1, 2, 3]
again: [*l, *l, *l]
nested: ` + strings.Repeat("[", 90) + strings.Repeat("]", 90) + "\n"
	var v map[string]any
	if err := Decode("ok.yaml", []byte(src), &v); err != nil {
		t.Fatal(err)
	}
	if err := Check("small-bomb.yaml", []byte(bomb(4, 9))); err != nil {
		t.Errorf("9^4 expansion is within the limit: %v", err)
	}
}

func FuzzCheck(f *testing.F) {
	f.Add([]byte(bomb(9, 9)))
	f.Add([]byte(bomb(3, 3)))
	f.Add([]byte("a: &a [1]\nb: *a\nc: {<<: *a}\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte(strings.Repeat("[", 300) + strings.Repeat("]", 300)))
	f.Add([]byte(strings.Repeat("- ", 300) + "x"))
	f.Add([]byte("--- &a [1]\n--- *a\n"))
	f.Add([]byte("? - - a\n: b\n"))
	f.Add([]byte("a: !!seq [1, 2]\nb: !tag &x {c: *x}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			return
		}
		err := Check("f.yaml", data)
		if err != nil && errs.KindOf(err) != errs.KindConfig {
			t.Fatalf("kind %s: %v", errs.KindOf(err), err)
		}
		if err == nil {
			// What Check lets through decodes without blowing up.
			var v any
			_ = Decode("f.yaml", data, &v)
		}
	})
}
