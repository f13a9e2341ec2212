package termmd

import (
	"testing"

	"github.com/microcosm-cc/bluemonday"
)

var htmlCorpus = []string{
	"", "   ", "plain", "a < b & c > d \"q\" 'a'",
	"<b>bold</b> and <i>it</i>", "<div class=x>block</div>", "<br/>line<br>",
	"<!-- comment -->text<!DOCTYPE html>", "<script>alert(1)</script>after", "<style>p{}</style>after",
	"<title>t</title>x", "<iframe src=x>inner</iframe>y", "</title>stray end<title>z",
	"<SCRIPT>x</SCRIPT>y", "<noscript><b>n</b></noscript>z", "<object><object>o</object>p</object>q",
	"<p>é &amp; &copy; &#x41;</p>", "<a href='javascript:x'>link</a>", "<unclosed", "text<",
	"<script>unterminated", "<textarea><b>raw</b></textarea>", "<svg><title>s</title>t</svg>",
}

func TestStripHTMLMatchesBluemonday(t *testing.T) {
	p := bluemonday.StrictPolicy()
	for _, s := range htmlCorpus {
		if got, want := stripHTML(s), p.Sanitize(s); got != want {
			t.Errorf("stripHTML(%q) = %q; bluemonday %q", s, got, want)
		}
	}
}

func FuzzStripHTML(f *testing.F) {
	for _, s := range htmlCorpus {
		f.Add(s)
	}
	p := bluemonday.StrictPolicy()
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := stripHTML(s), p.Sanitize(s); got != want {
			t.Fatalf("stripHTML(%q) = %q; bluemonday %q", s, got, want)
		}
	})
}
