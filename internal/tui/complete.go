package tui

import (
	"bufio"
	"bytes"
	"context"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/lovia-dev/lovia/internal/safefile"
)

// slashCommand is one /command of the prompt.
type slashCommand struct {
	Name string
	Args string
	Help string
}

var slashCommands = []slashCommand{
	{"/new", "", "start a new session"},
	{"/sessions", "", "pick a session of this repository and switch to it"},
	{"/resume", "[RUN_ID]", "continue the last interrupted run"},
	{"/model", "[PROVIDER:MODEL]", "show or switch the model"},
	{"/compact", "", "compact the context now"},
	{"/todo", "", "show the agent's todo list"},
	{"/cost", "", "tokens and estimated cost of this session"},
	{"/help", "", "keys and commands"},
	{"/undo", "", "undo the last message: its file changes and the conversation"},
	{"/rewind", "", "pick a message to go back to (code, conversation or both)"},
	{"/quit", "", "leave (the session stays resumable)"},
}

// completion is an open completion popup.
type completion struct {
	kind  byte // '/' or '@'
	word  string
	items []string
	help  []string
	sel   int
}

// completeSlash lists commands starting with word (word includes the "/").
func completeSlash(word string) *completion {
	c := &completion{kind: '/', word: word}
	for _, sc := range slashCommands {
		if strings.HasPrefix(sc.Name, word) {
			c.items = append(c.items, sc.Name)
			h := sc.Help
			if sc.Args != "" {
				h = sc.Args + "  " + h
			}
			c.help = append(c.help, h)
		}
	}
	if len(c.items) == 0 || (len(c.items) == 1 && c.items[0] == word) {
		return nil
	}
	return c
}

// completeFile fuzzy-matches word (after "@") against the file index.
func completeFile(word string, files []string, limit int) *completion {
	q := strings.TrimPrefix(word, "@")
	type scored struct {
		s    int
		path string
	}
	var res []scored
	for _, f := range files {
		if s, ok := fuzzyScore(q, f); ok {
			res = append(res, scored{s, f})
		}
	}
	if len(res) == 0 {
		return nil
	}
	sort.SliceStable(res, func(i, j int) bool {
		if res[i].s != res[j].s {
			return res[i].s > res[j].s
		}
		return res[i].path < res[j].path
	})
	c := &completion{kind: '@', word: word}
	for i := 0; i < len(res) && i < limit; i++ {
		c.items = append(c.items, "@"+res[i].path)
	}
	if len(c.items) == 1 && c.items[0] == word {
		return nil
	}
	return c
}

// fuzzyScore matches q as a case-insensitive subsequence of s. Consecutive runs,
// matches at word starts and in the base name score higher; shorter paths win ties.
func fuzzyScore(q, s string) (int, bool) {
	if q == "" {
		return -len(s), true
	}
	ls, lq := strings.ToLower(s), strings.ToLower(q)
	base := strings.LastIndexByte(ls, '/') + 1
	score, qi, prev := 0, 0, -2
	for i := 0; i < len(ls) && qi < len(lq); i++ {
		if ls[i] != lq[qi] {
			continue
		}
		score += 1
		if prev == i-1 {
			score += 5
		}
		if i == 0 || strings.ContainsRune("/._-", rune(ls[i-1])) {
			score += 3
		}
		if i >= base {
			score += 2
		}
		prev = i
		qi++
	}
	if qi < len(lq) {
		return 0, false
	}
	if strings.Contains(ls[base:], lq) {
		score += 10
	}
	return score*100 - len(s), true
}

// maxIndexedFiles bounds the @ index so a huge tree cannot stall the UI.
const maxIndexedFiles = 50000

// ignoreRule is one .gitignore line.
type ignoreRule struct {
	base    string // directory of the .gitignore, relative to the root ("" for the root)
	pattern string
	negate  bool
	dirOnly bool
	rooted  bool // contains a slash: matched against the path relative to base
}

// indexFiles walks root and returns file paths relative to it, skipping .git and
// whatever .gitignore files (the root's and nested ones) exclude.
func indexFiles(ctx context.Context, root string) []string {
	var files []string
	var rules []ignoreRule
	rules = append(rules, readIgnore(filepath.Join(root, ".gitignore"), "")...)
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if ctx.Err() != nil || len(files) >= maxIndexedFiles {
			return fs.SkipAll
		}
		rel, rerr := filepath.Rel(root, p)
		if rerr != nil || rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" || ignored(rules, rel, true) {
				return fs.SkipDir
			}
			rules = append(rules, readIgnore(filepath.Join(p, ".gitignore"), rel)...)
			return nil
		}
		if !ignored(rules, rel, false) {
			files = append(files, rel)
		}
		return nil
	})
	return files
}

func readIgnore(file, base string) []ignoreRule {
	// A regular file of at most 1 MiB: a FIFO would block the scan forever.
	data, err := safefile.ReadBeneath(filepath.Dir(file), file, 1<<20)
	if err != nil {
		return nil
	}
	var rules []ignoreRule
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := ignoreRule{base: base}
		if strings.HasPrefix(line, "!") {
			r.negate, line = true, line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimSuffix(line, "/")
		}
		if strings.Contains(line, "/") {
			r.rooted, line = true, strings.TrimPrefix(line, "/")
		}
		r.pattern = line
		rules = append(rules, r)
	}
	return rules
}

// ignored applies the rules in order (the last match wins, as in git).
func ignored(rules []ignoreRule, rel string, isDir bool) bool {
	ign := false
	for _, r := range rules {
		if r.dirOnly && !isDir {
			continue
		}
		p := rel
		if r.base != "" {
			if !strings.HasPrefix(rel, r.base+"/") {
				continue
			}
			p = rel[len(r.base)+1:]
		}
		if matchIgnore(r, p) {
			ign = !r.negate
		}
	}
	return ign
}

func matchIgnore(r ignoreRule, p string) bool {
	if r.rooted {
		if strings.Contains(r.pattern, "**") {
			return matchDoubleStar(r.pattern, p)
		}
		ok, _ := path.Match(r.pattern, p)
		return ok
	}
	ok, _ := path.Match(r.pattern, path.Base(p))
	return ok
}

// matchDoubleStar handles the common "**/x" and "x/**" forms.
func matchDoubleStar(pat, p string) bool {
	if rest, ok := strings.CutPrefix(pat, "**/"); ok {
		parts := strings.Split(p, "/")
		for i := range parts {
			if m, _ := path.Match(rest, strings.Join(parts[i:], "/")); m {
				return true
			}
		}
		return false
	}
	if head, ok := strings.CutSuffix(pat, "/**"); ok {
		return strings.HasPrefix(p, head+"/")
	}
	m, _ := path.Match(strings.ReplaceAll(pat, "**", "*"), p)
	return m
}
