package workspace

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/lovia-dev/lovia/internal/textutil"

	"github.com/bmatcuk/doublestar/v4"
)

// Limits of the file tools.
const (
	MaxReadChars     = 50_000
	DefaultReadLines = 2000
	maxLineChars     = 2000
	maxFileBytes     = 64 << 20
	DefaultListLimit = 1000
	// MaxWriteBytes bounds what write_file and edit_file hold in memory: the new
	// content, the file they replace, and the result of an edit.
	MaxWriteBytes = 10 << 20
)

// UserError is a failure the model can fix (bad path, no match); tools return it as
// an error result rather than a tool failure.
type UserError struct{ Msg string }

func (e *UserError) Error() string { return e.Msg }

func userErr(format string, args ...any) error { return &UserError{Msg: fmt.Sprintf(format, args...)} }

func stampOf(fi os.FileInfo, data []byte) stamp {
	return stamp{mod: fi.ModTime(), size: fi.Size(), hash: sha256.Sum256(data)}
}

func (w *Workspace) remember(abs string, st stamp) {
	w.mu.Lock()
	w.reads[abs] = st
	w.mu.Unlock()
}

// stale reports whether abs changed since the agent last read (or wrote) it.
func (w *Workspace) stale(abs string, fi os.FileInfo, data []byte) bool {
	w.mu.Lock()
	st, ok := w.reads[abs]
	w.mu.Unlock()
	if !ok {
		return false
	}
	if st.mod.Equal(fi.ModTime()) && st.size == fi.Size() {
		return false
	}
	return sha256.Sum256(data) != st.hash
}

// rel shows abs relative to the root when inside it.
func (w *Workspace) rel(abs string) string {
	if r, ok := relInside(w.policy.root, abs); ok {
		return r
	}
	return abs
}

func isBinary(data []byte) bool {
	head := data
	if len(head) > 8000 {
		head = head[:8000]
	}
	return bytes.IndexByte(head, 0) >= 0
}

// ReadFile returns lines [offset, offset+limit) (1-based) of path with line numbers,
// capped at MaxReadChars. It refuses binary and non-UTF-8 files.
func (w *Workspace) ReadFile(path string, offset, limit int, approved bool) (string, error) {
	return w.readFile(path, offset, limit, fixedGate(approved))
}

