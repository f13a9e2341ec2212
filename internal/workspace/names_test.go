package workspace

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Names with control characters or bytes that are not UTF-8 are listed quoted (no
// raw control byte reaches the output) and the quoted form opens the file.
func TestListedNamesRoundTrip(t *testing.T) {
	root := t.TempDir()
	names := []string{"evil\x1b]0;pwned\x07.txt", "bad\xff\xfe.txt", "tab\there.txt", "\"quoted.txt", "bidi\u202eexe.txt", "plain.txt"}
	for i, n := range names {
		if err := os.WriteFile(filepath.Join(root, n), []byte("content-"+strconv.Itoa(i)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, err := New(Config{Root: root, Policy: PresetCoding, Sandbox: SandboxOff})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	list, err := w.ListFiles(ListOptions{}, false)
	if err != nil {
		t.Fatal(err)
	}
	grep, err := w.GrepFiles(t.Context(), GrepOptions{Pattern: "content-"}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{list, grep} {
		for _, bad := range []string{"\x1b", "\x07", "\xff", "\t", "\u202e"} {
			if strings.Contains(out, bad) {
				t.Errorf("output carries %q raw:\n%s", bad, out)
			}
		}
	}
	for i, n := range names {
		shown := ShowName(n)
		if !strings.Contains(list, shown) || !strings.Contains(grep, shown+":1:") {
			t.Errorf("%q not listed as %s:\n%s\n%s", n, shown, list, grep)
		}
		got, err := w.ReadFile(shown, 0, 0, false)
		if err != nil || !strings.Contains(got, "content-"+strconv.Itoa(i)) {
			t.Errorf("read_file %s: %v %q", shown, err, got)
		}
	}
}
