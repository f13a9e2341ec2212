//go:build darwin

package workspace

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// On a Mac (never in lovia's Linux CI): the generated profile really confines.
func TestSeatbeltOnThisMac(t *testing.T) {
	if _, err := os.Stat("/usr/bin/sandbox-exec"); err != nil {
		t.Skip("no sandbox-exec")
	}
	base, root := seatbeltFixture(t)
	cfg := Config{Root: root}
	p, err := NewPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := newSeatbeltExecutor(p, &cfg, protectedPaths(p.root, nestedGitDirs(p.root)))
	if err := os.WriteFile(filepath.Join(base, "home", ".ssh", "id_test"), []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(script string) error {
		cmd, err := s.Command(context.Background(), ExecRequest{Path: "/bin/sh", Args: []string{"sh", "-c", script}, Dir: root, Env: []string{"PATH=/usr/bin:/bin"}})
		if err != nil {
			t.Fatal(err)
		}
		return cmd.Run()
	}
	for _, c := range []struct {
		script string
		ok     bool
	}{
		{"echo x > ok.txt", true},
		{"echo x > .git/config", false},
		{"mkdir -p .git/hooks && echo x > .git/hooks/pre-commit", false},
		{"echo x > .GIT/hooks/pre-commit", false},
		{"mv .git .git2", false},
		{"mkdir -p .lovia && echo x > .lovia/config.yaml", false},
		{"cat " + filepath.Join(base, "home", ".ssh", "id_test"), false},
		{"echo x > " + filepath.Join(base, "home", "outside.txt"), false},
		{"echo x > " + filepath.Join(base, "tmp", "t.txt"), true},
	} {
		if err := run(c.script); (err == nil) != c.ok {
			t.Errorf("%s: err = %v, want ok=%v", c.script, err, c.ok)
		}
	}
}