func (w *Workspace) readFile(path string, offset, limit int, g gate) (string, error) {
	abs, _, err := w.checkPath(path, OpRead, g)
	if err != nil {
		return "", err
	}
	f, err := w.safeOpen(abs, os.O_RDONLY, 0, forTool)
	if err != nil {
		return "", fileErr("read", path, err)
	}
	data, fi, _, err := readOpened(f, maxFileBytes)
	f.Close()
	if fi != nil && fi.IsDir() {
		return "", userErr("%s is a directory; use list_files to see its contents", path)
	}
	var big *errTooBig
	if errors.As(err, &big) {
		return "", userErr("%s is %s, too large to read (the limit is %s); use grep_files or shell (e.g. sed -n '100,200p')", path, textutil.Bytes(big.size), textutil.Bytes(big.limit))
	}
	if err != nil {
		return "", fileErr("read", path, err)
	}
	if isBinary(data) {
		return "", userErr("%s is a binary file (%d bytes); read_file shows text only", path, len(data))
	}
	if !utf8.Valid(data) {
		return "", userErr("%s is not valid UTF-8 text; use shell (e.g. iconv or xxd) to inspect it", path)
	}
	w.remember(abs, stampOf(fi, data))
	if len(data) == 0 {
		return fmt.Sprintf("(%s is empty)", path), nil
	}
	if offset < 1 {
		offset = 1
	}
	if limit <= 0 {
		limit = DefaultReadLines
	}
	// Work on the bytes read (no string copy or line slice of the whole file): a
	// 64 MiB file costs 64 MiB, not three times that.
	total := bytes.Count(data, []byte{'\n'})
	if data[len(data)-1] != '\n' {
		total++
	}
	if offset > total {
		return "", userErr("%s has %d lines; offset %d is past the end", path, total, offset)
	}
	pos := 0
	for i := 1; i < offset; i++ {
		pos += bytes.IndexByte(data[pos:], '\n') + 1
	}
	var b strings.Builder
	last := offset - 1
	cut := false
	for i := offset - 1; i < total && i < offset-1+limit; i++ {
		end := bytes.IndexByte(data[pos:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += pos
		}
		line := bytes.TrimRight(data[pos:end], "\r")
		pos = end + 1
		var entry string
		if n := utf8.RuneCount(line); n > maxLineChars {
			cutAt := 0
			for k := 0; k < maxLineChars; k++ {
				_, size := utf8.DecodeRune(line[cutAt:])
				cutAt += size
			}
			entry = fmt.Sprintf("%6d\t%s [... line truncated, %d more characters]\n", i+1, line[:cutAt], n-maxLineChars)
		} else {
			entry = fmt.Sprintf("%6d\t%s\n", i+1, line)
		}
		if b.Len()+len(entry) > MaxReadChars && i >= offset {
			cut = true
			break
		}
		b.WriteString(entry)
		last = i + 1
	}
	if last < total {
		why := ""
		if cut {
			why = fmt.Sprintf(" (output capped at %d characters)", MaxReadChars)
		}
		fmt.Fprintf(&b, "[showing lines %d-%d of %d%s; continue with offset=%d]\n", offset, last, total, why, last+1)
	}
	return b.String(), nil
}

// ListOptions select what list_files returns.
type ListOptions struct {
	Path    string // directory; "" = root
	Pattern string // doublestar glob relative to Path; "" = everything
	Hidden  bool
	Limit   int
}

// walkEntry is one file or directory met by a walk.
type walkEntry struct {
	abs, rel string // rel: relative to the walk's start, slash-separated
	isDir    bool
	link     bool // a symlink (to a directory: listed, never descended)
}

// walk visits the tree under start (resolved, allowed) in lexical order, skipping
// .git, hidden entries (unless hidden), .gitignore'd entries, and symlinks whose
// target the policy would not simply allow. fn returns false to stop.
func (w *Workspace) walk(start string, hidden bool, fn func(e walkEntry) bool) {
	rootRel, inRoot := relInside(w.policy.root, start)
	var chain ignoreChain
	if inRoot {
		// .gitignore files of the parents of start apply too.
		dir := w.policy.root
		chain = rootIgnores(dir)
		if rootRel != "." {
			parts := strings.Split(rootRel, "/")
			for i := range parts[:len(parts)-1] {
				rel := strings.Join(parts[:i+1], "/")
				chain = chain.with(w.policy.root+"/"+rel, rel)
			}
			chain = chain.with(start, rootRel)
		}
	} else {
		chain = chain.with(start, "")
	}
	base := ""
	if inRoot && rootRel != "." {
		base = rootRel
	}
	var visit func(dir, rel string, chain ignoreChain) bool
	visit = func(dir, rel string, chain ignoreChain) bool {
		ents := w.readDir(dir)
		for _, de := range ents {
			name := de.Name()
			if name == ".git" || !hidden && strings.HasPrefix(name, ".") {
				continue
			}
			abs := dir + "/" + name
			r := name
			if rel != "" {
				r = rel + "/" + name
			}
			ignRel := r
			if base != "" {
				ignRel = base + "/" + r
			}
			isDir := de.IsDir()
			if de.Type()&fs.ModeSymlink != 0 {
				target, ok := w.walkLink(abs)
				if !ok {
					continue
				}
				fi, err := os.Lstat(target)
				if err != nil {
					continue
				}
				isDir = false // never descend through links (no cycles, no escapes)
				if fi.IsDir() {
					if !fn(walkEntry{abs: abs, rel: r, isDir: true, link: true}) {
						return false
					}
					continue
				}
			}
			if chain.ignored(ignRel, isDir) {
				continue
			}
			if w.policy.quickRead(abs, name) == Deny {
				continue
			}
			if !fn(walkEntry{abs: abs, rel: r, isDir: isDir}) {
				return false
			}
			if isDir {
				if !visit(abs, r, chain.with(abs, ignRel)) {
					return false
				}
			}
		}
		return true
	}
	visit(start, "", chain)
}

// ListFiles lists files under opts.Path matching opts.Pattern, respecting .gitignore.
func (w *Workspace) ListFiles(opts ListOptions, approved bool) (string, error) {
	return w.listFiles(opts, fixedGate(approved))
}

func (w *Workspace) listFiles(opts ListOptions, g gate) (string, error) {
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
		return "", fileErr("list", p, err)
	}
	if !fi.IsDir() {
		return "", userErr("%s is a file, not a directory; use read_file", p)
	}
	pat := strings.TrimPrefix(opts.Pattern, "./")
	if pat != "" && !doublestar.ValidatePattern(pat) {
		return "", userErr("invalid glob %q (use e.g. **/*.go)", opts.Pattern)
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultListLimit
	}
	var out []string
	more := false
	w.walk(abs, opts.Hidden, func(e walkEntry) bool {
		if pat != "" && !doublestar.MatchUnvalidated(pat, e.rel) {
			return true
		}
		if pat == "" && e.isDir && !e.link {
			return true // directories show through their files
		}
		if len(out) >= limit {
			more = true
			return false
		}
		name := showRel(e.rel)
		if e.isDir {
			name += "/"
		}
		out = append(out, name)
		return true
	})
	sort.Strings(out)
	if len(out) == 0 {
		return fmt.Sprintf("no files match in %s", p), nil
	}
	s := strings.Join(out, "\n") + "\n"
	if more {
		s += fmt.Sprintf("[stopped at %d entries; narrow with path or pattern]\n", limit)
	}
	return s, nil
}

