package workspace

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// Limits of grep_files.
const (
	DefaultGrepMatches = 200
	MaxGrepMatches     = 2000
	maxGrepLine        = 300
	maxGrepFile        = 16 << 20
)

// GrepOptions select what grep_files searches.
type GrepOptions struct {
	Pattern    string
	Path       string // file or directory; "" = root
	Glob       string // doublestar filter on paths relative to Path (e.g. **/*.go)
	IgnoreCase bool
	Literal    bool // Pattern is a fixed string
	Hidden     bool
	MaxResults int
}

type grepHit struct {
	rel   string
	lines []grepLine
}

type grepLine struct {
	n    int
	text string
}

// quickRead judges a walk entry whose parent directory was already allowed: only
// rules that can match at this level are evaluated (the walk's hot path).
func (p *Policy) quickRead(abs, name string) Decision {
	for i := range p.denied {
		if p.quickMatch(&p.denied[i], abs, name) {
			return Deny
		}
	}
	for i := range p.rules {
		if r := &p.rules[i]; r.read != nil && p.quickMatch(&r.pathPattern, abs, name) {
			return *r.read
		}
	}
	for i := range p.credentials {
		if p.quickMatch(&p.credentials[i], abs, name) {
			return Deny
		}
	}
	return Allow
}

// quickMatch matches pp against a walk entry at its own level. Most patterns are
// rejected by their literal lead alone: the built-in credential stores are
// absolute paths that share a long prefix with the workspace when it is under the
// home directory, and the matcher compares those rune by rune, for every entry.
func (p *Policy) quickMatch(pp *pathPattern, abs, name string) bool {
	s := abs
	switch pp.kind {
	case 2:
		s = name
	case 1:
		rel, ok := relInside(p.root, abs)
		if !ok {
			return false
		}
		s = rel
	}
	if !pp.win && !strings.HasPrefix(s, pp.lead) {
		return false
	}
	return doublestar.MatchUnvalidated(pp.pat, s)
}

// globLead is a prefix of every path the doublestar pattern pat matches: its
// characters before the first special one, less a trailing "/" (a/** matches a).
func globLead(pat string) string {
	lead := pat
	if i := strings.IndexAny(pat, "*?[{\\"); i >= 0 {
		lead = pat[:i]
	}
	return strings.TrimSuffix(lead, "/")
}

// compileGrep builds the matcher: a fixed-string prefilter when possible, and a
// multi-line regexp run over the whole file (most files never match, so they are
// rejected in one pass without splitting lines).
func compileGrep(o GrepOptions) (*regexp.Regexp, []byte, error) {
	pat := o.Pattern
	if o.Literal {
		pat = regexp.QuoteMeta(pat)
	}
	flags := "(?m)"
	if o.IgnoreCase {
		flags = "(?mi)"
	}
	re, err := regexp.Compile(flags + pat)
	if err != nil {
		return nil, nil, userErr("invalid regular expression %q: %v (set literal=true to search for the text as is)", o.Pattern, err)
	}
	var lit []byte
	if !o.IgnoreCase {
		if o.Literal {
			lit = []byte(o.Pattern)
		} else if prefix, complete := re.LiteralPrefix(); complete && prefix != "" {
			lit = []byte(prefix)
		}
	}
	return re, lit, nil
}

// GrepFiles searches files under opts.Path for a regular expression, respecting
// .gitignore and skipping binary files. The tree is walked in parallel.
func (w *Workspace) GrepFiles(ctx context.Context, opts GrepOptions, approved bool) (string, error) {
	return w.grepFiles(ctx, opts, fixedGate(approved))
}

