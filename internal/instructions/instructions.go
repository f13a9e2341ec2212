// Package instructions gathers project instructions for the system prompt: the
// user's global ~/.config/lovia/AGENTS.md, then AGENTS.md in each directory from the
// repository root down to the working directory (CLAUDE.md where a directory has no
// AGENTS.md), capped in size with a notice.
package instructions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/safefile"
)

// DefaultMaxBytes caps the combined instructions (32 KiB).
const DefaultMaxBytes = 32 << 10

// Options say where to look.
type Options struct {
	UserDir string // ~/.config/lovia ("" skips the global file)
	Root    string // repository root
	Cwd     string // working directory (inside Root; otherwise only Cwd is read)
	// MaxBytes caps the result (0 = DefaultMaxBytes).
	MaxBytes int
}

// File is one instructions file that was read.
type File struct {
	Path  string
	Bytes int
	// Omitted is how many bytes of it were cut by the cap.
	Omitted int
}

// Result is the combined instructions.
type Result struct {
	Text  string
	Files []File
	// Truncated reports the cap was hit.
	Truncated bool
}

// Load reads the instruction files. Unreadable or refused files (links out of their
// tree, FIFOs, devices, files over 1 MiB) are skipped with their error returned
// alongside, to be shown to the user (never fatal: instructions are advisory).
func Load(opts Options) (Result, []error) {
	max := opts.MaxBytes
	if max <= 0 {
		max = DefaultMaxBytes
	}
	// Each file is read beneath its tree: the user's config dir, or the repository
	// (the working directory when it is outside the repository).
	type candidate struct{ path, within string }
	var paths []candidate
	if opts.UserDir != "" {
		paths = append(paths, candidate{filepath.Join(opts.UserDir, "AGENTS.md"), opts.UserDir})
	}
	ds := dirs(opts.Root, opts.Cwd)
	for _, d := range ds {
		paths = append(paths, candidate{pick(d), ds[0]})
	}
	var res Result
	var problems []error
	var b strings.Builder
	used := 0
	seen := map[string]bool{}
	for _, c := range paths {
		p := c.path
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		// A regular file that does not link out of its tree, at most 1 MiB: a link to
		// ~/.ssh/id_rsa, a FIFO or /dev/zero is refused and never read.
		data, err := safefile.ReadBeneath(c.within, p, safefile.MaxInstructions)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			if h := errs.HintOf(err); h != "" {
				err = fmt.Errorf("%w (%s)", err, h)
			}
			problems = append(problems, fmt.Errorf("instructions left out: %w", err))
			continue
		}
		text := strings.TrimSpace(string(data))
		if text == "" {
			continue
		}
		header := fmt.Sprintf("## %s\n\n", p)
		f := File{Path: p, Bytes: len(text)}
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
		return res, problems
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
	return res, problems
}

// dirs lists root, then each directory down to cwd. Outside root only cwd.
func dirs(root, cwd string) []string {
	if cwd == "" {
		cwd = root
	}
	if root == "" {
		return []string{cwd}
	}
	rel, err := filepath.Rel(root, cwd)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return []string{cwd}
	}
	out := []string{root}
	if rel == "." {
		return out
	}
	d := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		d = filepath.Join(d, part)
		out = append(out, d)
	}
	return out
}

// pick returns AGENTS.md in d, or CLAUDE.md when there is no AGENTS.md.
func pick(d string) string {
	for _, name := range []string{"AGENTS.md", "CLAUDE.md"} {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return ""
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