// WriteFile creates or overwrites path with content. createOnly refuses an existing
// file; overwriting a file changed since the agent read it is refused.
func (w *Workspace) WriteFile(path, content string, createOnly, approved bool) (string, error) {
	text, _, err := w.writeFile(path, content, createOnly, fixedGate(approved))
	return text, err
}

// writeFile also returns the change as a unified diff for front ends ("" when the
// old content may not be read).
func (w *Workspace) writeFile(path, content string, createOnly bool, g gate) (string, string, error) {
	if len(content) > MaxWriteBytes {
		return "", "", userErr("the content for %s is %s, over write_file's limit of %s; write large files with a shell command (e.g. a generator script)", path, textutil.Bytes(int64(len(content))), textutil.Bytes(MaxWriteBytes))
	}
	abs, _, err := w.checkPath(path, OpWrite, g)
	if err != nil {
		return "", "", err
	}
	t, err := w.openTarget(abs, true)
	if err != nil {
		return "", "", fileErr("write", path, err)
	}
	defer t.Close()
	old, fi, exists, err := t.readExisting(MaxWriteBytes)
	if err != nil {
		return "", "", limitErr("write_file overwrites", path, err)
	}
	if exists && createOnly {
		return "", "", userErr("%s already exists (create_only is set); use edit_file to change it", path)
	}
	if exists && w.stale(abs, fi, old) {
		return "", "", userErr("%s was modified since you last read it; read it again before overwriting", path)
	}
	mode := os.FileMode(0o644)
	if exists {
		mode = fi.Mode().Perm()
	}
	nfi, err := t.replace([]byte(content), mode, exists)
	if err != nil {
		return "", "", fileErr("write", path, err)
	}
	w.remember(abs, stampOf(nfi, []byte(content)))
	verb := "created"
	if exists {
		verb = "overwrote"
	}
	diff := ""
	if d, _ := w.policy.DecidePath(abs, OpRead); d != Deny {
		diff = UnifiedDiff(w.rel(abs), string(old), content)
	}
	return fmt.Sprintf("%s %s (%d bytes, %d lines)", verb, w.rel(abs), len(content), len(splitLines(content))), diff, nil
}

