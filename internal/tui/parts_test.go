package tui

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

func TestStreamSettles(t *testing.T) {
	for _, tc := range []struct {
		name    string
		deltas  []string
		settled []string // chunks handed out, in order
		tail    string
	}{
		{"paragraph still open", []string{"Hello wor", "ld"}, nil, "Hello world"},
		{"blank line then text", []string{"One.\n\nTw", "o"}, []string{"One.\n\n"}, "Two"},
		{"blank line, next block unknown yet", []string{"One.\n\n"}, nil, "One.\n\n"},
		{"list continues after blank", []string{"- a\n\n- b\n"}, nil, "- a\n\n- b\n"},
		{"list ends at paragraph", []string{"- a\n- b\n\nAfter\n"}, []string{"- a\n- b\n\n"}, "After\n"},
		{"open fence keeps blank lines", []string{"```go\nx := 1\n\ny := 2\n"}, nil, "```go\nx := 1\n\ny := 2\n"},
		{"closed fence settles", []string{"Intro\n```go\nx\n```\nmore"}, []string{"Intro\n```go\nx\n```\n"}, "more"},
		{"heading settles at once", []string{"# Title\nText"}, []string{"# Title\n"}, "Text"},
		{"indented continuation", []string{"para\n\n    code\n"}, nil, "para\n\n    code\n"},
		{"tilde fence", []string{"~~~\na\n\nb\n~~~\n"}, []string{"~~~\na\n\nb\n~~~\n"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s mdStream
			var got []string
			for _, d := range tc.deltas {
				s.Append(d)
				if c := s.takeSettled(); c != "" {
					got = append(got, c)
				}
			}
			if !slices.Equal(got, tc.settled) {
				t.Errorf("settled = %q, want %q", got, tc.settled)
			}
			if s.tail() != tc.tail {
				t.Errorf("tail = %q, want %q", s.tail(), tc.tail)
			}
		})
	}
}

func TestStreamTailRenderIsCachedAndBounded(t *testing.T) {
	var s mdStream
	var md markdown
	th := NewTheme(true, false)
	s.Append("```go\n")
	for i := 0; i < 500; i++ {
		s.Append("fmt.Println(1)\n")
	}
	out := s.renderTail(&md, th, 80, 10)
	if n := strings.Count(out, "\n") + 1; n > 10 {
		t.Fatalf("tail render has %d lines, limit 10", n)
	}
	if again := s.renderTail(&md, th, 80, 10); again != out {
		t.Fatal("cache returned a different render")
	}
}

func FuzzStream(f *testing.F) {
	f.Add("Hello\n\nworld\n```go\nx\n\n```\n- a\n\n- b\n# h\n", 3)
	f.Add("~~~\n\n~~~\n\n1. x\n2) y\n\n> q\n", 1)
	f.Fuzz(func(t *testing.T, text string, step int) {
		if step <= 0 || step > 64 {
			step = 7
		}
		var s mdStream
		var settled strings.Builder
		for i := 0; i < len(text); i += step {
			s.Append(text[i:min(len(text), i+step)])
			settled.WriteString(s.takeSettled())
		}
		if settled.String()+s.tail() != text {
			t.Fatalf("settled+tail != text")
		}
	})
}

func TestTidyStripsGlamourPadding(t *testing.T) {
	var md markdown
	out := md.render("Hello **world**.\n\n- a\n- b\n", NewTheme(true, true), 80)
	for _, l := range strings.Split(out, "\n") {
		if strings.HasSuffix(ansi.Strip(l), " ") {
			t.Fatalf("trailing padding left: %q", l)
		}
	}
	if plain := ansi.Strip(out); !strings.Contains(plain, "Hello world.") || !strings.HasPrefix(plain, "  Hello") {
		t.Fatalf("render = %q", plain)
	}
}

func FuzzSanitize(f *testing.F) {
	f.Add("plain")
	f.Add("\x1b[31mred\x1b[0m\r\n\x1b]8;;http://x\x07link\x1b]8;;\x07\ttab\x00")
	f.Fuzz(func(t *testing.T, s string) {
		out := sanitize(s)
		for _, r := range out {
			if (r < 0x20 && r != '\n') || r == 0x7f {
				t.Fatalf("control %U left in %q", r, out)
			}
		}
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("valid input became invalid UTF-8")
		}
	})
}

func TestFuzzyScoreRanksBaseNameMatches(t *testing.T) {
	c := completeFile("@model", []string{"internal/models/x.go", "internal/tui/model.go", "docs/modules.md", "cmd/root.go"}, 8)
	if c == nil || c.items[0] != "@internal/tui/model.go" {
		t.Fatalf("completion = %+v", c)
	}
	for _, it := range c.items {
		if it == "@cmd/root.go" {
			t.Fatal("non-matching file offered")
		}
	}
}

func TestIndexFilesHonoursGitignore(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		".gitignore":        "*.log\n/build/\nnode_modules\n!keep.log\n",
		"main.go":           "",
		"debug.log":         "",
		"keep.log":          "",
		"build/out.bin":     "",
		"src/build/x.go":    "",
		"node_modules/a.js": "",
		"web/.gitignore":    "dist/\n",
		"web/dist/app.js":   "",
		"web/src/app.ts":    "",
		".git/HEAD":         "",
	}
	for p, body := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := indexFiles(context.Background(), root)
	slices.Sort(got)
	want := []string{".gitignore", "keep.log", "main.go", "src/build/x.go", "web/.gitignore", "web/src/app.ts"}
	if !slices.Equal(got, want) {
		t.Fatalf("indexed %q\nwant    %q", got, want)
	}
}

