package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"unicode/utf8"
)

// AttachFile reads up to limit bytes of a text file for the user's @path mention in
// the chat prompt. The path is judged like read_file's (an Ask is a refusal: nobody
// is there to approve it) and opened the same safe way, so a symlink planted in the
// repository cannot attach a file the policy would not let the agent read. truncated
// reports that the file is longer than limit; the text then ends on a whole rune.
func (w *Workspace) AttachFile(path string, limit int) (text string, truncated bool, err error) {
	abs, _, err := w.checkPath(path, OpRead, fixedGate(false))
	if err != nil {
		return "", false, err
	}
	f, err := w.safeOpen(abs, os.O_RDONLY, 0, forTool)
	if errors.Is(err, fs.ErrNotExist) {
		// Told apart from other failures: "@alice" in a sentence is no file mention.
		return "", false, fmt.Errorf("%s: %w", path, fs.ErrNotExist)
	}
	if err != nil {
		return "", false, fileErr("read", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", false, fileErr("read", path, err)
	}
	if fi.IsDir() {
		return "", false, userErr("%s is a directory", path)
	}
	if !fi.Mode().IsRegular() {
		return "", false, userErr("%s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return "", false, fileErr("read", path, err)
	}
	if len(data) > limit {
		data, truncated = data[:limit], true
		for len(data) > 0 && !utf8.Valid(data) && len(data) > limit-utf8.UTFMax {
			data = data[:len(data)-1]
		}
	}
	if isBinary(data) {
		return "", false, userErr("%s is a binary file; only text files can be attached", path)
	}
	if !utf8.Valid(data) {
		return "", false, userErr("%s is not valid UTF-8 text", path)
	}
	if !truncated {
		w.remember(abs, stampOf(fi, data)) // as read_file does: the agent may edit it now
	}
	return string(data), truncated, nil
}
