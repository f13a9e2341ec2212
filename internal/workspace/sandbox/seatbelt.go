package sandbox

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"
)

// SandboxExecPath is macOS's Seatbelt launcher: sandbox-exec -p PROFILE -- ARGV.
const SandboxExecPath = "/usr/bin/sandbox-exec"

// SeatbeltSpec is what a Seatbelt (macOS) profile confines one command to. Paths are
// absolute and already resolved the way the kernel sees them (/private/tmp, not
// /tmp): Seatbelt matches the path of the file actually reached, after symbolic links.
type SeatbeltSpec struct {
	// Writable directories: read, write, create, delete below them.
	Writable []string
	// Protect are never written, created, removed or renamed (.git/config, .git/hooks,
	// .lovia), whether they exist yet or not.
	Protect []string
	// Hide are neither read nor written (credential stores).
	Hide []string
	// Network allows sockets (TCP/UDP, DNS); without it the command has none.
	Network bool
}

// SBPLString renders s as an SBPL (Seatbelt profile language, a Scheme) string
// literal. Only '"' and '\' need escaping; control characters and invalid UTF-8 are
// refused rather than escaped, so no path can end the literal or start a new form.
func SBPLString(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("path %q is not valid UTF-8; a Seatbelt profile cannot name it", s)
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return "", fmt.Errorf("path %q contains a control character; a Seatbelt profile does not name it", s)
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String(), nil
}

// seatbeltBase is what every command gets: processes, reading the system's state,
// terminals. Everything else starts denied. Modelled on the policies Chrome and
// Codex use for sandbox-exec, trimmed to what command-line tools need.
const seatbeltBase = `(version 1)
(deny default)

; processes: children inherit the profile
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))

; system state that ordinary tools read
(allow sysctl-read)
(allow user-preference-read)
(allow mach-host*)
(allow ipc-posix-sem)
(allow iokit-open (iokit-registry-entry-class "RootDomainUserClient"))
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.PowerManagement.control"))

; terminals and the standard device files
(allow pseudo-tty)
(allow file-read* file-write* file-ioctl (literal "/dev/ptmx"))
(allow file-write-data file-ioctl
  (literal "/dev/null")
  (literal "/dev/zero")
  (literal "/dev/tty")
  (literal "/dev/dtracehelper"))
(allow file-write-data (subpath "/dev/fd"))
`

// seatbeltNetwork is added when the command may use the network.
const seatbeltNetwork = `
; network (workspace.network allows it for this command)
(allow network*)
(allow system-socket)
(allow mach-lookup
  (global-name "com.apple.dnssd.service")
  (global-name "com.apple.SystemConfiguration.configd")
  (global-name "com.apple.SystemConfiguration.DNSConfiguration")
  (global-name "com.apple.trustd.agent")
  (global-name "com.apple.networkd"))
`

