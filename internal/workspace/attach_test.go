package workspace

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
)

// AttachFile (the chat's @path) reads what read_file may read, the same safe way:
// a symlink out of the workspace, a credential file or a file outside attach nothing;
// a missing file is fs.ErrNotExist; a long file is cut on a rune boundary.
func TestAttachFile(t *testing.T) {
	e := newTestEnv(t)
	w := newWS(t, e, PresetCoding, SandboxOff)
	text, cut, err := w.AttachFile("src/main.go", 1<<10)
	if err != nil || cut || text != "package main\n\nfunc main() {}\n" {
		t.Fatalf("src/main.go: %q %v %v", text, cut, err)
	}
	if err := os.Symlink(e.home+"/.ssh/id_rsa", e.root+"/innocent.md"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"innocent.md", e.home + "/.ssh/id_rsa", ".env", "link_out/passwd", "/etc/passwd", "src"} {
		if text, _, err := w.AttachFile(p, 1<<10); err == nil {
			t.Errorf("%s attached: %q", p, text)
		}
	}
	if _, _, err := w.AttachFile("nope.txt", 1<<10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	write(t, e.root+"/long.txt", strings.Repeat("é", 100))
	text, cut, err = w.AttachFile("long.txt", 51)
	if err != nil || !cut || text != strings.Repeat("é", 25) {
		t.Fatalf("long.txt: %q %v %v", text, cut, err)
	}
	write(t, e.root+"/bin.dat", "a\x00b")
	if _, _, err := w.AttachFile("bin.dat", 1<<10); err == nil {
		t.Errorf("a binary file was attached")
	}
}

// AttachImage reads images as AttachFile reads text: by content type, through the
// policy and the safe open, so a symlink to a denied file attaches nothing.
func TestAttachImage(t *testing.T) {
	e := newTestEnv(t)
	w := newWS(t, e, PresetCoding, SandboxOff)
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82"
	write(t, e.root+"/shot.dat", png) // no image extension: the content decides
	data, mime, err := w.AttachImage("shot.dat")
	if err != nil || mime != "image/png" || string(data) != png {
		t.Fatalf("shot.dat: %s %d bytes %v", mime, len(data), err)
	}
	write(t, e.home+"/secret.png", png)
	if err := os.Symlink(e.home+"/secret.png", e.root+"/innocent.png"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(e.home+"/.ssh/id_rsa", e.root+"/key.png"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"innocent.png", "key.png", e.home + "/secret.png", "src"} {
		if data, _, err := w.AttachImage(p); err == nil {
			t.Errorf("%s attached: %d bytes", p, len(data))
		}
	}
	if _, _, err := w.AttachImage("src/main.go"); !errors.Is(err, ErrNotImage) {
		t.Errorf("text file: %v, want ErrNotImage", err)
	}
	if _, _, err := w.AttachImage("nope.png"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v, want fs.ErrNotExist", err)
	}
}