// fileErr turns an open or write failure into a message for the model.
func fileErr(verb, path string, err error) error {
	var ue *UserError
	if errors.As(err, &ue) {
		return err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return userErr("cannot %s %s: %v", verb, path, err)
}

// limitErr explains a file over MaxWriteBytes, or is fileErr.
func limitErr(what, path string, err error) error {
	var big *errTooBig
	if errors.As(err, &big) {
		return userErr("%s is %s; %s files up to %s only; change it with a shell command instead (e.g. sed -i or a script)", path, textutil.Bytes(big.size), what, textutil.Bytes(big.limit))
	}
	return fileErr("read", path, err)
}

// planEdit computes the new content of an edit without writing it.
func planEdit(content, oldS, newS string, replaceAll bool, path string) (string, int, error) {
	if oldS == "" {
		return "", 0, userErr("old_string is empty; use write_file to create or replace a whole file")
	}
	if oldS == newS {
		return "", 0, userErr("old_string and new_string are identical; nothing to change")
	}
	// CRLF files: match and insert with the file's line endings.
	if strings.Contains(content, "\r\n") {
		oldS = toCRLF(oldS)
		newS = toCRLF(newS)
	}
	n := strings.Count(content, oldS)
	if n > 0 && len(newS) > len(oldS) {
		if grow := int64(len(newS)-len(oldS)) * int64(n); int64(len(content))+grow > MaxWriteBytes {
			return "", 0, userErr("the edit would make %s %s, over edit_file's limit of %s; make this change with a shell command", path, textutil.Bytes(int64(len(content))+grow), textutil.Bytes(MaxWriteBytes))
		}
	}
	switch {
	case n == 0:
		hint := ""
		if strings.Contains(content, strings.TrimSpace(oldS)) {
			hint = " (it matches when leading/trailing whitespace is ignored: copy the exact indentation)"
		}
		return "", 0, userErr("old_string was not found in %s%s; read the file and copy the text exactly", path, hint)
	case n > 1 && !replaceAll:
		return "", 0, userErr("old_string occurs %d times in %s; include more surrounding lines to make it unique, or set replace_all", n, path)
	}
	if replaceAll {
		return strings.ReplaceAll(content, oldS, newS), n, nil
	}
	return strings.Replace(content, oldS, newS, 1), 1, nil
}

func toCRLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

// EditFile replaces old with new in path (exactly one match unless replaceAll) and
// returns a unified diff. It refuses a file changed since the agent last read it.
func (w *Workspace) EditFile(path, oldS, newS string, replaceAll, approved bool) (string, error) {
	text, _, err := w.editFile(path, oldS, newS, replaceAll, fixedGate(approved))
	return text, err
}

// editFile also returns the change as a unified diff (the same one its text shows
// the model) for front ends.
func (w *Workspace) editFile(path, oldS, newS string, replaceAll bool, g gate) (string, string, error) {
	if len(newS) > MaxWriteBytes {
		return "", "", userErr("new_string is %s, over edit_file's limit of %s; make large changes with a shell command", textutil.Bytes(int64(len(newS))), textutil.Bytes(MaxWriteBytes))
	}
	abs, _, err := w.checkPath(path, OpWrite, g)
	if err != nil {
		return "", "", err
	}
	if d, why := w.policy.DecidePath(abs, OpRead); d == Deny {
		// An edit reads the file: its diff shows the lines around the change, and
		// whether old_string is found tells what the file holds. A file the rules
		// let the agent write but not read is replaced whole or not at all.
		return "", "", userErr("cannot edit %s: edit_file reads the file, and the policy denies reading it (%s); replace it with write_file if it should change", path, why)
	}
	t, err := w.openTarget(abs, false)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", userErr("%s does not exist; use write_file to create it", path)
	}
	if err != nil {
		return "", "", fileErr("edit", path, err)
	}
	defer t.Close()
	data, fi, exists, err := t.readExisting(MaxWriteBytes)
	if err != nil {
		return "", "", limitErr("edit_file edits", path, err)
	}
	if !exists {
		return "", "", userErr("%s does not exist; use write_file to create it", path)
	}
	if isBinary(data) || !utf8.Valid(data) {
		return "", "", userErr("%s is not a UTF-8 text file; edit_file changes text only", path)
	}
	if w.stale(abs, fi, data) {
		return "", "", userErr("%s was modified since you last read it; read it again, then redo the edit", path)
	}
	updated, n, err := planEdit(string(data), oldS, newS, replaceAll, path)
	if err != nil {
		return "", "", err
	}
	nfi, err := t.replace([]byte(updated), fi.Mode().Perm(), true)
	if err != nil {
		return "", "", fileErr("write", path, err)
	}
	w.remember(abs, stampOf(nfi, []byte(updated)))
	diff := UnifiedDiff(w.rel(abs), string(data), updated)
	return fmt.Sprintf("edited %s (%d replacement%s)\n%s", w.rel(abs), n, plural(n), diff), diff, nil
}

// PreviewWrite / PreviewEdit give the diff an approval shows.
func (w *Workspace) PreviewWrite(path, content string) string {
	abs, err := w.policy.resolve(path, "")
	if err != nil || len(content) > MaxWriteBytes {
		return ""
	}
	if d, _ := w.policy.DecidePath(abs, OpRead); d == Deny {
		return "" // never show what may not be read, not even in a diff
	}
	old, _, _, _ := w.readJudged(abs, MaxWriteBytes)
	return UnifiedDiff(w.rel(abs), string(old), content)
}

func (w *Workspace) PreviewEdit(path, oldS, newS string, replaceAll bool) string {
	abs, err := w.policy.resolve(path, "")
	if err != nil {
		return ""
	}
	if d, _ := w.policy.DecidePath(abs, OpRead); d == Deny {
		return ""
	}
	data, _, ok, err := w.readJudged(abs, MaxWriteBytes)
	if !ok || err != nil {
		return ""
	}
	updated, _, err := planEdit(string(data), oldS, newS, replaceAll, path)
	if err != nil {
		return ""
	}
	return UnifiedDiff(w.rel(abs), string(data), updated)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// readDir lists the directory dir (resolved, allowed) through safeOpen, in name
// order; nil when it cannot be read.
func (w *Workspace) readDir(dir string) []os.DirEntry {
	f, err := w.safeOpen(dir, os.O_RDONLY|dirFlag, 0, forWalk)
	if err != nil {
		return nil
	}
	ents, _ := f.ReadDir(-1)
	f.Close()
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	return ents
}

// walkLink judges a symlink met by a walk: the resolved target when the policy
// plainly allows reading it.
func (w *Workspace) walkLink(abs string) (string, bool) {
	target, err := resolvePath(abs, w.policy.root)
	if err != nil {
		return "", false
	}
	if d, _ := w.policy.DecidePath(target, OpRead); d != Allow {
		return "", false
	}
	return target, true
}

// statJudged is the stat of a judged path as safeOpen reaches it.
func (w *Workspace) statJudged(abs string) (os.FileInfo, error) {
	f, err := w.safeOpen(abs, os.O_RDONLY, 0, forTool)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Stat()
}
