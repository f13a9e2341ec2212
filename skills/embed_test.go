package skills

import (
	"io/fs"
	"os"
	"testing"
)

func TestEveryFolderEmbedded(t *testing.T) {
	disk, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range disk {
		if !d.IsDir() {
			continue
		}
		if _, err := fs.Stat(FS, d.Name()+"/SKILL.md"); err != nil {
			t.Errorf("skill folder %s is not embedded (add it to the go:embed line): %v", d.Name(), err)
		}
	}
}
