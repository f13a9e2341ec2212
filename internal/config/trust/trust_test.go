package trust

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestHashIgnoresOrderAndLines(t *testing.T) {
	a := []Entry{{File: "/r/.lovia/config.yaml", Line: 3, Key: "hooks[0]", Value: map[string]any{"command": "x"}},
		{File: "/r/.lovia/config.yaml", Line: 5, Key: "workspace.writable[0]", Value: "/srv"}}
	b := []Entry{{File: "/r/.lovia/config.yaml", Line: 9, Key: "workspace.writable[0]", Value: "/srv", Why: "other words"},
		{File: "/r/.lovia/config.yaml", Line: 1, Key: "hooks[0]", Value: map[string]any{"command": "x"}}}
	if Hash("/r", a) != Hash("/r", b) {
		t.Error("order or lines changed the hash")
	}
	b[0].Value = "/opt"
	if Hash("/r", a) == Hash("/r", b) {
		t.Error("a changed value kept the hash")
	}
	// The same settings in another folder hash alike (the folder is the key).
	moved := []Entry{{File: "/s/.lovia/config.yaml", Key: "hooks[0]", Value: map[string]any{"command": "x"}},
		{File: "/s/.lovia/config.yaml", Key: "workspace.writable[0]", Value: "/srv"}}
	if Hash("/r", a) != Hash("/s", moved) {
		t.Error("the hash depends on the folder's path")
	}
}

func TestStoreRejectsNonRegularFile(t *testing.T) {
	dir := t.TempDir()
	s := NewStore(dir)
	if err := os.Mkdir(s.Path, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Trusted("/r", "h"); err == nil {
		t.Error("a directory as the trust file was accepted")
	}
	s = NewStore(filepath.Join(dir, "new"))
	if err := s.Trust("/r", "h", nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Trusted("/r", "h"); !ok || err != nil {
		t.Errorf("trusted %v %v", ok, err)
	}
	if ok, _ := s.Trusted("/r", "other"); ok {
		t.Error("another hash is trusted")
	}
}

func TestLooserAndStricter(t *testing.T) {
	if !Looser("trusted", "") || Looser("coding", "") || Looser("readonly", "coding") || Looser("bogus", "readonly") {
		t.Error("Looser")
	}
	if Stricter("trusted", "readonly") != "readonly" || Stricter("coding", "trusted") != "coding" {
		t.Error("Stricter")
	}
}
