package e2e

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// releaseArchive packs the test's lovia binary and a manual page the way goreleaser
// does (lovia_<version>_<os>_<arch>.tar.gz) and returns its name and bytes.
func releaseArchive(t *testing.T, version string) (string, []byte) {
	t.Helper()
	name := fmt.Sprintf("lovia_%s_%s_%s.tar.gz", version, runtime.GOOS, runtime.GOARCH)
	exe, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range []struct {
		name string
		mode int64
		body []byte
	}{
		{"README.md", 0o644, []byte("# lovia\n")},
		{"lovia", 0o755, exe},
		{"manpages/lovia.1", 0o644, []byte(".TH LOVIA 1\n")},
	} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(f.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return name, []byte(buf.String())
}

// releaseServer serves a GitHub-shaped release mirror: /latest redirects to
// /tag/vVERSION, /download/vVERSION/FILE serves the archive and checksums.txt.
func releaseServer(t *testing.T, version string, files map[string][]byte) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/latest", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/tag/v"+version, http.StatusFound)
	})
	mux.HandleFunc("/tag/", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("release page")) })
	mux.HandleFunc("/download/v"+version+"/", func(w http.ResponseWriter, r *http.Request) {
		body, ok := files[strings.TrimPrefix(r.URL.Path, "/download/v"+version+"/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(body)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func runInstall(t *testing.T, base, prefix string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("sh", append([]string{filepath.Join(repoRoot, "scripts", "install.sh"), "--prefix", prefix}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LOVIA_INSTALL_BASE_URL=" + base}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestInstallScript(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("install.sh is for Linux and macOS")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		if _, err := exec.LookPath("wget"); err != nil {
			t.Skip("install.sh needs curl or wget; neither is installed")
		}
	}
	const version = "1.2.3"
	name, archive := releaseArchive(t, version)
	sum := sha256.Sum256(archive)
	good := map[string][]byte{
		name:            archive,
		"checksums.txt": []byte(hex.EncodeToString(sum[:]) + "  " + name + "\n" + strings.Repeat("0", 64) + "  other.zip\n"),
	}

	t.Run("latest", func(t *testing.T) {
		srv := releaseServer(t, version, good)
		prefix := filepath.Join(t.TempDir(), "pfx")
		out, err := runInstall(t, srv.URL, prefix)
		if err != nil {
			t.Fatalf("install failed: %v\n%s", err, out)
		}
		got, err := exec.Command(filepath.Join(prefix, "bin", "lovia"), "version").Output()
		if err != nil || !strings.HasPrefix(string(got), "lovia ") {
			t.Fatalf("installed binary: %q %v", got, err)
		}
		if _, err := os.Stat(filepath.Join(prefix, "share", "man", "man1", "lovia.1")); err != nil {
			t.Errorf("manual page not installed: %v", err)
		}
		for _, want := range []string{"v" + version, "is not on your PATH", "export PATH=\"" + prefix + "/bin:$PATH\""} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("pinned version", func(t *testing.T) {
		srv := releaseServer(t, version, good)
		prefix := t.TempDir()
		if out, err := runInstall(t, srv.URL, prefix, "--version", version); err != nil {
			t.Fatalf("install --version failed: %v\n%s", err, out)
		}
		if _, err := os.Stat(filepath.Join(prefix, "bin", "lovia")); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("tampered archive", func(t *testing.T) {
		bad := map[string][]byte{name: append(append([]byte{}, archive...), 0), "checksums.txt": good["checksums.txt"]}
		srv := releaseServer(t, version, bad)
		prefix := t.TempDir()
		out, err := runInstall(t, srv.URL, prefix)
		if err == nil || !strings.Contains(out, "checksum mismatch") || !strings.Contains(out, "nothing was installed") {
			t.Fatalf("tampered archive: err=%v\n%s", err, out)
		}
		if _, err := os.Stat(filepath.Join(prefix, "bin", "lovia")); !os.IsNotExist(err) {
			t.Fatalf("a binary was installed from a tampered archive (stat: %v)", err)
		}
	})

	t.Run("archive not listed", func(t *testing.T) {
		srv := releaseServer(t, version, map[string][]byte{name: archive, "checksums.txt": []byte(strings.Repeat("0", 64) + "  other.zip\n")})
		out, err := runInstall(t, srv.URL, t.TempDir())
		if err == nil || !strings.Contains(out, "does not list "+name) {
			t.Fatalf("unlisted archive: err=%v\n%s", err, out)
		}
	})

	t.Run("bad arguments", func(t *testing.T) {
		out, err := runInstall(t, "http://127.0.0.1:1", t.TempDir(), "--frobnicate")
		if err == nil || !strings.Contains(out, "unknown argument: --frobnicate") {
			t.Fatalf("unknown flag: err=%v\n%s", err, out)
		}
		out, err = runInstall(t, "http://127.0.0.1:1", t.TempDir(), "--version", "../../etc")
		if err == nil || !strings.Contains(out, "not a version") {
			t.Fatalf("path in version: err=%v\n%s", err, out)
		}
	})
}

// The install and packaging scripts are POSIX sh and shellcheck clean (CI installs
// shellcheck; elsewhere only the syntax check runs).
func TestInstallScriptsLint(t *testing.T) {
	scripts := []string{filepath.Join(repoRoot, "scripts", "install.sh"), filepath.Join(repoRoot, "scripts", "npm-pack.sh")}
	for _, s := range scripts {
		if out, err := exec.Command("sh", "-n", s).CombinedOutput(); err != nil {
			t.Errorf("sh -n %s: %v\n%s", s, err, out)
		}
	}
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Skip("shellcheck is not installed (CI installs it): only `sh -n` ran")
	}
	if out, err := exec.Command(sc, append([]string{"-s", "sh"}, scripts...)...).CombinedOutput(); err != nil {
		t.Errorf("shellcheck: %v\n%s", err, out)
	}
}

func TestVersionCheck(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"tag_name":"v99.0.0","html_url":"https://example.invalid/releases/tag/v99.0.0"}`))
	}))
	defer srv.Close()
	e := newEnv(t)
	e.vars = append(e.vars, "LOVIA_UPDATE_URL="+srv.URL)
	r := e.run(nil, "version", "--check")
	// The test binary is a development build: it says so instead of "older".
	if r.code != 0 || !strings.Contains(r.stdout, "newest release is 99.0.0") {
		t.Fatalf("version --check: %+v", r)
	}
	r = e.run(nil, "version", "--check", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"latest": "99.0.0"`) || !strings.Contains(r.stdout, `"checked": true`) {
		t.Fatalf("version --check --json: %+v", r)
	}
	e.vars = append(e.vars, "LOVIA_NO_UPDATE_CHECK=1")
	r = e.run(nil, "version", "--check")
	if r.code != 0 || !strings.Contains(r.stdout, "update check is off (LOVIA_NO_UPDATE_CHECK is set)") {
		t.Fatalf("LOVIA_NO_UPDATE_CHECK: %+v", r)
	}
	// Plain `lovia version` never asks the network, even with a mirror set.
	e2 := newEnv(t)
	e2.vars = append(e2.vars, "LOVIA_UPDATE_URL=http://127.0.0.1:1")
	if r := e2.run(nil, "version"); r.code != 0 || strings.Contains(r.stdout+r.stderr, "release") {
		t.Fatalf("plain version: %+v", r)
	}
}

func TestManPages(t *testing.T) {
	e := newEnv(t)
	r := e.run(nil, "man")
	if r.code != 0 || !strings.Contains(r.stdout, `.TH "LOVIA" "1"`) || !strings.Contains(r.stdout, "lovia-run(1)") {
		t.Fatalf("lovia man: code %d\n%.400s", r.code, r.stdout)
	}
	dir := filepath.Join(t.TempDir(), "man")
	if r := e.run(nil, "man", "--dir", dir); r.code != 0 {
		t.Fatalf("lovia man --dir: %+v", r)
	}
	for _, page := range []string{"lovia.1", "lovia-run.1", "lovia-chat.1", "lovia-resume.1"} {
		b, err := os.ReadFile(filepath.Join(dir, page))
		if err != nil || !strings.Contains(string(b), ".SH NAME") {
			t.Errorf("%s: %v", page, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "lovia-__sandbox-exec.1")); err == nil {
		t.Error("the internal sandbox-exec command got a manual page")
	}
}
