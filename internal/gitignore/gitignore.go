// Package gitignore matches paths against .gitignore rules the way git does: the
// last matching rule wins, "!" re-includes, a trailing "/" matches directories only,
// a pattern with a slash is anchored to its file's directory, "**" spans
// directories, and nested .gitignore files apply below their directory. The file
// tools and the TUI's @ completion share it so they agree on what is ignored.
//
// Reading the files is the caller's business (each reads them its own safe way).
package gitignore

import (
	"bufio"
	"bytes"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// rule is one line of a .gitignore.
type rule struct {
	pat      string
	negate   bool
	dirOnly  bool
	anchored bool // contains a slash: matched against the path relative to base
}

// Set is the rules of one .gitignore and the directory (root-relative,
// slash-separated, "" for the root) it applies to.
type Set struct {
	base  string
	rules []rule
}

// Chain is the .gitignore files from the root down to a directory, outermost first.
type Chain []*Set

// Parse reads the rules of a .gitignore in directory base (root-relative,
// slash-separated, "" for the root). It returns nil when there are none.
func Parse(data []byte, base string) *Set {
	s := &Set{base: base}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := trimTrailingSpace(strings.TrimSuffix(sc.Text(), "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := rule{}
		if strings.HasPrefix(line, "!") {
			r.negate = true
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly = true
			line = strings.TrimRight(line, "/")
		}
		if strings.Contains(line, "/") {
			r.anchored = true
			line = strings.TrimPrefix(line, "/")
		}
		if line == "" || !doublestar.ValidatePattern(line) {
			continue
		}
		r.pat = line
		s.rules = append(s.rules, r)
	}
	if len(s.rules) == 0 {
		return nil
	}
	return s
}

// trimTrailingSpace drops trailing spaces and tabs unless escaped with a backslash
// (git: "Trailing spaces are ignored unless they are quoted with backslash").
func trimTrailingSpace(line string) string {
	for len(line) > 0 && (line[len(line)-1] == ' ' || line[len(line)-1] == '\t') {
		if len(line) >= 2 && line[len(line)-2] == '\\' {
			return line
		}
		line = line[:len(line)-1]
	}
	return line
}

// With returns the chain extended by s (nil: c itself). c is not modified.
func (c Chain) With(s *Set) Chain {
	if s == nil {
		return c
	}
	out := make(Chain, len(c), len(c)+1)
	copy(out, c)
	return append(out, s)
}

// Ignored reports whether rel (root-relative, slash-separated) is ignored by the
// rules themselves. Like git, it does not look at rel's parents: callers walking a
// tree skip an ignored directory and never ask about what is inside it.
func (c Chain) Ignored(rel string, isDir bool) bool {
	ignored := false
	for _, s := range c {
		sub := rel
		if s.base != "" {
			if !strings.HasPrefix(rel, s.base+"/") {
				continue
			}
			sub = rel[len(s.base)+1:]
		}
		name := path.Base(sub)
		for _, r := range s.rules {
			if r.dirOnly && !isDir {
				continue
			}
			var m bool
			if r.anchored {
				m = matchAnchored(r.pat, sub)
			} else {
				m = doublestar.MatchUnvalidated(r.pat, name)
			}
			if m {
				ignored = !r.negate
			}
		}
	}
	return ignored
}

// matchAnchored matches a pattern with a slash against the path below its
// .gitignore. A trailing "/**" matches everything inside but not the directory
// itself (git: "abc/**" leaves abc/ so a "!abc/keep" can re-include a file).
func matchAnchored(pat, sub string) bool {
	if head, ok := strings.CutSuffix(pat, "/**"); ok && doublestar.MatchUnvalidated(head, sub) {
		return false
	}
	return doublestar.MatchUnvalidated(pat, sub)
}
