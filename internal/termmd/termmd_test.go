package termmd

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"charm.land/glamour/v2"
	"charm.land/glamour/v2/ansi"
	"charm.land/glamour/v2/styles"
)

// corpus exercises every element the renderer knows.
var corpus = []string{
	"# Title\n\nSome *emphasis*, **strong**, ~~struck~~ and `code`.\n",
	"## Second\n### Third\n#### Fourth\n##### Fifth\n###### Sixth\n\nText under.",
	"- one\n- two\n  - nested\n    - deeper\n- three\n\n1. first\n2. second\n   1. inner\n",
	"- [ ] todo\n- [x] done\n",
	"> quoted\n> more\n>\n> > nested quote\n",
	"A [link](https://example.com/a) and <https://example.com/auto> and https://github.com/owner/repo/issues/12 and https://github.com/o/r/pull/3#discussion_r55.\n",
	"![alt text](https://example.com/img.png \"title\")\n",
	"---\n\nafter the rule\n\n***\n",
	"```go\npackage main\n\nfunc main() {\n\tprintln(\"hi\") // comment\n}\n```\n",
	"```python\ndef f(x):\n    return x + 1  # add\n```\n\n```\nno language\n```\n\n```nosuchlang\nplain?\n```\n",
	"    indented code\n    block\n",
	"| a | b |\n|---|:-:|\n| 1 | two words |\n| [l](https://x.y) | `c` |\n",
	"Term\n: Definition one\n: Definition two\n",
	"<div>html block</div>\n\ninline <b>html</b> here\n",
	"A paragraph that is long enough to be wrapped at the word wrap width, with several words in it so that it wraps more than once when the width is small.\n",
	"Line one  \nhard break\\\nand another\n",
	"Escapes: \\* \\_ \\` \\# \\[ \\] and entities &amp; &lt; &copy;\n",
	"1. item with\n\n   two paragraphs\n\n2. second\n",
	"",
	"plain text only",
}

// The comparisons highlight code in true colour: chroma's 256-colour formatter
// breaks ties between equally near palette entries in map order, so two renderings
// of the same code block by the same renderer can differ.
const formatter = "terminal16m"

func glamourRender(t testing.TB, style ansi.StyleConfig, width int, src string) (string, error) {
	t.Helper()
	r, err := glamour.NewTermRenderer(glamour.WithStyles(style), glamour.WithWordWrap(width), glamour.WithChromaFormatter(formatter))
	if err != nil {
		t.Fatal(err)
	}
	return r.Render(src)
}

func render(style StyleConfig, width int, src string) (string, error) {
	return New(Options{Styles: style, WordWrap: width, ChromaFormatter: formatter}).Render(src)
}

// agreeingRenders renders src with both renderers until they agree, at most five
// times. Code blocks are highlighted by chroma, whose rules carry regexp2's 250 ms
// wall-clock MatchTimeout; regexp2's clock is a goroutine that, starved on a loaded
// machine, jumps forward and fails a match that has just started, so one rendering
// shows an error token the other does not. A real difference repeats.
func agreeingRenders(t testing.TB, ours StyleConfig, theirs ansi.StyleConfig, width int, src string) (got string, gerr error, want string, werr error) {
	t.Helper()
	for range 5 {
		want, werr = glamourRender(t, theirs, width, src)
		got, gerr = render(ours, width, src)
		if got == want && (gerr == nil) == (werr == nil) {
			break
		}
	}
	return got, gerr, want, werr
}

// diff shows where got first differs from want.
func diff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(0, i-60)
	return fmt.Sprintf("at byte %d:\ngot  %q\nwant %q", i, got[lo:min(len(got), i+60)], want[lo:min(len(want), i+60)])
}

// glamour registers a code block style in chroma's global registry once per
// process, so the first style to render code keeps its colours for every later one:
// only the dark style is compared on code blocks.
func hasCode(src string) bool {
	return strings.Contains(src, "```") || strings.Contains(src, "\n    ") || strings.HasPrefix(src, "    ")
}