func TestCostEstimate(t *testing.T) {
	var ps *usage.Prices
	u := ps.Apply("anthropic", "claude-sonnet-4-5", usage.Usage{InputTokens: 1_000_000, CachedInputTokens: 500_000, OutputTokens: 100_000})
	if got := costLabel("", u); got != "$3.15" { // 0.5M*3 + 0.5M*0.3 + 0.1M*15 = 1.5+0.15+1.5
		t.Fatalf("cost = %q", got)
	}
	if got := costLabel("openai:some-unknown", ps.Apply("openai", "some-unknown", usage.Usage{InputTokens: 5})); got != "" {
		t.Fatalf("unknown model priced: %q", got)
	}
	if got := costLabel("script:x.yaml", ps.Apply("script", "x.yaml", usage.Usage{InputTokens: 5})); got != "$0" {
		t.Fatalf("scripted models are free: %q", got)
	}
	if fmtTokens(1234) != "1.2k" || fmtTokens(999) != "999" || fmtTokens(2_500_000) != "2.5M" {
		t.Fatal("fmtTokens")
	}
}

func TestNoColorScrollbackHasNoColour(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.m.cfg.Profile = colorprofile.Ascii
	h.typeText("x")
	h.enter()
	h.events(textDelta("Some **bold** text\n\n"), toolStarted("c", "shell", `{"command":"false"}`),
		toolDone("c", "shell", "boom", 5, true))
	out := h.printed.String()
	if strings.Contains(out, "38;") || strings.Contains(out, "48;") {
		t.Fatalf("colour codes in NO_COLOR scrollback: %q", out)
	}
	if !strings.Contains(ansi.Strip(out), "boom") {
		t.Fatalf("content lost: %q", out)
	}
}

func TestThemeFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		dark bool
	}{
		{nil, true},
		{[]string{"LOVIA_THEME=light"}, false},
		{[]string{"COLORFGBG=0;15"}, false},
		{[]string{"COLORFGBG=15;0"}, true},
		{[]string{"COLORFGBG=0;15", "LOVIA_THEME=dark"}, true},
	} {
		if got := darkFromEnv(tc.env); got != tc.dark {
			t.Errorf("darkFromEnv(%v) = %v", tc.env, got)
		}
	}
	// NO_COLOR downgrades the detected profile, which turns colour off.
	var buf bytes.Buffer
	if p := colorprofile.Detect(&buf, []string{"TERM=xterm-256color", "NO_COLOR=1"}); p > colorprofile.Ascii {
		t.Fatalf("NO_COLOR profile = %v", p)
	}
}

func TestRunRefusesWithoutTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = Run(context.Background(), Options{Backend: &fakeBackend{}, Out: f, In: f})
	if err == nil || !strings.Contains(err.Error(), "not a TTY") || !strings.Contains(errHint(err), "lovia run") {
		t.Fatalf("err = %v (hint %q)", err, errHint(err))
	}
}

func errHint(err error) string { return errs.HintOf(err) }

func TestToolDiffSources(t *testing.T) {
	for _, tc := range []struct {
		name string
		call toolCall
		want string // prefix of the diff, "" for none
	}{
		{"edit output carries the diff", toolCall{Name: "edit_file", Output: "edited a.go (1 replacement)\n--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+y"}, "--- a/a.go\n+++ b/a.go\n@@"},
		{"the diff the tool computed", toolCall{Name: "write_file", Args: []byte(`{"path":"n.txt","content":"hi\n"}`), Output: "overwrote n.txt (3 bytes, 1 lines)",
			Diff: "--- a/n.txt\n+++ b/n.txt\n@@ -1,1 +1,1 @@\n-ho\n+hi"}, "--- a/n.txt\n+++ b/n.txt\n@@ -1,1 +1,1 @@\n-ho"},
		{"arguments are never guessed at", toolCall{Name: "edit_file", Args: []byte(`{"path":"a.go","old_string":"x","new_string":"y"}`), Output: "ok"}, ""},
		{"no diff computed: none made up", toolCall{Name: "write_file", Args: []byte(`{"path":"n.txt","content":"hi\n"}`), Output: "overwrote n.txt (3 bytes, 1 lines)"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := toolDiff(&tc.call)
			if (tc.want == "") != (got == "") || !strings.HasPrefix(got, tc.want) {
				t.Fatalf("diff = %q, want prefix %q", got, tc.want)
			}
		})
	}
}

func TestResolveSession(t *testing.T) {
	b := &fakeBackend{
		sessions: []SessionInfo{{ID: "new", Usage: usage.Usage{InputTokens: 7}}, {ID: "old"}},
		history:  map[string][]transcript.Entry{"elsewhere": {transcript.UserInput("hi")}},
	}
	ctx := context.Background()
	for _, tc := range []struct {
		o      Options
		id     string
		in     int
		errKnd errs.Kind
	}{
		{Options{}, "", 0, ""},
		{Options{Continue: true}, "new", 7, ""},
		{Options{SessionID: "old"}, "old", 0, ""},
		{Options{SessionID: "elsewhere"}, "elsewhere", 0, ""},
		{Options{SessionID: "typo"}, "", 0, errs.KindNotFound},
	} {
		tc.o.Backend = b
		id, u, err := resolveSession(ctx, tc.o)
		if errs.KindOf(err) != tc.errKnd || id != tc.id || u.InputTokens != tc.in {
			t.Errorf("%+v: got %q %+v %v", tc.o, id, u, err)
		}
	}
	if _, _, err := resolveSession(ctx, Options{Backend: &fakeBackend{}, Continue: true}); errs.KindOf(err) != errs.KindNotFound {
		t.Fatalf("-c with no sessions: %v", err)
	}
}
