package lexers

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/alecthomas/chroma/v2"
	upstream "github.com/alecthomas/chroma/v2/lexers"
)

// TestConcurrentFirstUse builds the registry from several goroutines at once (it
// runs first, before the other tests have built it) for the race detector.
func TestConcurrentFirstUse(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			l := Get([]string{"go", "python", "markdown", "html"}[i%4])
			if _, err := chroma.Tokenise(l, nil, "x := `a` + <b>\n"); err != nil {
				t.Error(err)
			}
			_ = Analyse("package main\n")
		})
	}
	wg.Wait()
}

// TestEmbeddedMatchesModule fails when the copied XML lexers or the licence differ
// from the chroma module in go.mod: run `go generate ./internal/termmd/lexers`.
func TestEmbeddedMatchesModule(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/alecthomas/chroma/v2").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		t.Skipf("cannot find chroma's module directory (go list -m: %v); the copy is not checked", err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("chroma's module directory is not in the module cache (%v); the copy is not checked", err)
	}
	want := map[string]string{filepath.Join(dir, "COPYING"): "LICENSE.chroma"}
	upstreamXML, err := filepath.Glob(filepath.Join(dir, "lexers", "embedded", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range upstreamXML {
		want[p] = filepath.Join("embedded", filepath.Base(p))
	}
	ours, err := filepath.Glob(filepath.Join("embedded", "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ours) != len(upstreamXML) {
		t.Errorf("embedded/ has %d files, chroma's lexers/embedded %d: run go generate", len(ours), len(upstreamXML))
	}
	for src, dst := range want {
		a, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(dst)
		if err != nil {
			t.Errorf("%s: %v: run go generate", dst, err)
			continue
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from %s: run go generate", dst, src)
		}
	}
}

// TestRegistryMatchesUpstream requires the same lexers, registered in the same
// order with the same configuration, and the same answer from Get for every name,
// alias, file extension and file name pattern, from Match for every pattern and
// from MatchMimeType for every MIME type.
func TestRegistryMatchesUpstream(t *testing.T) {
	ours, theirs := registry().Lexers, upstream.GlobalLexerRegistry.Lexers
	if got, want := configNames(ours), configNames(theirs); !slices.Equal(got, want) {
		t.Fatalf("registration order differs:\n ours     %q\n upstream %q", got, want)
	}
	for i := range ours {
		if !reflect.DeepEqual(ours[i].Config(), theirs[i].Config()) {
			t.Errorf("%s: config differs:\n ours     %+v\n upstream %+v", theirs[i].Config().Name, ours[i].Config(), theirs[i].Config())
		}
	}
	if got, want := Names(true), upstream.Names(true); !slices.Equal(got, want) {
		t.Errorf("Names(true) differ:\n ours     %q\n upstream %q", got, want)
	}

	names := upstream.Names(true)
	var files, mimes []string
	for _, l := range theirs {
		c := l.Config()
		for _, glob := range slices.Concat(c.Filenames, c.AliasFilenames) {
			files = append(files, sampleName(glob))
			if ext, ok := strings.CutPrefix(glob, "*."); ok && !strings.ContainsAny(ext, "*?[") {
				names = append(names, ext)
			}
		}
		mimes = append(mimes, c.MimeTypes...)
	}
	// Names and aliases are also looked up in lower case; the other lookups match
	// file names, so Get is slow for them: each is asked once.
	for _, name := range upstream.Names(true) {
		names = append(names, strings.ToUpper(name))
	}
	slices.Sort(files)
	names = append(names, files...)
	slices.Sort(names)
	for _, n := range slices.Compact(names) {
		if got, want := nameOf(Get(n)), nameOf(upstream.Get(n)); got != want {
			t.Errorf("Get(%q) = %s, upstream %s", n, got, want)
		}
	}
	// Get has matched each sample name; Match also strips directories and backup
	// suffixes.
	for _, f := range slices.Compact(files) {
		n := "dir/" + f + ".bak"
		if got, want := nameOf(Match(n)), nameOf(upstream.Match(n)); got != want {
			t.Errorf("Match(%q) = %s, upstream %s", n, got, want)
		}
	}
	for _, m := range mimes {
		if got, want := nameOf(MatchMimeType(m)), nameOf(upstream.MatchMimeType(m)); got != want {
			t.Errorf("MatchMimeType(%q) = %s, upstream %s", m, got, want)
		}
	}
}

// TestUnknownAndEmpty: names no lexer has, and the empty name, get the same answer
// as upstream's (nil, or the lexer their file name matching picks).
func TestUnknownAndEmpty(t *testing.T) {
	for _, n := range []string{"", " ", "no-such-language", "x.unknownext", "*", ".", "README", "Makefile.am"} {
		if got, want := nameOf(Get(n)), nameOf(upstream.Get(n)); got != want {
			t.Errorf("Get(%q) = %s, upstream %s", n, got, want)
		}
	}
	if got := Get("no-such-language"); got != nil {
		t.Errorf("Get(unknown) = %s, want nil", nameOf(got))
	}
	if MatchMimeType("application/x-no-such") != nil {
		t.Error("MatchMimeType(unknown) is not nil")
	}
}

func TestFallbackMatchesUpstream(t *testing.T) {
	if Fallback() != Fallback() {
		t.Error("Fallback returns a new lexer on each call")
	}
	if !reflect.DeepEqual(Fallback().Config(), upstream.Fallback.Config()) {
		t.Errorf("Fallback config %+v, upstream %+v", Fallback().Config(), upstream.Fallback.Config())
	}
	src := "some text\n\twith lines\n"
	if got, want := agreeingTokens(t, Fallback(), upstream.Fallback, src); !slices.Equal(got, want) {
		t.Errorf("Fallback tokens %v, upstream %v", got, want)
	}
}

func TestAnalyseMatchesUpstream(t *testing.T) {
	samples := []string{
		"",
		"just some words\n",
		"package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(1) }\n",
		"#!/bin/bash\necho hi\n",
		"#!/usr/bin/env python3\nprint(1)\n",
		"<?php echo 1; ?>\n",
		"<!DOCTYPE html>\n<html><body></body></html>\n",
		"<?xml version=\"1.0\"?>\n<a/>\n",
		"$ORIGIN example.com.\n@ IN SOA ns1 admin 1 2 3 4 5\n",
		"SELECT `id`, `name` FROM `users`;\n",
		"definition user {}\ndefinition doc { relation viewer: user\n permission view = viewer }\n",
		"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
	}
	for _, s := range samples {
		if got, want := nameOf(Analyse(s)), nameOf(upstream.Analyse(s)); got != want {
			t.Errorf("Analyse(%q) = %s, upstream %s", s, got, want)
		}
	}
	// Every lexer's own weight, not only the winner's.
	ours, theirs := registry().Lexers, upstream.GlobalLexerRegistry.Lexers
	for i := range min(len(ours), len(theirs)) {
		a, aok := ours[i].(chroma.Analyser)
		b, bok := theirs[i].(chroma.Analyser)
		if aok != bok {
			t.Errorf("%s: analyser %v, upstream %v", nameOf(theirs[i]), aok, bok)
			continue
		}
		if !aok {
			continue
		}
		for _, s := range samples {
			if got, want := a.AnalyseText(s), b.AnalyseText(s); got != want {
				t.Errorf("%s: AnalyseText(%q) = %v, upstream %v", nameOf(theirs[i]), s, got, want)
			}
		}
	}
}

// TestTokensMatchUpstream tokenises a corpus with each registry's lexer for the
// language, including lexers that delegate to others (HTML with script and style,
// Markdown with a fenced block, Go with a raw string, PHP in HTML, an HTTP body).
func TestTokensMatchUpstream(t *testing.T) {
	for _, c := range corpus {
		t.Run(c.lang, func(t *testing.T) {
			l, u := Get(c.lang), upstream.Get(c.lang)
			if l == nil || u == nil {
				t.Fatalf("Get(%q) = %s, upstream %s", c.lang, nameOf(l), nameOf(u))
			}
			got, want := agreeingTokens(t, l, u, c.src)
			if !slices.Equal(got, want) {
				t.Errorf("tokens differ:\n ours     %v\n upstream %v", got, want)
			}
			if len(got) < 3 {
				t.Errorf("only %d tokens: the sample tests little", len(got))
			}
			gotC, wantC := agreeingTokens(t, chroma.Coalesce(l), chroma.Coalesce(u), c.src)
			if !slices.Equal(gotC, wantC) {
				t.Errorf("coalesced tokens differ:\n ours     %v\n upstream %v", gotC, wantC)
			}
		})
	}
}

var corpus = []struct{ lang, src string }{
	{"go", "package main\n\nimport \"fmt\"\n\n// main prints.\nfunc main() {\n\tx := `raw {{ .T }}`\n\tfor i := range 3 { fmt.Println(i, x, 0x1F, 'c') }\n}\n"},
	{"python", "import os\n\n@dataclass\nclass A(B):\n    \"\"\"Doc.\"\"\"\n    def f(self, x: int = 3) -> str:\n        return f\"{x!r}\" if x else 'no'  # comment\n"},
	{"javascript", "const f = async (a, b = 2) => {\n  // c\n  let s = `t ${a + b}`;\n  return /re+/g.test(s) ? null : [1, 2.5e3];\n};\nexport default f;\n"},
	{"typescript", "interface P { name: string; age?: number }\nfunction g<T extends P>(p: T): Promise<void> {\n  return fetch(`/u/${p.name}`).then(() => {});\n}\n"},
	{"rust", "use std::io;\n\n#[derive(Debug)]\nstruct S<'a> { s: &'a str }\n\nfn main() -> io::Result<()> {\n    let v: Vec<u8> = vec![1, 2];\n    println!(\"{:?}\", v);\n    Ok(())\n}\n"},
	{"bash", "#!/bin/bash\nset -euo pipefail\nfor f in *.go; do\n  echo \"$f ${HOME}\" | grep -v x > /dev/null 2>&1 || exit 1\ndone\ncat <<EOF\nhere $doc\nEOF\n"},
	{"json", "{\n  \"a\": [1, 2.5, -3e2, true, false, null],\n  \"b\": {\"c\": \"d\\n\"}\n}\n"},
	{"yaml", "# c\nkey: value\nlist:\n  - a\n  - 'b'\nanchor: &x {k: 1}\nref: *x\nmulti: |\n  text\n"},
	{"toml", "[server]\nhost = \"localhost\" # c\nport = 8080\n\n[[items]]\nname = 'x'\nwhen = 1979-05-27T07:32:00Z\n"},
	{"c", "#include <stdio.h>\n\nint main(int argc, char **argv) {\n    /* c */\n    printf(\"%d\\n\", argc);\n    return 0;\n}\n"},
	{"cpp", "#include <vector>\ntemplate <typename T>\nclass V : public std::vector<T> {\npublic:\n  auto f() const -> int { return static_cast<int>(this->size()); }\n};\n"},
	{"java", "package a;\n\nimport java.util.List;\n\npublic class A {\n    @Override\n    public String toString() { return \"A\" + List.of(1); }\n}\n"},
	{"ruby", "require 'json'\n\nclass A < B\n  attr_reader :x\n  def f(y = 1)\n    puts \"#{y}\" unless y.nil?\n    [1, 2].map { |v| v * 2 }\n  end\nend\n"},
	{"php", "<html><body>\n<?php\nnamespace A;\nfunction f(array $a): string { return \"x{$a[0]}\"; }\necho f([1]);\n?>\n</body></html>\n"},
	{"html", "<!DOCTYPE html>\n<html>\n<head><style>body { color: red; }</style>\n<script>var x = 1 < 2;</script></head>\n<body class=\"a\"><!-- c --><p>t &amp; u</p></body>\n</html>\n"},
	{"css", "@media (max-width: 600px) {\n  .a > b:hover, #c::after { color: #fff; margin: 0 auto !important; }\n}\n"},
	{"sql", "SELECT a.id, COUNT(*) AS n\nFROM users a LEFT JOIN orders o ON o.user_id = a.id\nWHERE a.name LIKE 'x%' -- c\nGROUP BY a.id HAVING n > 1;\n"},
	{"diff", "diff --git a/f.go b/f.go\nindex 1..2 100644\n--- a/f.go\n+++ b/f.go\n@@ -1,3 +1,3 @@\n package f\n-var x = 1\n+var x = 2\n"},
	{"markdown", "# Title\n\nSome *emphasis* and **strong** and `code`.\n\n- item\n- [ ] task\n\n```go\nfunc f() {}\n```\n\n<b>html</b> [link](http://x)\n"},
	{"dockerfile", "FROM golang:1.26 AS build\nWORKDIR /src\nCOPY . .\nRUN go build -o /app . && \\\n    echo done\nENTRYPOINT [\"/app\"]\n"},
	{"makefile", ".PHONY: all\nCC ?= gcc\nall: main.o\n\t$(CC) -o $@ $^ # link\n%.o: %.c\n\t@echo \"cc $<\"\n"},
	{"http", "POST /api HTTP/1.1\nHost: x\nContent-Type: application/json\n\n{\"a\": 1}\n"},
	{"rst", "Title\n=====\n\n.. code-block:: python\n\n   print(1)\n\nText with ``literal``.\n"},
	{"go-html-template", "<p>{{ .Name | html }}</p>\n<script>let a = 1;</script>\n"},
}

func tokens(t *testing.T, l chroma.Lexer, src string) []chroma.Token {
	t.Helper()
	it, err := l.Tokenise(nil, src)
	if err != nil {
		t.Fatalf("%s: %v", nameOf(l), err)
	}
	return it.Tokens()
}

// agreeingTokens tokenises src with both lexers until they agree, at most five
// times. chroma gives every rule regexp2's 250 ms wall-clock MatchTimeout, and
// regexp2's clock is a goroutine that, starved on a loaded machine, jumps forward
// and fails a match that has just started: that lexer then emits an Error token
// where the other does not. A real difference between the copies repeats.
func agreeingTokens(t *testing.T, ours, theirs chroma.Lexer, src string) (got, want []chroma.Token) {
	t.Helper()
	for range 5 {
		got, want = tokens(t, ours, src), tokens(t, theirs, src)
		if slices.Equal(got, want) {
			break
		}
	}
	return got, want
}

func configNames(ls chroma.Lexers) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Config().Name
	}
	return out
}

func nameOf(l chroma.Lexer) string {
	if l == nil {
		return "<nil>"
	}
	return l.Config().Name
}

// sampleName turns a file name pattern into a name it matches.
func sampleName(glob string) string {
	r := strings.NewReplacer("*", "x", "?", "y")
	if i := strings.IndexByte(glob, '['); i >= 0 {
		if j := strings.IndexByte(glob[i:], ']'); j > 1 {
			glob = glob[:i] + glob[i+1:i+2] + glob[i+j+1:]
		}
	}
	return r.Replace(glob)
}

// BenchmarkNewRegistry is the cost the first highlight pays (upstream pays it at
// program start).
func BenchmarkNewRegistry(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		newRegistry()
	}
}
