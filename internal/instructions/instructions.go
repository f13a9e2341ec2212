// Package instructions gathers project instructions for the system prompt: the
// user's global files (lovia's ~/.config/lovia/AGENTS.md and Claude Code's
// ~/.claude/CLAUDE.md), then AGENTS.md, CLAUDE.md and CLAUDE.local.md in each
// directory from the repository root down to the working directory, with their
// @path imports expanded; each file once, capped in size with a notice.
package instructions

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/safefile"
)

// DefaultMaxBytes caps the combined instructions (32 KiB).
const DefaultMaxBytes = 32 << 10

// MaxImportDepth bounds @path imports (as Claude Code's five hops).
const MaxImportDepth = 5

// Options say where to look.
type Options struct {
	UserDir string // ~/.config/lovia ("" skips lovia's global file)
	// ClaudeDir is ~/.claude ("" skips Claude Code's global CLAUDE.md).
	ClaudeDir string
	// Home expands ~ in imports of the user's own files ("" = no ~ imports).
	Home string
	Root string // repository root
	Cwd  string // working directory (inside Root; otherwise only Cwd is read)
	// MaxBytes caps the result (0 = DefaultMaxBytes).
	MaxBytes int
	// Denied, when set, says why the workspace policy denies reading abs ("" =
	// allowed). Imports it denies are not read: a CLAUDE.md cannot pull a file the
	// agent may not read (.env under a deny rule) into the prompt.
	Denied func(abs string) string
}

// File is one instructions file that was read.
type File struct {
	Path  string
	Bytes int
	// Omitted is how many bytes of it were cut by the cap.
	Omitted int
	// Why says why it was read: "global (lovia)", "project (root)", "imported by …".
	Why string
}

// Result is the combined instructions.
type Result struct {
	Text  string
	Files []File
	// Truncated reports the cap was hit.
	Truncated bool
	// Notes are imports that were not followed (outside the tree, too deep, a
	// cycle), also shown in the text where they occurred.
	Notes []string
}

// source is one file to read and the tree it must stay in.
type source struct {
	path, within, why string
	// home: ~ in its imports is the user's home (the user's own files only).
	home bool
}

// loader reads files once each, in order, expanding imports depth-first.
type loader struct {
	opts     Options
	seen     map[string]bool
	stack    map[string]bool // the files whose imports are being read
	files    []File
	texts    []string
	problems []error
	notes    []string
}

// Load reads the instruction files. Unreadable or refused files (links out of their
// tree, FIFOs, devices, files over 1 MiB) are skipped with their error returned
// alongside, to be shown to the user (never fatal: instructions are advisory).
func Load(opts Options) (Result, []error) {
	max := opts.MaxBytes
	if max <= 0 {
		max = DefaultMaxBytes
	}
	var srcs []source
	if opts.UserDir != "" {
		srcs = append(srcs, source{filepath.Join(opts.UserDir, "AGENTS.md"), opts.UserDir, "global (lovia)", true})
	}
	if opts.ClaudeDir != "" {
		srcs = append(srcs, source{filepath.Join(opts.ClaudeDir, "CLAUDE.md"), opts.ClaudeDir, "global (Claude Code)", true})
	}
	ds := dirs(opts.Root, opts.Cwd)
	for i, d := range ds {
		where := "project root"
		if i > 0 {
			rel, _ := filepath.Rel(ds[0], d)
			where = "directory " + rel
		}
		for _, name := range []string{"AGENTS.md", "CLAUDE.md", "CLAUDE.local.md"} {
			srcs = append(srcs, source{filepath.Join(d, name), ds[0], where, false})
		}
	}
	l := &loader{opts: opts, seen: map[string]bool{}, stack: map[string]bool{}}
	for _, s := range srcs {
		l.read(s, 0, "")
	}

	var res Result
	res.Notes = l.notes
	var b strings.Builder
	used := 0
	for i, f := range l.files {
		text := l.texts[i]
		header := fmt.Sprintf("## %s\n\n", f.Path)
		if strings.HasPrefix(f.Why, "imported") {
			header = fmt.Sprintf("## %s (%s)\n\n", f.Path, f.Why)
		}
		room := max - used - len(header)
		if room <= 0 {
			f.Omitted = len(text)
			res.Truncated = true
			res.Files = append(res.Files, f)
			continue
		}
		if len(text) > room {
			cut := room
			for cut > 0 && !utf8Start(text[cut]) {
				cut--
			}
			f.Omitted = len(text) - cut
			text = text[:cut]
			res.Truncated = true
		}
		b.WriteString(header)
		b.WriteString(text)
		b.WriteString("\n\n")
		used += len(header) + len(text) + 2
		res.Files = append(res.Files, f)
	}
	if b.Len() == 0 {
		return res, l.problems
	}
	out := "# Project instructions\n\nThe user and the repository give these instructions; follow them.\n\n" + strings.TrimRight(b.String(), "\n")
	if res.Truncated {
		var cut []string
		for _, f := range res.Files {
			if f.Omitted > 0 {
				cut = append(cut, fmt.Sprintf("%s (%d of %d bytes omitted)", f.Path, f.Omitted, f.Bytes))
			}
		}
		out += fmt.Sprintf("\n\n[Instructions truncated at %d KiB: %s. Read the files for the rest.]", max>>10, strings.Join(cut, ", "))
	}
	res.Text = out
	return res, l.problems
}

