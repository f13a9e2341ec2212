package preset

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/errs"
)

func bombYAML() string {
	s := "name: x\nextra_a0: &a0 [x,x,x,x,x,x,x,x,x]\n"
	for i := 1; i <= 9; i++ {
		s += fmt.Sprintf("extra_a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 9), ","))
	}
	return s
}

// A repository preset that is an alias bomb, a link out of .lovia, or too large fails
// the load with an error naming the file, never expanded or read.
func TestPresetFilesAreBounded(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret.yaml")
	os.WriteFile(secret, []byte("name: CANARY\n"), 0o600)
	tests := map[string]struct {
		setup func(dir string)
		want  string
	}{
		"alias bomb": {func(dir string) { os.WriteFile(filepath.Join(dir, "x.yaml"), []byte(bombYAML()), 0o644) }, "aliases expand to more than 100000 nodes"},
		"link out":   {func(dir string) { os.Symlink(secret, filepath.Join(dir, "x.yaml")) }, "links outside its directory"},
		"too large": {func(dir string) {
			os.WriteFile(filepath.Join(dir, "x.yaml"), []byte("# "+strings.Repeat("x", 1<<20)), 0o644)
		}, "over the size limit (1 MiB)"},
	}
	for name, tc := range tests {
		dir := filepath.Join(t.TempDir(), ".lovia", "presets")
		os.MkdirAll(dir, 0o755)
		tc.setup(dir)
		_, err := Load(Dirs{Project: dir})
		if err == nil || errs.KindOf(err) != errs.KindConfig || !strings.Contains(err.Error(), filepath.Join(dir, "x.yaml")) || !strings.Contains(err.Error(), tc.want) || errs.HintOf(err) == "" {
			t.Errorf("%s: %v (hint %q)", name, err, errs.HintOf(err))
		}
	}
}
