package doctor

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Each platform's sandbox line says what confines commands there, plainly.
func TestSandboxPerPlatform(t *testing.T) {
	seatbeltOK := func(context.Context) error { return nil }
	seatbeltGone := func(context.Context) error { return errors.New("stat /usr/bin/sandbox-exec: no such file") }
	for _, c := range []struct {
		name, goos, config string
		seatbelt           func(context.Context) error
		want               Status
		detail, fix        string
	}{
		{"macOS with Seatbelt", "darwin", "", seatbeltOK, OK, "Seatbelt (sandbox-exec)", ""},
		{"macOS network deny", "darwin", "workspace:\n  network: deny\n", seatbeltOK, OK, "not even localhost (workspace.network: deny)", ""},
		{"macOS says it is untested on a Mac", "darwin", "", seatbeltOK, OK, "has not run it on a Mac", ""},
		{"macOS without sandbox-exec", "darwin", "", seatbeltGone, Warn, "policy checks only", "sandbox-exec"},
		{"macOS required without sandbox-exec", "darwin", "workspace:\n  sandbox: required\n", seatbeltGone, Fail, "unavailable", "required"},
		{"macOS off", "darwin", "workspace:\n  sandbox: off\n", seatbeltOK, Warn, "off in config", "sandbox: off"},
		{"Windows", "windows", "", nil, Warn, "no sandbox on windows", "Linux"},
		{"Windows required", "windows", "workspace:\n  sandbox: required\n", nil, Fail, "guard", "set it to auto"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			if c.config != "" {
				e.writeProjectConfig(c.config)
			}
			rs := e.run(Options{Flags: e.script(), GOOS: c.goos, Seatbelt: c.seatbelt})
			r := find(t, rs, "sandbox")
			if r.Status != c.want || !strings.Contains(r.Detail, c.detail) || !strings.Contains(r.Fix, c.fix) {
				t.Errorf("sandbox = %+v; want %s with %q and fix %q", r, c.want, c.detail, c.fix)
			}
			for _, r := range rs {
				if strings.HasPrefix(r.Check, "sandbox ") {
					t.Errorf("a Linux layer is reported on %s: %+v", c.goos, r)
				}
			}
		})
	}
}
