package workspace

import (
	"errors"
	"strings"
	"testing"
)

func TestWindowsCanonicalPaths(t *testing.T) {
	w := winPaths{}
	for in, want := range map[string]string{
		`C:\repo\x`:                          "c:/repo/x",
		`C:\repo\..\x`:                       "c:/x",
		`C:\..\..\x`:                         "c:/x",
		`c:/Repo/.git/config`:                "c:/repo/.git/config",
		`C:\Repo\.GIT\Config`:                "c:/repo/.git/config",
		`C:\repo\.\src\\main.go`:             "c:/repo/src/main.go",
		`C:\`:                                "c:/",
		`C:/`:                                "c:/",
		`\\server\share\dir\f`:               "//server/share/dir/f",
		`\\Server\Share`:                     "//server/share",
		`//server/share/../../x`:             "//server/share/x",
		`\\?\C:\repo\x`:                      "c:/repo/x",
		`\\?\UNC\server\share\x`:             "//server/share/x",
		`C:\repo\file.txt:stream`:            "c:/repo/file.txt",
		`C:\repo\file.txt::$DATA`:            "c:/repo/file.txt",
		`C:\repo\.git.\config`:               "c:/repo/.git/config",
		`C:\repo\.git \config`:               "c:/repo/.git/config",
		`C:\repo\.git. . \hooks\pre-commit.`: "c:/repo/.git/hooks/pre-commit",
		`C:\repo\notes~draft.txt`:            "c:/repo/notes~draft.txt",
		`C:\repo\a~b1`:                       "c:/repo/a~b1",
		`C:\repo\console.txt`:                "c:/repo/console.txt",
	} {
		got, err := w.canon(in)
		if err != nil || got != want {
			t.Errorf("canon(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]error{
		`\\.\PhysicalDrive0`:              errDevicePath,
		`\\.\C:\repo`:                     errDevicePath,
		`\\?\GLOBALROOT\Device\x`:         errDevicePath,
		`\??\C:\repo`:                     errDevicePath,
		`C:foo`:                           errDriveRelative,
		`C:`:                              errDriveRelative,
		`\repo\x`:                         errDriveRelative,
		`C:\repo\GIT~1\config`:            errShortName,
		`C:\repo\.git\HOOKS~1\pre-commit`: errShortName,
		`C:\Users\ME~1.DOM\.ssh\id_rsa`:   errShortName,
		`C:\repo\NUL`:                     errDeviceName,
		`C:\repo\con.txt`:                 errDeviceName,
		`C:\repo\COM1.log`:                errDeviceName,
		`C:\repo\lpt9`:                    errDeviceName,
		`C:\repo\aux .c`:                  errDeviceName,
	} {
		if got, err := w.canon(in); !errors.Is(err, want) {
			t.Errorf("canon(%q) = %q, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "relative\\x", `\\server`, `\\server\`, "C:\\a\nb", `C:\repo\...`, `C:\repo\ .`} {
		if got, err := w.canon(in); err == nil {
			t.Errorf("canon(%q) = %q, want a refusal", in, got)
		}
	}
	for in, want := range map[string]string{"c:/a/b": "c:/a", "c:/a": "c:/", "c:/": "c:/", "//s/h/x/y": "//s/h/x", "//s/h/x": "//s/h", "//s/h": "//s/h"} {
		if got := w.parent(in); got != want {
			t.Errorf("parent(%q) = %q, want %q", in, got, want)
		}
	}
}

// windowsPolicy compiles cfg on this system, then moves it to a Windows root and
// home as NewPolicy does on Windows (useWindowsPaths).
func windowsPolicy(t *testing.T, cfg Config) *Policy {
	t.Helper()
	cfg.Root = t.TempDir()
	p, err := NewPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p.root, p.home, p.tmp = `C:\Users\Me\src\Repo`, `C:\Users\Me`, `C:\Users\Me\AppData\Local\Temp`
	p.own = []string{`C:\Users\Me\AppData\Roaming\lovia`}
	p.readable, p.writable = nil, []string{`D:\Scratch`}
	p.credentials = nil
	for _, d := range credentialStores {
		pp, err := compilePattern(d, p.home)
		if err != nil {
			t.Fatal(err)
		}
		p.credentials = append(p.credentials, pp)
	}
	p.denied = nil
	for _, d := range cfg.DeniedPaths {
		pp, err := compilePattern(d, p.home)
		if err != nil {
			t.Fatal(err)
		}
		p.denied = append(p.denied, pp)
	}
	p.useWindowsPaths(winPaths{})
	return p
}

// The judge with Windows semantics: every spelling of a protected or credential
// path gets the protected path's decision; spellings it cannot map are denied.
func TestWindowsPathsPolicyJudge(t *testing.T) {
	p := windowsPolicy(t, Config{Policy: PresetCoding, DeniedPaths: []string{"secrets/**", "~/Private"}})
	if p.Root() != "c:/users/me/src/repo" {
		t.Fatalf("root = %q", p.Root())
	}
	for _, c := range []struct {
		path string
		op   Op
		want Decision
		why  string // a word of the reason
	}{
		{`C:\Users\Me\src\Repo\main.go`, OpWrite, Allow, "inside"},
		{`c:/users/me/SRC/repo/main.go`, OpWrite, Allow, "inside"},
		{`\\?\C:\Users\Me\src\Repo\main.go`, OpWrite, Allow, "inside"},
		{`C:\Users\Me\src\Repo\.git\config`, OpWrite, Deny, "git"},
		{`c:/users/me/src/repo/.GIT/CONFIG`, OpWrite, Deny, "git"},
		{`C:\Users\Me\src\Repo\.git.\config`, OpWrite, Deny, "git"},
		{`C:\Users\Me\src\Repo\.git \hooks\pre-commit`, OpWrite, Deny, "git"},
		{`C:\Users\Me\src\Repo\.git\config:evil`, OpWrite, Deny, "git"},
		{`C:\Users\Me\src\Repo\.git\hooks:x\post-checkout`, OpWrite, Deny, "git"},
		{`\\?\C:\Users\Me\src\Repo\.git\hooks\pre-commit`, OpWrite, Deny, "git"},
		{`C:\Users\Me\src\Repo\src\..\.git\config`, OpWrite, Deny, "git"},
		{`C:\Users\Me\src\Repo\GIT~1\config`, OpWrite, Deny, "short name"},
		{`C:\Users\Me\src\Repo\GIT~1\config`, OpRead, Deny, "short name"},
		{`C:\Users\Me\src\Repo\.Lovia\config.yaml`, OpWrite, Deny, "lovia"},
		{`C:\Users\Me\src\Repo\.lovia.\hooks.yaml`, OpWrite, Deny, "lovia"},
		{`C:\Users\Me\src\Repo\Secrets\key.pem`, OpRead, Deny, "denied_paths"},
		{`C:\Users\Me\PRIVATE\diary.txt`, OpRead, Deny, "denied_paths"},
		{`C:\Users\Me\.ssh\id_ed25519`, OpRead, Deny, "credentials"},
		{`c:\users\me\.SSH\id_ed25519`, OpRead, Deny, "credentials"},
		{`C:\Users\Me\.ssh.\id_ed25519`, OpRead, Deny, "credentials"},
		{`C:\Users\Me\.aws\credentials:x`, OpRead, Deny, "credentials"},
		{`\\?\C:\Users\Me\.git-credentials`, OpRead, Deny, "credentials"},
		{`C:\Users\Me\SSH~1\id_ed25519`, OpRead, Deny, "short name"},
		{`C:\Users\Me\.config\lovia\credentials.json`, OpRead, Deny, "credentials"},
		{`C:\Users\Me\AppData\Roaming\Lovia\trust.json`, OpWrite, Deny, "own state"},
		{`C:\Users\Me\src\Repo\..\Other\x.go`, OpWrite, Deny, "outside"},
		{`C:\Users\Me\src\Repo\..\Other\x.go`, OpRead, Ask, "outside"},
		{`C:\Users\Me\src\RepoX\x.go`, OpRead, Ask, "outside"},
		{`C:\Users\Me\AppData\Local\Temp\build\out.o`, OpWrite, Allow, "temp"},
		{`d:/scratch/notes.txt`, OpWrite, Allow, "writable"},
		{`\\fileserver\share\repo\x`, OpRead, Ask, "outside"},
		{`C:repo\x`, OpRead, Deny, "drive-relative"},
		{`\Users\Me\src\Repo\x`, OpRead, Deny, "drive-relative"},
		{`\\.\C:\Users\Me\src\Repo\x`, OpRead, Deny, "device"},
		{`C:\Users\Me\src\Repo\NUL`, OpWrite, Deny, "device"},
	} {
		d, why := p.DecidePath(c.path, c.op)
		if d != c.want || !strings.Contains(strings.ToLower(why), c.why) {
			t.Errorf("DecidePath(%q, %s) = %s (%s); want %s (%s)", c.path, c.op, d, why, c.want, c.why)
		}
	}
	// A session grant in one spelling covers the others.
	p.GrantPath(`C:\Users\Me\Other\Notes.TXT`, OpWrite)
	if d, why := p.DecidePath(`c:/users/me/other/notes.txt`, OpWrite); d != Allow {
		t.Errorf("session grant not matched across spellings: %s (%s)", d, why)
	}
}

// Unix paths are judged as they are: backslashes and trailing dots are part of a
// name; only the protected names are matched without regard to case.
func TestUnixPathsUnchanged(t *testing.T) {
	root := t.TempDir()
	p, err := NewPolicy(Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if p.win != nil {
		t.Skip("Windows semantics on this system")
	}
	for _, c := range []struct {
		rel  string
		want Decision
	}{
		{"/.git/config", Deny},
		{"/.GIT/config", Deny},  // the same file on macOS' case-insensitive APFS, so never written
		{"/.Lovia/x", Deny},     // likewise
		{`/.git\config`, Allow}, // one file name with a backslash
		{"/.git./config", Allow},
	} {
		if d, why := p.DecidePath(p.Root()+c.rel, OpWrite); d != c.want {
			t.Errorf("DecidePath(root%s) = %s (%s), want %s", c.rel, d, why, c.want)
		}
	}
}

// Pattern matches outside DecidePath (the guard naming a credential store, memory
// and mention checks) see the system's spelling and still match.
func TestWindowsPathsPatternMatchAnySpelling(t *testing.T) {
	p := windowsPolicy(t, Config{Policy: PresetCoding})
	for _, abs := range []string{`C:\Users\Me\.SSH\id_rsa`, `c:/users/me/.ssh./config`, `\\?\C:\Users\Me\.aws\credentials`} {
		found := false
		for _, c := range p.credentials {
			if c.match(abs, `C:\Users\Me\src\Repo`) {
				found = true
			}
		}
		if !found {
			t.Errorf("no credential pattern matches %s", abs)
		}
	}
	if _, ok := p.ownState(`C:\USERS\me\AppData\Roaming\lovia\trust.json`); !ok {
		t.Errorf("lovia's own state not recognised in another spelling")
	}
}
