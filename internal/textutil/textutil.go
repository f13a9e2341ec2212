// Package textutil holds the small text helpers several packages need for one-line
// summaries. It does not sanitize: callers showing untrusted text on a terminal
// pass it through termtext first.
package textutil

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// OneLine collapses every run of white space (newlines included) to one space and
// trims the ends.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Clip is OneLine cut to at most n runes, the last being "…" when it was cut.
func Clip(s string, n int) string {
	s = OneLine(s)
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// Mentions lists the distinct @path words of text, in order, without the @ and
// without trailing punctuation: the words a chat or headless prompt uses to attach
// a file or an image.
func Mentions(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.Fields(text) {
		if !strings.HasPrefix(w, "@") {
			continue
		}
		p := strings.TrimRight(w[1:], ",.;:!?)]}'\"")
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return out
}

// Bytes writes a size as people read it: "12 bytes", "3.4 KiB", "1.2 MiB".
func Bytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