// read reads one file (once), then the files it imports.
func (l *loader) read(s source, depth int, importer string) {
	p := filepath.Clean(s.path)
	if l.seen[p] {
		return
	}
	l.seen[p] = true
	// A regular file that does not link out of its tree, at most 1 MiB: a link to
	// ~/.ssh/id_rsa, a FIFO or /dev/zero is refused and never read.
	data, err := safefile.ReadBeneath(s.within, p, safefile.MaxInstructions)
	if errors.Is(err, fs.ErrNotExist) {
		if importer != "" {
			l.note(importer, fmt.Sprintf("@%s not found", rel(s.within, p)))
		}
		return
	}
	if err != nil {
		if h := errs.HintOf(err); h != "" {
			err = fmt.Errorf("%w (%s)", err, h)
		}
		l.problems = append(l.problems, fmt.Errorf("instructions left out: %w", err))
		return
	}
	if l.opts.Denied != nil && !s.home && importer == "" {
		// The repository's own AGENTS.md / CLAUDE.md may itself be a link, within its
		// tree, to a file the read rules deny (CLAUDE.md -> .env): judged like an
		// import, by where it leads, after ReadBeneath has refused links out of the
		// tree (with its own message). What was read is dropped. (Imports were judged
		// by resolve; the user's own global files are not the repository's to point
		// elsewhere.)
		if why := l.opts.Denied(p); why != "" {
			l.problems = append(l.problems, fmt.Errorf("instructions left out: %s: the policy denies reading it (%s)", p, why))
			return
		}
	}
	text := strings.TrimSpace(string(data))
	if text == "" {
		return
	}
	why := s.why
	if importer != "" {
		why = "imported by " + importer
	}
	l.files = append(l.files, File{Path: p, Bytes: len(text), Why: why})
	l.texts = append(l.texts, text)
	l.stack[p] = true
	defer delete(l.stack, p)
	for _, imp := range imports(text) {
		target, ok := l.resolve(s, p, imp)
		if !ok {
			continue
		}
		if depth+1 > MaxImportDepth {
			l.note(p, fmt.Sprintf("@%s not followed: imports nest deeper than %d", imp, MaxImportDepth))
			continue
		}
		next := source{target, s.within, s.why, s.home}
		if s.home && l.opts.Home != "" {
			next.within = l.opts.Home
		}
		l.read(next, depth+1, p)
	}
}

// resolve turns an import into a path inside the importing file's tree.
func (l *loader) resolve(s source, from, imp string) (string, bool) {
	var target string
	switch {
	case strings.HasPrefix(imp, "~/"):
		if !s.home || l.opts.Home == "" {
			l.note(from, fmt.Sprintf("@%s not followed: ~ imports are read from your own files only, not the repository's", imp))
			return "", false
		}
		target = filepath.Join(l.opts.Home, imp[2:])
	case filepath.IsAbs(imp):
		target = imp
	default:
		target = filepath.Join(filepath.Dir(from), imp)
	}
	target = filepath.Clean(target)
	within := s.within
	if s.home && l.opts.Home != "" {
		// The user's own files may import from anywhere in their home.
		within = l.opts.Home
	}
	if !inside(within, target) {
		l.note(from, fmt.Sprintf("@%s not followed: it is outside %s", imp, within))
		return "", false
	}
	if l.opts.Denied != nil {
		if why := l.opts.Denied(target); why != "" {
			l.note(from, fmt.Sprintf("@%s not followed: the policy denies reading it (%s)", imp, why))
			return "", false
		}
	}
	if l.stack[target] {
		l.note(from, fmt.Sprintf("@%s not followed: it imports itself (a cycle)", imp))
		return "", false
	}
	if l.seen[target] {
		// Already included: once is enough.
		return "", false
	}
	return target, true
}

func (l *loader) note(file, msg string) {
	l.notes = append(l.notes, file+": "+msg)
}

// importRE finds @path tokens: at the start of a line or after a space, a path-like
// word (Claude Code's import syntax). Mentions such as @alice that name no file are
// skipped silently by the caller's not-found handling.
var importRE = regexp.MustCompile(`(?m)(?:^|[\s(])@((?:~/|\.{1,2}/|/)?[A-Za-z0-9_.\-][A-Za-z0-9_./\-]*)`)

// imports lists a file's @path imports, outside code spans and fenced blocks.
func imports(text string) []string {
	var out []string
	fence := false
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		line = stripCodeSpans(line)
		for _, m := range importRE.FindAllStringSubmatch(line, -1) {
			p := strings.TrimRight(m[1], ".,;:)")
			// An import names a file: something with an extension or a path.
			if p == "" || (!strings.Contains(p, ".") && !strings.Contains(p, "/")) {
				continue
			}
			out = append(out, p)
		}
	}
	return out
}

func stripCodeSpans(line string) string {
	var b strings.Builder
	in := false
	for _, r := range line {
		if r == '`' {
			in = !in
			continue
		}
		if !in {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func inside(root, p string) bool {
	r, err := filepath.Rel(root, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil {
		return r
	}
	return p
}

// dirs lists root, then each directory down to cwd. Outside root only cwd.
func dirs(root, cwd string) []string {
	if cwd == "" {
		cwd = root
	}
	if root == "" {
		return []string{cwd}
	}
	r, err := filepath.Rel(root, cwd)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return []string{cwd}
	}
	out := []string{root}
	if r == "." {
		return out
	}
	d := root
	for _, part := range strings.Split(r, string(filepath.Separator)) {
		d = filepath.Join(d, part)
		out = append(out, d)
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