func (w *Workspace) grepFiles(ctx context.Context, opts GrepOptions, g gate) (string, error) {
	if opts.Pattern == "" {
		return "", userErr("pattern is empty")
	}
	re, lit, err := compileGrep(opts)
	if err != nil {
		return "", err
	}
	p := opts.Path
	if p == "" {
		p = "."
	}
	abs, _, err := w.checkPath(p, OpRead, g)
	if err != nil {
		return "", err
	}
	fi, err := w.statJudged(abs)
	if err != nil {
		return "", fileErr("search", p, err)
	}
	glob := strings.TrimPrefix(opts.Glob, "./")
	if glob != "" && !doublestar.ValidatePattern(glob) {
		return "", userErr("invalid glob %q (use e.g. **/*.go)", opts.Glob)
	}
	max := opts.MaxResults
	if max <= 0 {
		max = DefaultGrepMatches
	}
	max = min(max, MaxGrepMatches)

	// Small first buffers: most trees are walked by one goroutine, and readAll
	// grows a buffer to the largest file it met.
	bufs := sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}
	var (
		mu    sync.Mutex
		hits  []grepHit
		count atomic.Int64
		files atomic.Int64
	)
	// search greps openAbs (a resolved path, opened by safeOpen) and shows it as shown.
	search := func(openAbs, shown string) {
		if count.Load() > int64(max) {
			return
		}
		f, err := w.safeOpen(openAbs, os.O_RDONLY, 0, forWalk)
		if err != nil {
			return
		}
		bp := bufs.Get().(*[]byte)
		h, ok := grepFile(f, re, lit, bp)
		f.Close()
		bufs.Put(bp)
		files.Add(1)
		if !ok {
			return
		}
		h.rel = w.rel(shown)
		count.Add(int64(len(h.lines)))
		mu.Lock()
		hits = append(hits, h)
		mu.Unlock()
	}
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		return "", userErr("%s is not a regular file or directory", p)
	}
	if !fi.IsDir() {
		search(abs, abs)
	} else {
		w.parallelWalk(ctx, abs, opts.Hidden, func(openAbs, shown, rel string) {
			if glob != "" && !doublestar.MatchUnvalidated(glob, rel) {
				return
			}
			search(openAbs, shown)
		}, func() bool { return count.Load() > int64(max) })
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].rel < hits[j].rel })
	var b strings.Builder
	n := 0
	capped := false
	for _, h := range hits {
		for _, l := range h.lines {
			if n >= max {
				break
			}
			line := fmt.Sprintf("%s:%d:%s\n", showRel(h.rel), l.n, l.text)
			if b.Len()+len(line) > MaxShellOutput {
				capped = true
				break
			}
			b.WriteString(line)
			n++
		}
		if n >= max || capped {
			break
		}
	}
	if n == 0 {
		return fmt.Sprintf("no matches for %q in %s (%d files searched)", opts.Pattern, p, files.Load()), nil
	}
	switch {
	case capped:
		fmt.Fprintf(&b, "[output capped at %d characters after %d matches; narrow the pattern, path or glob]\n", MaxShellOutput, n)
	case count.Load() > int64(n):
		fmt.Fprintf(&b, "[stopped at %d matches; narrow the pattern, path or glob]\n", n)
	}
	return b.String(), nil
}

// grepFile returns the matching lines of one file (binary and huge files skipped).
// buf is the worker's reusable read buffer.
func grepFile(f *os.File, re *regexp.Regexp, lit []byte, buf *[]byte) (grepHit, bool) {
	data, ok := readAll(f, buf)
	if !ok {
		return grepHit{}, false
	}
	if lit != nil && !bytes.Contains(data, lit) {
		return grepHit{}, false
	}
	if isBinary(data) {
		return grepHit{}, false
	}
	locs := re.FindAllIndex(data, -1)
	if len(locs) == 0 {
		return grepHit{}, false
	}
	var h grepHit
	line, pos := 1, 0
	lastLine := 0
	for _, loc := range locs {
		line += bytes.Count(data[pos:loc[0]], []byte{'\n'})
		pos = loc[0]
		if line == lastLine {
			continue
		}
		lastLine = line
		start := bytes.LastIndexByte(data[:loc[0]], '\n') + 1
		end := bytes.IndexByte(data[loc[0]:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += loc[0]
		}
		text := strings.TrimRight(string(data[start:end]), "\r")
		if !utf8.ValidString(text) {
			text = strings.ToValidUTF8(text, "\uFFFD")
		}
		if len(text) > maxGrepLine {
			text = strings.ToValidUTF8(text[:maxGrepLine], "") + " [...]"
		}
		h.lines = append(h.lines, grepLine{n: line, text: text})
	}
	return h, true
}

// readAll reads f into *buf (grown as needed, reused across files); false when the
// file is larger than maxGrepFile or unreadable.
func readAll(f *os.File, buf *[]byte) ([]byte, bool) {
	b := (*buf)[:0]
	for {
		if len(b) == cap(b) {
			if cap(b) >= maxGrepFile {
				return nil, false
			}
			nb := make([]byte, len(b), max(2*cap(b), 64<<10))
			copy(nb, b)
			b = nb
		}
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			*buf = b
			if err == io.EOF {
				return b, true
			}
			return nil, false
		}
		if n == 0 {
			*buf = b
			return b, true
		}
	}
}

