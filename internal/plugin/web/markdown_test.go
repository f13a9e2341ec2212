package web

import (
	"net/url"
	"os"
	"strings"
	"testing"
)

func TestHTMLToMarkdown(t *testing.T) {
	f, err := os.Open("testdata/article.html")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	base, _ := url.Parse("https://go.dev/doc/tutorial")
	p, err := HTMLToMarkdown(f, base)
	if err != nil {
		t.Fatal(err)
	}
	if p.Title != "Go Testing Guide" {
		t.Errorf("title = %q", p.Title)
	}
	want := "# Testing in `Go`\n\n" +
		"Go has a **built-in** testing package. See the [testing docs](https://go.dev/pkg/testing/) and top.\n\n" +
		"Use *table-driven* tests:  \nthey scale.\n\n" +
		"```go\nfunc TestX(t *testing.T) {\n\tif got := x(); got != 1 {\n\t\tt.Fatal(got)\n\t}\n}\n```\n\n" +
		"- Run `go test`\n- Nested:\n  1. first\n  2. second\n\n" +
		"> Tests are documentation.\n\n" +
		"| Flag | Meaning |\n| --- | --- |\n| -race | race detector |\n| -run | filter \\| regexp |\n\n" +
		"![Gopher](https://go.dev/doc/gopher.png)"
	if p.Markdown != want {
		t.Errorf("markdown mismatch\n--- got ---\n%s\n--- want ---\n%s", p.Markdown, want)
	}
	for _, bad := range []string{"alert", "color:red", "Home", "©", "Search"} {
		if strings.Contains(p.Markdown, bad) {
			t.Errorf("markdown keeps page chrome %q", bad)
		}
	}
}

func FuzzHTMLToMarkdown(f *testing.F) {
	f.Add("<p>hi <b>there</b></p>")
	f.Add("<ul><li><ol><li>x</ol></ul><blockquote><pre>a```b</pre></blockquote>")
	f.Add("<table><tr><td>|</td></tr></table><a href='javascript:x'>y</a>")
	f.Fuzz(func(t *testing.T, in string) {
		if _, err := HTMLToMarkdown(strings.NewReader(in), nil); err != nil {
			t.Fatal(err)
		}
	})
}
