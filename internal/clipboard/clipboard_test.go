//go:build unix

package clipboard

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const onePixelPNG = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82"

// fakeTools puts fake clipboard programs in a directory: each lists types (its
// first call) and prints the file "clip" for an image type. It returns a LookPath
// that sees that directory only.
func fakeTools(t *testing.T, types string, names ...string) (string, func(string) (string, error)) {
	t.Helper()
	dir := t.TempDir()
	cat, err := exec.LookPath("cat") // absolute: a test may narrow PATH to dir
	if err != nil {
		t.Skip("no cat")
	}
	if err := os.WriteFile(filepath.Join(dir, "clip"), []byte(onePixelPNG), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		script := "#!/bin/sh\necho \"$@\" >> " + dir + "/calls\n" +
			"case \"$*\" in *TARGETS*|*--list-types*) printf '%s\\n' " + shellQuote(types) + ";; *image/png*) " + cat + " " + dir + "/clip;; *) exit 1;; esac\n"
		if err := os.WriteFile(filepath.Join(dir, n), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir, func(name string) (string, error) {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			return "", exec.ErrNotFound
		}
		return p, nil
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func env(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

// The reader picks the tool of the session (Wayland first, then X11), reads the
// best image type offered, and says honestly what is missing otherwise.
func TestSelectAndRead(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		tools []string
		vars  map[string]string
		want  string // tool chosen, or "" for an error containing errWant
		err   string
	}{
		{"wayland", []string{"wl-paste", "xclip"}, map[string]string{"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"}, "wl-paste", ""},
		{"x11", []string{"wl-paste", "xclip"}, map[string]string{"DISPLAY": ":0"}, "xclip", ""},
		{"xwayland fallback", []string{"xclip"}, map[string]string{"WAYLAND_DISPLAY": "w", "DISPLAY": ":0"}, "xclip", ""},
		{"wayland without wl-paste", nil, map[string]string{"WAYLAND_DISPLAY": "w"}, "", "install wl-clipboard"},
		{"x11 without xclip", []string{"wl-paste"}, map[string]string{"DISPLAY": ":0"}, "", "install xclip"},
		{"no session", nil, nil, "", "no graphical session"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, look := fakeTools(t, "text/plain\nimage/png\n", c.tools...)
			r := Reader{GOOS: "linux", Getenv: env(c.vars), LookPath: look}
			tool, err := r.Select()
			if c.want == "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("Select = %s, %v; want error with %q", tool.Name, err, c.err)
				}
				return
			}
			if err != nil || tool.Name != c.want {
				t.Fatalf("Select = %s, %v; want %s", tool.Name, err, c.want)
			}
			data, mime, err := r.ReadImage(ctx)
			if err != nil || mime != "image/png" || string(data) != onePixelPNG {
				t.Fatalf("ReadImage = %d bytes %s %v", len(data), mime, err)
			}
		})
	}
	// Text on the clipboard: no image, said so.
	_, look := fakeTools(t, "text/plain;charset=utf-8\nUTF8_STRING", "xclip")
	r := Reader{GOOS: "linux", Getenv: env(map[string]string{"DISPLAY": ":0"}), LookPath: look}
	if _, _, err := r.ReadImage(ctx); !errors.Is(err, ErrNoImage) {
		t.Errorf("text clipboard: %v, want ErrNoImage", err)
	}
	// macOS and Windows pick their own tools.
	_, look = fakeTools(t, "", "osascript", "powershell.exe")
	if tool, err := (Reader{GOOS: "darwin", LookPath: look}).Select(); err != nil || tool.Name != "osascript" {
		t.Errorf("darwin: %s %v", tool.Name, err)
	}
	if tool, err := (Reader{GOOS: "windows", LookPath: look}).Select(); err != nil || tool.Name != "powershell.exe" {
		t.Errorf("windows: %s %v", tool.Name, err)
	}
	_, look = fakeTools(t, "")
	if _, err := (Reader{GOOS: "darwin", LookPath: look}).Select(); err == nil || !strings.Contains(err.Error(), "osascript") {
		t.Errorf("darwin without tools: %v", err)
	}
}

// New finds the tool on the process's PATH.
func TestNewUsesPath(t *testing.T) {
	dir, _ := fakeTools(t, "image/png", "xclip")
	t.Setenv("PATH", dir)
	t.Setenv("WAYLAND_DISPLAY", "")
	t.Setenv("DISPLAY", ":0")
	r := New()
	r.GOOS = "linux"
	data, _, err := r.ReadImage(context.Background())
	if err != nil || string(data) != onePixelPNG {
		t.Fatalf("ReadImage = %d bytes, %v", len(data), err)
	}
}
