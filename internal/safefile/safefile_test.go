package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/errs"
)

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadBeneath(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "id_rsa")
	write(t, secret, "CANARY-SECRET")
	root := t.TempDir()
	write(t, filepath.Join(root, "AGENTS.md"), "hello")
	write(t, filepath.Join(root, "docs", "guide.md"), "guide")
	links := map[string]string{
		"rel-inside.md": "docs/guide.md",
		"abs-inside.md": filepath.Join(root, "docs", "guide.md"),
		"secret.md":     secret,
		"up.md":         "../" + filepath.Base(outside) + "/id_rsa",
		"zero.md":       "/dev/zero",
		"dangling.md":   "nowhere.md",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(root, "linkdir")); err != nil {
		t.Fatal(err)
	}

	for name, want := range map[string]string{"AGENTS.md": "hello", "rel-inside.md": "guide", "abs-inside.md": "guide"} {
		got, err := ReadBeneath(root, filepath.Join(root, name), 1<<10)
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v", name, got, err)
		}
	}
	for _, name := range []string{"secret.md", "up.md", "zero.md", "linkdir/id_rsa"} {
		got, err := ReadBeneath(root, filepath.Join(root, name), 1<<10)
		if !errors.Is(err, ErrOutsideRoot) || len(got) > 0 {
			t.Errorf("%s: read %q, err %v; want ErrOutsideRoot", name, got, err)
			continue
		}
		if !strings.Contains(err.Error(), name) || !strings.Contains(errs.HintOf(err), "replace the link") {
			t.Errorf("%s: message %q hint %q", name, err, errs.HintOf(err))
		}
	}
	for _, name := range []string{"missing.md", "dangling.md"} {
		if _, err := ReadBeneath(root, filepath.Join(root, name), 1<<10); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v, want not-exist", name, err)
		}
	}
	if _, err := ReadBeneath(root, secret, 1<<10); !errors.Is(err, ErrOutsideRoot) {
		t.Errorf("a path outside root: %v", err)
	}
}

func TestCaps(t *testing.T) {
	root := t.TempDir()
	big := filepath.Join(root, "big.yaml")
	write(t, big, strings.Repeat("x", 2049))
	_, err := ReadBeneath(root, big, 2048)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "big.yaml is over the size limit (2 KiB)") || !strings.Contains(errs.HintOf(err), "below 2 KiB") {
		t.Errorf("beneath: %v / %q", err, errs.HintOf(err))
	}
	if got, err := ReadNamed(big, 4096); err != nil || len(got) != 2049 {
		t.Errorf("named under the cap: %d, %v", len(got), err)
	}
	if _, err := ReadNamed(big, 2048); !errors.Is(err, ErrTooLarge) {
		t.Errorf("named over the cap: %v", err)
	}
	if _, err := ReadNamed(root, 2048); !errors.Is(err, ErrNotRegular) {
		t.Errorf("named directory: %v", err)
	}
	if runtime.GOOS == "windows" {
		return
	}
	for _, dev := range []string{"/dev/zero", "/dev/urandom"} {
		_, err := ReadNamed(dev, 1<<20)
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), dev+" is over the size limit (1 MiB)") {
			t.Errorf("%s: %v", dev, err)
		}
	}
}

func TestShowQuotesControls(t *testing.T) {
	if got := show("a\x1b]52;c;x\x07.md"); !strings.HasPrefix(got, `"`) || strings.ContainsRune(got, 0x1b) {
		t.Errorf("show = %q", got)
	}
	if got := show("/repo/AGENTS.md"); got != "/repo/AGENTS.md" {
		t.Errorf("show = %q", got)
	}
}

// The fallback for kernels without openat2 (and other systems) keeps the same rule.
func TestPortableFallback(t *testing.T) {
	outside := t.TempDir()
	write(t, filepath.Join(outside, "id_rsa"), "CANARY")
	root := t.TempDir()
	write(t, filepath.Join(root, "docs", "guide.md"), "guide")
	if err := os.Symlink(filepath.Join(outside, "id_rsa"), filepath.Join(root, "secret.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("docs/guide.md", filepath.Join(root, "ok.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := openBeneathPortable(root, "secret.md"); !errors.Is(err, ErrOutsideRoot) {
		t.Errorf("secret: %v", err)
	}
	f, err := openBeneathPortable(root, "ok.md")
	if err != nil {
		t.Fatalf("inside: %v", err)
	}
	f.Close()
}