func TestMatchesGlamour(t *testing.T) {
	cases := []struct {
		name   string
		ours   StyleConfig
		theirs ansi.StyleConfig
		code   bool
	}{
		{"dark", DarkStyle(), styles.DarkStyleConfig, true},
		{"ascii", ASCIIStyle(), styles.ASCIIStyleConfig, true},
		{"light", LightStyle(), styles.LightStyleConfig, false},
	}
	for _, c := range cases {
		for _, width := range []int{20, 40, 80} {
			for i, src := range corpus {
				if hasCode(src) && !c.code {
					continue
				}
				got, gerr, want, werr := agreeingRenders(t, c.ours, c.theirs, width, src)
				if (werr == nil) != (gerr == nil) {
					t.Fatalf("%s/%d/doc %d: error %v, glamour's %v", c.name, width, i, gerr, werr)
				}
				if got != want {
					t.Errorf("%s/%d/doc %d (%q): %s", c.name, width, i, src, diff(got, want))
				}
			}
		}
	}
}

// TestStylesMatchGlamour: the copied styles are glamour's, field for field.
func TestStylesMatchGlamour(t *testing.T) {
	for _, c := range []struct {
		name   string
		ours   StyleConfig
		theirs ansi.StyleConfig
	}{
		{"ascii", ASCIIStyle(), styles.ASCIIStyleConfig},
		{"dark", DarkStyle(), styles.DarkStyleConfig},
		{"light", LightStyle(), styles.LightStyleConfig},
	} {
		a, err := json.Marshal(c.ours)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(c.theirs)
		if err != nil {
			t.Fatal(err)
		}
		if string(a) != string(b) {
			t.Errorf("%s style differs from glamour's:\nours   %s\ntheirs %s", c.name, a, b)
		}
	}
}

func TestFormatToken(t *testing.T) {
	for _, c := range []struct{ format, want string }{
		{"Image: {{.text}} →", "Image: x →"},
		{"{{ .text }}|{{.text}}", "x|x"},
		{"\n--------\n", "\n--------\n"},
		{"", ""},
	} {
		got, err := formatToken(c.format, "x")
		if err != nil || got != c.want {
			t.Errorf("formatToken(%q) = %q, %v; want %q", c.format, got, err, c.want)
		}
	}
	for _, bad := range []string{"{{.other}}", "{{.text", "{{if .text}}x{{end}}"} {
		if _, err := formatToken(bad, "x"); err == nil {
			t.Errorf("formatToken(%q): no error", bad)
		}
	}
}

func FuzzMatchesGlamour(f *testing.F) {
	for _, src := range corpus {
		f.Add(src, 40)
	}
	f.Fuzz(func(t *testing.T, src string, width int) {
		if len(src) > 4096 || width < 10 || width > 200 {
			t.Skip()
		}
		got, gerr, want, werr := agreeingRenders(t, DarkStyle(), styles.DarkStyleConfig, width, src)
		if (werr == nil) != (gerr == nil) || got != want {
			t.Fatalf("width %d, %q: errors %v, %v; %s", width, src, gerr, werr, diff(got, want))
		}
	})
}

// TestCodeBlockFormatter: the formatter option reaches chroma.
func TestCodeBlockFormatter(t *testing.T) {
	src := "```go\nfunc main() {}\n```\n"
	for f, want := range map[string]string{"terminal256": "\x1b[38;5;", "terminal16m": "\x1b[38;2;"} {
		out, err := New(Options{Styles: DarkStyle(), WordWrap: 40, ChromaFormatter: f}).Render(src)
		if err != nil || !strings.Contains(out, want) || !strings.Contains(out, "func") {
			t.Errorf("%s: %q, %v; want %q colours", f, out, err, want)
		}
	}
}
