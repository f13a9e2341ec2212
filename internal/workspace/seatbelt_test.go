package workspace

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/workspace/sandbox"
)

// cacheHash is the per-root part of lovia's cache paths (the root is a temp dir),
// (and its case-folded regex form, [0-9a-f] as [0-9a-f]'s folded bytes).
var cacheHash = regexp.MustCompile(`sandbox-cache/([0-9a-f]|\[[A-F][a-f]\]){16}`)

var updateSeatbelt = flag.Bool("update-seatbelt", false, "rewrite testdata/seatbelt/*.sb from the generator")

// seatbeltFixture is a home with credential stores, a temp dir and a repository with
// a nested one, under fixed environment variables, so profiles are reproducible.
func seatbeltFixture(t *testing.T) (base, root string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("Seatbelt profiles name Unix paths")
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, tmp := filepath.Join(base, "home"), filepath.Join(base, "tmp")
	root = filepath.Join(base, "repo")
	for _, d := range []string{home + "/.ssh", home + "/.aws", tmp, root + "/.git", root + "/vendor/dep/.git"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("TMPDIR", tmp)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	t.Setenv("XDG_CONFIG_HOME", "")
	// lovia's own directories are in the profile (their MCP tokens are hidden).
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("LOVIA_HOME", "")
	for _, k := range []string{"GOCACHE", "npm_config_cache", "PIP_CACHE_DIR"} {
		t.Setenv(k, "")
	}
	return base, root
}

// The profile of each policy (and network mode) is the one in testdata/seatbelt:
// a change to what macOS commands may do shows up as a reviewed diff there.
func TestSeatbeltGoldenProfiles(t *testing.T) {
	for _, c := range []struct {
		name, policy, network string
		needsNet              bool
	}{
		{"readonly", PresetReadonly, "", false},
		{"coding", PresetCoding, "", false},
		{"coding-network-deny", PresetCoding, NetworkDeny, false},
		{"coding-network-allow", PresetCoding, NetworkAllow, false},
		{"coding-command-needs-network", PresetCoding, NetworkAsk, true},
		{"trusted", PresetTrusted, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			base, root := seatbeltFixture(t)
			cfg := Config{Root: root, Policy: c.policy, Network: c.network}
			p, err := NewPolicy(cfg)
			if err != nil {
				t.Fatal(err)
			}
			s := newSeatbeltExecutor(p, &cfg, protectedPaths(p.root, nestedGitDirs(p.root)))
			prof, err := sandbox.SeatbeltProfile(s.Spec(ExecRequest{Network: c.needsNet}))
			if err != nil {
				t.Fatal(err)
			}
			// The cache base as on Linux (macOS: ~/Library/Caches), the temp dir as $BASE.
			if ucd, err := os.UserCacheDir(); err == nil {
				prof = strings.ReplaceAll(prof, ucd, filepath.Join(base, "home", ".cache"))
			}
			got := "; policy " + c.policy + ", workspace.network " + NetworkMode(cfg) + "\n" + cacheHash.ReplaceAllString(strings.NewReplacer(base, "$BASE", sandbox.CaseFold(base), "$BASE").Replace(prof), "sandbox-cache/HASH")
			golden := filepath.Join("testdata", "seatbelt", c.name+".sb")
			if *updateSeatbelt {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestSeatbeltGoldenProfiles -update-seatbelt to create it)", err)
			}
			if got != string(want) {
				t.Errorf("profile for %s differs from %s (rerun with -update-seatbelt if intended):\n%s", c.name, golden, got)
			}
		})
	}
}

