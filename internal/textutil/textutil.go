// Package textutil holds the small text helpers several packages need for one-line
// summaries. It does not sanitize: callers showing untrusted text on a terminal
// pass it through termtext first.
package textutil

import (
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
