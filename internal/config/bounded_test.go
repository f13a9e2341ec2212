package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/errs"
)

// A config file that is an alias bomb, too large, or a link out of its directory is
// refused (a configuration error naming the file and the fix), never expanded or read.
func TestConfigFilesAreBounded(t *testing.T) {
	bomb := `a0: &a0 [x,x,x,x,x,x,x,x,x]` + "\n"
	for i := 1; i <= 9; i++ {
		bomb += fmt.Sprintf("a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 9), ","))
	}
	secret := filepath.Join(t.TempDir(), "secret.yaml")
	os.WriteFile(secret, []byte("model: openai:CANARY\n"), 0o600)
	tests := map[string]struct {
		setup func(f *fixture) string
		want  string
		hint  string
	}{
		"project alias bomb": {func(f *fixture) string {
			return f.write(t, filepath.Join(f.repo, ".lovia", "config.yaml"), bomb)
		}, "aliases expand to more than 100000 nodes", "write the values out"},
		"user alias bomb": {func(f *fixture) string {
			return f.write(t, filepath.Join(f.xdg, "lovia", "config.yaml"), bomb)
		}, "aliases expand to more than 100000 nodes", "write the values out"},
		"too large": {func(f *fixture) string {
			return f.write(t, filepath.Join(f.repo, ".lovia", "config.yaml"), "# "+strings.Repeat("x", 1<<20)+"\n")
		}, "is over the size limit (1 MiB)", "below 1 MiB"},
		"link out of the project": {func(f *fixture) string {
			p := filepath.Join(f.repo, ".lovia", "config.yaml")
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.Symlink(secret, p); err != nil {
				t.Fatal(err)
			}
			return p
		}, "links outside its directory", "replace the link"},
	}
	for name, tc := range tests {
		f := newFixture(t)
		path := tc.setup(f)
		_, err := f.load(t)
		if err == nil || errs.ExitCode(err) != 2 {
			t.Errorf("%s: err %v", name, err)
			continue
		}
		if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(errs.HintOf(err), tc.hint) {
			t.Errorf("%s: %v (hint %q)", name, err, errs.HintOf(err))
		}
		if strings.Contains(err.Error(), "CANARY") {
			t.Errorf("%s: the linked file was read", name)
		}
	}
}
