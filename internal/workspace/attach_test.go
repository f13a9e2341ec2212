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
