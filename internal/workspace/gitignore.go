package workspace

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ignoreRule is one line of a .gitignore.
type ignoreRule struct {
	pat      string
	negate   bool
	dirOnly  bool
	anchored bool // contains a slash: matched against the path relative to base
}

// ignoreSet is the rules of one .gitignore and the directory (root-relative,
// slash-separated, "" for the root) it applies to.
type ignoreSet struct {
	base  string
	rules []ignoreRule
}

// ignoreChain is the .gitignore files from the root down to a directory.
type ignoreChain []*ignoreSet

func parseGitignore(data []byte, base string) *ignoreSet {
	s := &ignoreSet{base: base}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \t\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := ignoreRule{}
		if strings.HasPrefix(line, "!") {
			r.negate = true
			line = line[1:]
		}
		line = strings.TrimPrefix(line, `\`)
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

// with returns the chain extended by the .gitignore in dir (if any).
func (c ignoreChain) with(absDir, relDir string) ignoreChain {
	// A regular file of at most 1 MiB, never through a link: a .gitignore that is a
	// FIFO or a link to /dev/zero must not hang or exhaust a listing (it is then not
	// applied).
	data, err := readNoFollow(absDir + "/.gitignore")
	if err != nil {
		return c
	}
	s := parseGitignore(data, relDir)
	if s == nil {
		return c
	}
	out := make(ignoreChain, len(c), len(c)+1)
	copy(out, c)
	return append(out, s)
}

// ignored reports whether rel (root-relative, slash-separated) is ignored; the last
// matching rule wins, as in git.
func (c ignoreChain) ignored(rel string, isDir bool) bool {
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
				m = doublestar.MatchUnvalidated(r.pat, sub)
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

// maxIgnoreFile caps one .gitignore or info/exclude.
const maxIgnoreFile = 1 << 20

// rootIgnores is the chain at the root: .git/info/exclude, then .gitignore.
func rootIgnores(root string) ignoreChain {
	var c ignoreChain
	if data, err := readNoFollow(root + "/.git/info/exclude"); err == nil {
		if s := parseGitignore(data, ""); s != nil {
			c = append(c, s)
		}
	}
	return c.with(root, "")
}

// readNoFollow reads a small regular file at a symlink-free path without following
// any link (git does not follow a symlinked .gitignore either): a link planted as
// .gitignore must not make lovia read a file outside the root.
func readNoFollow(abs string) ([]byte, error) {
	f, err := openResolved(nil, "", abs, os.O_RDONLY|toolOpenFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, _, _, err := readOpened(f, maxIgnoreFile)
	return data, err
}