// SeatbeltProfile generates the SBPL profile for s. Rules only allow (the profile
// starts from deny default) and exclusions are require-not filters inside them, so
// the result does not depend on how Seatbelt orders conflicting rules. It fails
// rather than produce a profile that names a path it cannot quote.
func SeatbeltProfile(s SeatbeltSpec) (string, error) {
	writable, err := cleanAbs(s.Writable)
	if err != nil {
		return "", err
	}
	protect, err := cleanAbs(s.Protect)
	if err != nil {
		return "", err
	}
	hide, err := cleanAbs(s.Hide)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(seatbeltBase)

	b.WriteString("\n; reads: everything but the credential stores\n")
	if len(hide) == 0 {
		b.WriteString("(allow file-read*)\n")
	} else {
		b.WriteString("(allow file-read*\n  (require-all")
		for _, h := range hide {
			fmt.Fprintf(&b, "\n    (require-not (subpath %s))", quote(h))
			fmt.Fprintf(&b, "\n    (require-not (regex %s))", caseFoldRegex(h, true))
		}
		b.WriteString("))\n")
	}

	if len(writable) > 0 {
		// A protected path cannot be replaced by renaming a directory on the way to
		// it either: those directories, where a command could write them, are
		// denied as literals (their contents stay writable).
		var keep []string
		for _, p := range append(append([]string(nil), protect...), hide...) {
			for d := path.Dir(p); ; d = path.Dir(d) {
				if insideAny(d, writable) {
					keep = append(keep, d)
				}
				if d == "/" {
					break
				}
			}
		}
		slices.Sort(keep)
		keep = slices.Compact(keep)

		b.WriteString("\n; writes: only below the writable directories, never to the protected paths\n")
		b.WriteString("(allow file-write*\n  (require-all\n    (require-any")
		for _, w := range writable {
			fmt.Fprintf(&b, "\n      (subpath %s)", quote(w))
		}
		b.WriteString(")")
		for _, p := range append(append([]string(nil), protect...), hide...) {
			fmt.Fprintf(&b, "\n    (require-not (subpath %s))", quote(p))
			fmt.Fprintf(&b, "\n    (require-not (regex %s))", caseFoldRegex(p, true))
		}
		for _, d := range keep {
			fmt.Fprintf(&b, "\n    (require-not (literal %s))", quote(d))
			fmt.Fprintf(&b, "\n    (require-not (regex %s))", caseFoldRegex(d, false))
		}
		b.WriteString("))\n")
	}

	if s.Network {
		b.WriteString(seatbeltNetwork)
	} else {
		b.WriteString("\n; no network: no socket rule is allowed\n")
	}
	return b.String(), nil
}

// caseFoldRegex is an SBPL regex literal matching p in any letter case (and, with
// below, everything under it): macOS volumes are usually case-insensitive, so
// .GIT/hooks is .git/hooks, and the exact-case subpath and literal rules alone
// might not see it. It only ever widens a denial: a byte that is not an ASCII
// letter, digit or plain punctuation (quotes, backslashes, brackets, non-ASCII)
// becomes ".*", so nothing in p can end the literal or narrow the match.
func caseFoldRegex(p string, below bool) string {
	rx := `#"^` + CaseFold(p)
	if below {
		rx += "(/.*)?"
	}
	return rx + `$"`
}

// CaseFold is the regex body caseFoldRegex writes for p (exported for tests that
// replace a temporary directory in golden profiles).
func CaseFold(p string) string {
	var b strings.Builder
	wild := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			lo, up := c|0x20, c&^0x20
			b.WriteString("[" + string(up) + string(lo) + "]")
		case c >= '0' && c <= '9' || c == '/':
			b.WriteByte(c)
		case strings.IndexByte(" .-_~@+,=%:!#&';<>`*?(){}|$", c) >= 0:
			b.WriteString("[" + string(c) + "]")
		default:
			if !wild {
				b.WriteString(".*")
			}
			wild = true
			continue
		}
		wild = false
	}
	return b.String()
}

// quote is SBPLString for a path cleanAbs already accepted.
func quote(p string) string {
	q, err := SBPLString(p)
	if err != nil {
		panic("sandbox: unchecked path in a Seatbelt profile: " + err.Error())
	}
	return q
}

// cleanAbs checks, cleans, sorts and de-duplicates absolute paths.
func cleanAbs(ps []string) ([]string, error) {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if !strings.HasPrefix(p, "/") {
			return nil, fmt.Errorf("seatbelt profile: path %q is not absolute", p)
		}
		c := path.Clean(p)
		if _, err := SBPLString(c); err != nil {
			return nil, fmt.Errorf("seatbelt profile: %w", err)
		}
		out = append(out, c)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// insideAny reports whether d is one of dirs or below one of them.
func insideAny(d string, dirs []string) bool {
	for _, w := range dirs {
		if d == w || w == "/" || strings.HasPrefix(d, w+"/") {
			return true
		}
	}
	return false
}

// SeatbeltArgs is the argv of sandbox-exec running path with argv[1:] under profile.
// sandbox-exec runs path itself, so argv[0] as written is not passed on.
func SeatbeltArgs(profile, path string, argv []string) []string {
	out := []string{SandboxExecPath, "-p", profile, "--", path}
	if len(argv) > 1 {
		out = append(out, argv[1:]...)
	}
	return out
}
