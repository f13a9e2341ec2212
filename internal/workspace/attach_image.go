package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/lovia-dev/lovia/internal/imagefit"
)

// ErrNotImage is returned (wrapped) by AttachImage for a file that is not an image,
// so a caller can fall back to attaching it as text.
var ErrNotImage = imagefit.ErrNotImage

// AttachImage reads an image the user named (@shot.png, run --image, a pasted path)
// the way AttachFile reads text: judged like read_file (an Ask is a refusal) and
// opened the safe way, so a symlink planted in the repository cannot attach a file
// the policy would not let the agent read. The type comes from the content, not the
// name; the header is checked before anything is decoded (imagefit.Check). It
// returns the bytes as they are and their MIME type; fitting them to a provider's
// limits is the provider's business.
func (w *Workspace) AttachImage(path string) (data []byte, mime string, err error) {
	abs, _, err := w.checkPath(path, OpRead, fixedGate(false))
	if err != nil {
		return nil, "", err
	}
	f, err := w.safeOpen(abs, os.O_RDONLY, 0, forTool)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("%s: %w", path, fs.ErrNotExist)
	}
	if err != nil {
		return nil, "", fileErr("read", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, "", fileErr("read", path, err)
	}
	if fi.IsDir() {
		return nil, "", userErr("%s is a directory", path)
	}
	if !fi.Mode().IsRegular() {
		return nil, "", userErr("%s is not a regular file", path)
	}
	// The first bytes say whether it is an image at all: a mention of a large log
	// file is told apart without reading it.
	head := make([]byte, 16)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, "", fileErr("read", path, err)
	}
	if imagefit.Sniff(head[:n]) == "" {
		return nil, "", fmt.Errorf("%s: %w", path, ErrNotImage)
	}
	if fi.Size() > imagefit.MaxFileBytes {
		return nil, "", userErr("%s is %d MiB; images up to %d MiB are attached", path, fi.Size()>>20, imagefit.MaxFileBytes>>20)
	}
	rest, err := io.ReadAll(io.LimitReader(f, imagefit.MaxFileBytes+1-int64(n)))
	data = append(head[:n:n], rest...)
	if err != nil {
		return nil, "", fileErr("read", path, err)
	}
	if len(data) > imagefit.MaxFileBytes {
		return nil, "", userErr("%s is larger than %d MiB; images up to that size are attached", path, imagefit.MaxFileBytes>>20)
	}
	in, err := imagefit.Check(data)
	if errors.Is(err, imagefit.ErrNotImage) {
		return nil, "", fmt.Errorf("%s: %w", path, ErrNotImage)
	}
	if err != nil {
		return nil, "", userErr("%s: %v", path, err)
	}
	return data, in.MIME, nil
}
