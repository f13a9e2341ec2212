package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDecideMemoryWrite(t *testing.T) {
	e := newTestEnv(t)
	// A directory whose .lovia is a symlink out of the root (into the user's config).
	if err := os.Symlink(filepath.Join(e.home, "cache", "..", ".config"), filepath.Join(e.root, "src", ".lovia")); err != nil {
		t.Fatal(err)
	}
	globalNotes := filepath.Join(e.home, ".config", "lovia", "MEMORY.md")
	cases := []struct {
		name                      string
		scope                     MemoryScope
		path                      string
		readonly, coding, trusted Decision
	}{
		{"project notes", MemoryProject, filepath.Join(e.root, ".lovia", "MEMORY.md"), D, A, A},
		{"project archive", MemoryProject, "", D, A, A},
		{"global notes", MemoryGlobal, globalNotes, D, Q, Q},
		{"global archive", MemoryGlobal, "", D, Q, Q},
		{"project notes through a symlink out of the root", MemoryProject, filepath.Join(e.root, "src", ".lovia", "MEMORY.md"), D, D, Q},
		{"denied path", MemoryProject, filepath.Join(e.root, ".env.notes"), D, D, D},
		{"denied global path", MemoryGlobal, filepath.Join(e.home, ".ssh", "MEMORY.md"), D, D, D},
	}
	for _, pol := range []string{PresetReadonly, PresetCoding, PresetTrusted} {
		p := e.policy(t, pol)
		for _, c := range cases {
			want := map[string]Decision{PresetReadonly: c.readonly, PresetCoding: c.coding, PresetTrusted: c.trusted}[pol]
			if got, why := p.DecideMemoryWrite(c.scope, c.path); got != want {
				t.Errorf("%s: %s = %s, want %s (%s)", pol, c.name, got, want, why)
			}
		}
	}
}

func TestMemoryApproval(t *testing.T) {
	e := newTestEnv(t)
	for _, pol := range []string{PresetReadonly, PresetCoding} {
		cfg := e.config(pol)
		cfg.Sandbox = "off"
		w, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		a, err := w.MemoryApproval(MemoryGlobal, filepath.Join(e.home, ".config", "lovia", "MEMORY.md"), "remember (global memory): x")
		switch pol {
		case PresetReadonly:
			if err == nil || a != nil {
				t.Errorf("readonly: global memory write = %+v, %v; want denied", a, err)
			}
			if err != nil && !strings.Contains(err.Error(), "readonly") {
				t.Errorf("readonly denial does not name the policy: %v", err)
			}
		case PresetCoding:
			if err != nil || a == nil || a.Path == "" || !strings.Contains(a.Summary, "remember (global memory): x") {
				t.Errorf("coding: global memory write = %+v, %v; want an approval naming the write", a, err)
			}
			if a, err := w.MemoryApproval(MemoryProject, filepath.Join(e.root, ".lovia", "MEMORY.md"), "pin"); a != nil || err != nil {
				t.Errorf("coding: project notes = %+v, %v; want allowed", a, err)
			}
		}
	}
}