type dirJob struct {
	abs, rel string
	chain    ignoreChain
}

// parallelWalk visits regular files under start; past parallelWalkAfter entries
// it adds workers up to GOMAXPROCS, and directory listing and file work share
// them, so a wide tree keeps them all busy. A small tree is walked by the caller
// alone: the workers' hand-offs (futex wake-ups) cost more than its whole walk.
// fn gets the path to open (a link's resolved target), the path to show, and the
// path relative to start.
func (w *Workspace) parallelWalk(ctx context.Context, start string, hidden bool, fn func(openAbs, shown, rel string), stop func() bool) {
	rootRel, inRoot := relInside(w.policy.root, start)
	var chain ignoreChain
	base := ""
	if inRoot {
		chain = rootIgnores(w.policy.root)
		if rootRel != "." {
			parts := strings.Split(rootRel, "/")
			for i := range parts {
				rel := strings.Join(parts[:i+1], "/")
				chain = chain.with(w.policy.root+"/"+rel, rel)
			}
			base = rootRel
		}
	} else {
		chain = chain.with(start, "")
	}
	var (
		mu      sync.Mutex
		cond    = sync.NewCond(&mu)
		stack   = []dirJob{{abs: start, rel: "", chain: chain}}
		pending = 1 // directories queued or being listed
		seen    = 0 // entries listed so far
		spawned = false
		wg      sync.WaitGroup
	)
	var worker func(lead bool)
	worker = func(lead bool) {
		for {
			mu.Lock()
			for len(stack) == 0 && pending > 0 {
				cond.Wait()
			}
			if len(stack) == 0 {
				mu.Unlock()
				return
			}
			job := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			mu.Unlock()

			var subdirs []dirJob
			n := 0
			if ctx.Err() == nil && !stop() {
				subdirs, n = w.listDir(job, base, hidden, fn)
			}
			mu.Lock()
			stack = append(stack, subdirs...)
			pending += len(subdirs) - 1
			seen += n
			spawn := lead && !spawned && seen >= parallelWalkAfter && len(stack) > 0
			spawned = spawned || spawn
			cond.Broadcast()
			mu.Unlock()
			if spawn {
				for range runtime.GOMAXPROCS(0) - 1 {
					wg.Go(func() { worker(false) })
				}
			}
		}
	}
	worker(true)
	wg.Wait()
}

// parallelWalkAfter is how many entries a walk lists on the caller alone before
// it adds workers.
const parallelWalkAfter = 256

// listDir lists one directory of a walk: it calls fn for the files and returns
// the subdirectories to walk and how many entries the directory has.
func (w *Workspace) listDir(job dirJob, base string, hidden bool, fn func(openAbs, shown, rel string)) ([]dirJob, int) {
	ents := w.readDir(job.abs)
	if ents == nil {
		return nil, 0
	}
	chain := job.chain
	if job.rel != "" {
		// Only read a .gitignore that is there (no failed open per directory).
		for _, de := range ents {
			if de.Name() == ".gitignore" {
				dirRel := job.rel
				if base != "" {
					dirRel = base + "/" + job.rel
				}
				chain = chain.with(job.abs, dirRel)
				break
			}
		}
	}
	var subdirs []dirJob
	for _, de := range ents {
		name := de.Name()
		if name == ".git" || !hidden && name[0] == '.' {
			continue
		}
		abs := job.abs + "/" + name
		rel := name
		if job.rel != "" {
			rel = job.rel + "/" + name
		}
		ignRel := rel
		if base != "" {
			ignRel = base + "/" + rel
		}
		t := de.Type()
		if t&fs.ModeSymlink != 0 {
			// Follow a link to a file only when its target is plainly readable; never
			// descend into linked directories.
			target, ok := w.walkLink(abs)
			if !ok {
				continue
			}
			fi, err := os.Lstat(target)
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			if !chain.ignored(ignRel, false) {
				fn(target, abs, rel)
			}
			continue
		}
		isDir := t.IsDir()
		if !isDir && !t.IsRegular() {
			continue
		}
		if chain.ignored(ignRel, isDir) || w.policy.quickRead(abs, name) == Deny {
			continue
		}
		if isDir {
			subdirs = append(subdirs, dirJob{abs: abs, rel: rel, chain: chain})
			continue
		}
		fn(abs, abs, rel)
	}
	return subdirs, len(ents)
}
