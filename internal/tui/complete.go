package tui

import (
	"context"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/lovia-dev/lovia/internal/gitignore"
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
	{"/continue", "[TEXT]", "carry on after a turn limit or a failure"},
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
func completeSlash(word string, custom ...slashCommand) *completion {
	c := &completion{kind: '/', word: word}
	for _, sc := range append(slashCommands[:len(slashCommands):len(slashCommands)], custom...) {
		if strings.HasPrefix(sc.Name, word) {
			c.items = append(c.items, sc.Name)
			h := sc.Help
			if sc.Args != "" {
				h += "  " + sc.Args // after the help: the help column stays aligned
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

// indexFiles walks root and returns file paths relative to it, skipping .git and
// whatever .gitignore files (the root's and nested ones) exclude.
func indexFiles(ctx context.Context, root string) []string {
	var files []string
	// chains[dir] is the rules in force in dir (root-relative, "" for the root): the
	// same matcher and files as the file tools (.git/info/exclude, then .gitignore
	// files from the root down).
	chains := map[string]gitignore.Chain{"": readIgnore(readIgnore(nil, root, filepath.Join(".git", "info", "exclude"), ""), root, ".gitignore", "")}
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
		parent := path.Dir(rel)
		if parent == "." {
			parent = ""
		}
		chain := chains[parent]
		if d.IsDir() {
			if d.Name() == ".git" || chain.Ignored(rel, true) {
				return fs.SkipDir
			}
			chains[rel] = readIgnore(chain, root, filepath.Join(filepath.FromSlash(rel), ".gitignore"), rel)
			return nil
		}
		if !chain.Ignored(rel, false) {
			files = append(files, rel)
		}
		return nil
	})
	return files
}

// readIgnore extends c by the ignore file at rel under root (rules for directory
// base). A regular file of at most 1 MiB beneath root: a FIFO would block the scan
// forever, a link must not read outside the root.
func readIgnore(c gitignore.Chain, root, rel, base string) gitignore.Chain {
	data, err := safefile.ReadBeneath(root, filepath.Join(root, rel), 1<<20)
	if err != nil {
		return c
	}
	return c.With(gitignore.Parse(data, base))
}
