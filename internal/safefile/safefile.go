// Package safefile reads the files lovia reads for itself (instructions, memory
// notes, skills, presets, config) and the files a user names on the command line,
// without letting the file decide how much is read or what is read.
//
// Files lovia finds on its own (ReadBeneath) must be regular files that resolve
// inside a root directory: a FIFO, a device, a socket, or a link leading out of the
// root (to ~/.ssh/id_rsa, /dev/zero) is refused, never opened for reading, and never
// waited on. Files the user names (ReadNamed) may be links, pipes or devices — the
// user chose them — but are read only up to a cap.
//
// Every refusal is an *errs.Error of kind KindConfig whose message names the file and
// the limit and whose hint says the fix; errors.Is matches ErrTooLarge,
// ErrNotRegular or ErrOutsideRoot, and a missing file still matches fs.ErrNotExist.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/lovia-dev/lovia/internal/errs"
)

// Caps on the files lovia reads. They are far above what a real file needs and far
// below what would hurt: each exists so a hostile or mistaken file fails fast with a
// clear message instead of taking the memory of the machine.
const (
	MaxConfig       = 1 << 20   // config.yaml (user and project)
	MaxPreset       = 1 << 20   // one preset file
	MaxScript       = 16 << 20  // a script: provider file
	MaxEvalCases    = 16 << 20  // a lovia eval cases file
	MaxOutputSchema = 1 << 20   // --output-schema
	MaxNotes        = 1 << 20   // one MEMORY.md (the prompt keeps far less)
	MaxSkillFile    = 256 << 10 // SKILL.md and the files read_skill_file returns
	MaxInstructions = 1 << 20   // one AGENTS.md / CLAUDE.md (the prompt keeps 32 KiB)
)

var (
	// ErrTooLarge: the file is larger than the cap.
	ErrTooLarge = errors.New("over the size limit")
	// ErrNotRegular: the file is a FIFO, device, socket or directory.
	ErrNotRegular = errors.New("not a regular file")
	// ErrOutsideRoot: the path, or a link on it, leads out of the root directory.
	ErrOutsideRoot = errors.New("links outside its directory")
)

// ReadBeneath reads path, which must lie inside root, as a regular file of at most
// limit bytes. Symbolic links are followed only while they stay inside root (on Linux
// the kernel enforces it with openat2 RESOLVE_BENEATH; elsewhere each component is
// checked). The file is opened non-blocking, so a FIFO is refused instead of hanging.
func ReadBeneath(root, path string, limit int64) ([]byte, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, refuse(path, err, "", "")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, refuse(path, err, "", "")
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || !local(rel) {
		return nil, outside(path, root)
	}
	f, err := openBeneath(root, rel)
	if err != nil {
		if errors.Is(err, ErrOutsideRoot) {
			return nil, outside(path, root)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, refuse(path, err, "cannot open "+show(path), "make the file readable or remove it")
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, refuse(path, err, "cannot stat "+show(path), "")
	}
	if !st.Mode().IsRegular() {
		return nil, &errs.Error{Kind: errs.KindConfig, Err: ErrNotRegular,
			Msg:  fmt.Sprintf("%s is %s, not a regular file; lovia reads only regular files here", show(path), kindOf(st.Mode())),
			Hint: "replace " + show(path) + " with a regular file, or remove it"}
	}
	return readCapped(f, path, st.Size(), limit, "shorten "+show(path)+" below "+Size(limit)+" (or remove it)")
}

// ReadNamed reads a file the user named (a flag value, a script: path), following
// links and accepting pipes and devices (`--output-schema <(…)`, /dev/stdin), but at
// most limit bytes: /dev/urandom fails at the cap. A directory is refused.
func ReadNamed(path string, limit int64) ([]byte, error) {
	f, err := openNamed(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, refuse(path, err, "cannot stat "+show(path), "")
	}
	if st.IsDir() {
		return nil, &errs.Error{Kind: errs.KindConfig, Err: ErrNotRegular,
			Msg: show(path) + " is a directory, not a regular file", Hint: "name a file"}
	}
	size := int64(-1)
	if st.Mode().IsRegular() {
		size = st.Size()
	}
	return readCapped(f, path, size, limit, "name a file smaller than "+Size(limit))
}

// readCapped reads at most limit bytes of f; size is what fstat said (-1: unknown). A
// file that grows past the cap while being read is refused too.
func readCapped(f *os.File, path string, size, limit int64, hint string) ([]byte, error) {
	if size > limit {
		return nil, tooLarge(path, limit, hint)
	}
	buf := make([]byte, 0, min(limit, max(size, 0))+1)
	data, err := readAll(io.LimitReader(f, limit+1), buf)
	if err != nil {
		return nil, refuse(path, err, "cannot read "+show(path), "make the file readable or remove it")
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(path, limit, hint)
	}
	return data, nil
}

// readAll is io.ReadAll starting from buf (so a sized file needs one allocation).
func readAll(r io.Reader, buf []byte) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

func tooLarge(path string, limit int64, hint string) error {
	return &errs.Error{Kind: errs.KindConfig, Err: ErrTooLarge,
		Msg:  fmt.Sprintf("%s is over the size limit (%s)", show(path), Size(limit)),
		Hint: hint}
}

func outside(path, root string) error {
	return &errs.Error{Kind: errs.KindConfig, Err: ErrOutsideRoot,
		Msg:  fmt.Sprintf("%s links outside its directory (%s); lovia does not follow it", show(path), show(root)),
		Hint: "replace the link with a regular file inside " + show(root) + ", or remove it"}
}

func refuse(path string, err error, msg, hint string) error {
	if msg == "" {
		msg = show(path)
	}
	return &errs.Error{Kind: errs.KindConfig, Err: err, Msg: msg, Hint: hint}
}

// Size says n bytes in the unit a person would use for a cap.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a special file"
}

// local reports rel (from filepath.Rel) stays inside its base.
func local(rel string) bool {
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// show quotes a path only when it holds characters a terminal would interpret, so a
// file name cannot smuggle control sequences into a warning.
func show(p string) string {
	for _, r := range p {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\ufffd' {
			return strconv.Quote(p)
		}
	}
	return p
}

// within reports target (resolved) lies inside root (resolved).
func within(root, target string) bool {
	rel, err := filepath.Rel(root, target)
	return err == nil && local(rel)
}

// openBeneathPortable resolves every link with EvalSymlinks, checks the result stays
// inside the resolved root, and opens it without following a final link. A link
// swapped in between the check and the open is the remaining (racy) gap where the
// kernel offers no beneath-resolution.
func openBeneathPortable(root, rel string) (*os.File, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	target, err := filepath.EvalSymlinks(filepath.Join(root, rel))
	if err != nil {
		// A dangling link (or one into a missing directory) reads as absent.
		return nil, err
	}
	if !within(realRoot, target) {
		return nil, ErrOutsideRoot
	}
	return openNoFollow(target)
}
