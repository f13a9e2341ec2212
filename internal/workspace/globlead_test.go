package workspace

import (
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

// Every path a pattern matches starts with the pattern's lead, so the walk may
// reject on the lead alone.
func TestGlobLeadIsPrefixOfEveryMatch(t *testing.T) {
	pats := []string{"/home/u/.ssh", "/home/u/.config/lovia/credentials*", "a/**", "a/**/b", "**/x", "a/{b,c}/d",
		`a\*b`, "a/b?", "a/[bc]", "/", "a", ".env*", "*.pem", "a/{,b}", "a/**/", "ab/**", "x/y/**/*.go", "/etc/**"}
	names := []string{"", "/", "a", "a/", "ab", "a/b", "a/c", "a/b/d", "a/c/d", "a/x/b", "a*b", "a/bb", "x", "q/x",
		"/home/u/.ssh", "/home/u/.ssh/id", "/home/u/.config/lovia/credentials.json", "/home/u", ".envrc", "k.pem",
		"x/y", "x/y/z.go", "/etc", "/etc/passwd", "a/b/", "ab"}
	for _, p := range pats {
		if !doublestar.ValidatePattern(p) {
			t.Fatalf("invalid test pattern %q", p)
		}
		lead := globLead(p)
		for _, n := range names {
			if doublestar.MatchUnvalidated(p, n) && !strings.HasPrefix(n, lead) {
				t.Errorf("pattern %q matches %q, which lacks its lead %q", p, n, lead)
			}
		}
	}
}

func TestRelInside(t *testing.T) {
	for _, c := range []struct {
		root, abs, rel string
		ok             bool
	}{
		{"/w", "/w", ".", true}, {"/w", "/w/a", "a", true}, {"/w", "/w/a/b", "a/b", true}, {"/w", "/wx", "", false},
		{"/w", "/", "", false}, {"/w", "/w/", "", true}, {"/", "/a", "a", true}, {"/", "/", ".", true}, {"/w/", "/w/a", "a", true},
		{"/w/", "/w", "", false}, {"/w", "/v/a", "", false},
	} {
		rel, ok := relInside(c.root, c.abs)
		if rel != c.rel || ok != c.ok {
			t.Errorf("relInside(%q, %q) = %q, %v; want %q, %v", c.root, c.abs, rel, ok, c.rel, c.ok)
		}
	}
}