// What the goldens must say, asserted directly so a careless -update cannot bless a
// profile that opens a protected path.
func TestSeatbeltProfileFollowsPolicy(t *testing.T) {
	base, root := seatbeltFixture(t)
	home, tmp := filepath.Join(base, "home"), filepath.Join(base, "tmp")
	cfg := Config{Root: root, Policy: PresetCoding, Writable: []string{filepath.Join(base, "extra")}}
	p, err := NewPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := newSeatbeltExecutor(p, &cfg, protectedPaths(p.root, nestedGitDirs(p.root)))
	spec := s.Spec(ExecRequest{Writable: []string{filepath.Join(base, "approved")}})
	for _, w := range []string{root, tmp, filepath.Join(base, "extra"), filepath.Join(base, "approved")} {
		if !contains(spec.Writable, w) {
			t.Errorf("writable %s missing from %q", w, spec.Writable)
		}
	}
	for _, pr := range []string{root + "/.git/config", root + "/.git/hooks", root + "/.lovia", root + "/vendor/dep/.git/hooks", root + "/vendor/dep/.git/config"} {
		if !contains(spec.Protect, pr) {
			t.Errorf("protected %s missing from %q", pr, spec.Protect)
		}
	}
	// Existing and missing stores alike: a rule names a path, not a mount point.
	for _, h := range []string{home + "/.ssh", home + "/.aws", home + "/.gnupg", home + "/.netrc"} {
		if !contains(spec.Hide, h) {
			t.Errorf("hidden store %s missing from %q", h, spec.Hide)
		}
	}
	if spec.Network {
		t.Errorf("coding (network ask): a command not known to need the network got it")
	}
	if !s.Spec(ExecRequest{Network: true}).Network {
		t.Errorf("a command that passed as needing the network did not get it")
	}
	if cfg.Env["GOCACHE"] == "" || !contains(spec.Writable, cfg.Env["GOCACHE"]) {
		t.Errorf("GOCACHE %q is not one of lovia's writable caches %q", cfg.Env["GOCACHE"], spec.Writable)
	}
	ro := Config{Root: root, Policy: PresetReadonly}
	p, _ = NewPolicy(ro)
	if w := newSeatbeltExecutor(p, &ro, protectedPaths(p.root, nestedGitDirs(p.root))).Spec(ExecRequest{}).Writable; contains(w, root) {
		t.Errorf("readonly: the root is writable: %q", w)
	}
}

func TestSeatbeltCommand(t *testing.T) {
	base, root := seatbeltFixture(t)
	// A root whose name tries to close the string literal.
	hostile := filepath.Join(base, `r") (allow default) ("`)
	if err := os.Mkdir(hostile, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Root: hostile}
	p, err := NewPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := newSeatbeltExecutor(p, &cfg, protectedPaths(p.root, nestedGitDirs(p.root)))
	cmd, err := s.Command(context.Background(), ExecRequest{Path: "/usr/bin/git", Args: []string{"git", "status"}, Dir: root, Env: []string{"PATH=/usr/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	if cmd.Path != sandbox.SandboxExecPath || len(cmd.Args) != 6 || cmd.Args[1] != "-p" || cmd.Args[3] != "--" || cmd.Args[4] != "/usr/bin/git" || cmd.Args[5] != "status" {
		t.Fatalf("argv = %q", cmd.Args)
	}
	prof := cmd.Args[2]
	// Once the escaped name is taken out, no (allow default) is left.
	if strings.Contains(strings.ReplaceAll(prof, `r\") (allow default) (\"`, "R"), "(allow default)") {
		t.Errorf("the root's name escaped its string literal:\n%s", prof)
	}
	if want := `(subpath "` + strings.ReplaceAll(hostile, `"`, `\"`) + `")`; !strings.Contains(prof, want) {
		t.Errorf("profile does not name the root as %s:\n%s", want, prof)
	}
	if cmd.Dir != root || len(cmd.Env) != 1 {
		t.Errorf("dir %q env %q", cmd.Dir, cmd.Env)
	}
	// A path the profile cannot name: the command is refused, not run unconfined.
	if _, err := s.Command(context.Background(), ExecRequest{Path: "/bin/sh", Args: []string{"sh"}, Writable: []string{base + "/a\nb"}}); err == nil {
		t.Errorf("a writable path with a newline was accepted")
	}
	if !strings.Contains(s.Describe(), "Seatbelt") {
		t.Errorf("Describe = %q", s.Describe())
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
