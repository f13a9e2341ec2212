package workspace

import (
	"os"
	"path/filepath"
	"testing"
)

// testEnv is a workspace root with a HOME and TMPDIR outside of it:
//
//	base/root/{src/main.go, .env, link_out -> /etc, link_in -> src, dang -> /nonexistent/x}
//	base/home/.ssh/id_rsa
//	base/tmp/
type testEnv struct {
	base, root, home, tmp string
}

func newTestEnv(t testing.TB) testEnv {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := testEnv{base: base, root: filepath.Join(base, "root"), home: filepath.Join(base, "home"), tmp: filepath.Join(base, "tmp")}
	for _, d := range []string{e.root + "/src", e.home + "/.ssh", e.tmp, e.home + "/cache", e.root + "/secrets"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		e.root + "/src/main.go":   "package main\n\nfunc main() {}\n",
		e.root + "/.env":          "SECRET=1\n",
		e.root + "/secrets/a.pem": "key\n",
		e.home + "/.ssh/id_rsa":   "private\n",
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{e.root + "/link_out": "/etc", e.root + "/link_in": "src", e.root + "/dang": "/nonexistent/x", e.root + "/loop": "loop"} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	if tt, ok := t.(*testing.T); ok {
		tt.Setenv("HOME", e.home)
		tt.Setenv("TMPDIR", e.tmp)
	} else {
		for k, v := range map[string]string{"HOME": e.home, "TMPDIR": e.tmp} {
			old, had := os.LookupEnv(k)
			os.Setenv(k, v)
			t.Cleanup(func() {
				if had {
					os.Setenv(k, old)
				} else {
					os.Unsetenv(k)
				}
			})
		}
	}
	return e
}

// testConfig is the configuration the adversarial tables run under.
func (e testEnv) config(policy string) Config {
	return Config{
		Root:        e.root,
		Policy:      policy,
		DeniedPaths: []string{".env*", "~/.ssh"},
		PathRules: []PathRule{
			{Pattern: "secrets/**", Read: "deny", Write: "deny"},
			{Pattern: "/opt/shared", Write: "allow", Read: "allow"},
		},
		Readable: []string{"/usr/share"},
		Writable: []string{"~/cache"},
		CommandRules: []CommandRule{
			{Prefix: "git", Decision: "allow"},
			{Prefix: "git push", Decision: "ask"},
			{Prefix: "git push --force", Decision: "deny"},
			{Prefix: "go test", Decision: "allow"},
			{Prefix: "npm publish", Decision: "deny"},
		},
	}
}

func (e testEnv) policy(t testing.TB, name string) *Policy {
	t.Helper()
	p, err := NewPolicy(e.config(name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
