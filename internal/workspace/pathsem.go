package workspace

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// Path semantics of the policy judge. On Unix a resolved path is already the one
// string that names a file, and the judge compares strings as they are (nothing
// here runs). Windows has many spellings of one file — C:\Repo\.git\config,
// c:/repo/.GIT/config, \\?\C:\repo\.git\config, C:\repo\.git.\config,
// C:\repo\.git\config:stream, C:\repo\GIT~1\config — so with windowsSemantics the
// judge first maps every path, and every path the policy holds, to one canonical
// form (lower case, '/' separated, volume first: "c:/repo/.git/config",
// "//server/share/x") and refuses the spellings it cannot map safely.

// winPaths is the Windows path semantics. longName expands 8.3 short names of
// existing files (GetLongPathName on Windows); nil expands nothing, and a short
// name left in a path is refused, since it may alias .git or a credential store.
type winPaths struct {
	longName func(string) string
}

var (
	errDevicePath    = errors.New(`device namespace paths (\\.\, \\?\GLOBALROOT, \??\) are not judged`)
	errDriveRelative = errors.New(`a drive-relative path (C:foo, \foo) depends on a per-drive current directory; use C:\foo`)
	errShortName     = errors.New("an 8.3 short name (such as GIT~1) may name a protected file; use the long name")
	errDeviceName    = errors.New("a reserved device name (CON, NUL, COM1, ...) is not a file")
)

// canon maps a Windows path to the canonical form or refuses it.
func (w winPaths) canon(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	for _, r := range p {
		if r < 0x20 {
			return "", fmt.Errorf("path %q contains a control character", p)
		}
	}
	if w.longName != nil {
		p = w.longName(p)
	}
	s := strings.ReplaceAll(p, `\`, "/")
	// Win32 prefixes: \\?\ (no normalisation by Windows; we normalise), \\.\ and
	// \??\ (devices and the NT namespace: refused).
	switch {
	case strings.HasPrefix(s, "//?/"):
		rest := s[4:]
		switch {
		case len(rest) >= 4 && strings.EqualFold(rest[:4], "unc/"):
			s = "//" + rest[4:]
		case len(rest) >= 3 && isDriveLetter(rest[0]) && rest[1] == ':' && rest[2] == '/':
			s = rest
		default:
			return "", errDevicePath
		}
	case strings.HasPrefix(s, "//./"), strings.HasPrefix(s, "/??/"):
		return "", errDevicePath
	}
	var vol, rest string
	switch {
	case len(s) >= 2 && isDriveLetter(s[0]) && s[1] == ':':
		if len(s) == 2 || s[2] != '/' {
			return "", errDriveRelative
		}
		vol, rest = strings.ToLower(s[:2])+"/", s[3:]
	case strings.HasPrefix(s, "//"):
		parts := strings.SplitN(s[2:], "/", 3)
		if len(parts) < 2 || parts[0] == "" || parts[1] == "" || parts[0] == "." || parts[0] == "?" {
			return "", fmt.Errorf("UNC path %q lacks a server and share", p)
		}
		vol = "//" + strings.ToLower(parts[0]) + "/" + strings.ToLower(parts[1])
		if len(parts) == 3 {
			rest = parts[2]
		}
	case strings.HasPrefix(s, "/"):
		return "", errDriveRelative
	default:
		return "", fmt.Errorf("path %q is not absolute", p)
	}
	var out []string
	for _, c := range strings.Split(rest, "/") {
		if c == "" || c == "." {
			continue
		}
		if c == ".." {
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			continue
		}
		// An alternate data stream (name:stream[:$DATA]) belongs to its file: judged
		// as the file.
		if i := strings.IndexByte(c, ':'); i >= 0 {
			c = c[:i]
		}
		// Win32 drops trailing dots and spaces: ".git." and ".git " are ".git".
		c = strings.TrimRight(c, ". ")
		if c == "" {
			return "", fmt.Errorf("path %q has a component Windows reduces to nothing", p)
		}
		c = strings.ToLower(c)
		if isShortName(c) {
			return "", errShortName
		}
		if isDeviceName(c) {
			return "", errDeviceName
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return vol, nil
	}
	if strings.HasSuffix(vol, "/") {
		return vol + strings.Join(out, "/"), nil
	}
	return vol + "/" + strings.Join(out, "/"), nil
}

// canonPattern maps an absolute path pattern (globs kept) like canon; patterns are
// the user's own, so only the spelling is normalised.
func (w winPaths) canonPattern(p string) string {
	if c, err := (winPaths{}).canon(p); err == nil {
		return c
	}
	return strings.ToLower(strings.ReplaceAll(p, `\`, "/"))
}

// parent is the directory above a canonical path; a volume root is its own parent.
func (winPaths) parent(c string) string {
	if vl := winVolumeLen(c); len(c) <= vl {
		return c
	}
	i := strings.LastIndexByte(c, '/')
	d := c[:i]
	if vl := winVolumeLen(c); len(d) < vl || i == vl-1 {
		return c[:vl]
	}
	return d
}

// winVolumeLen is the length of the volume root of a canonical path: "c:/" or
// "//server/share".
func winVolumeLen(c string) int {
	if len(c) >= 3 && c[1] == ':' && c[2] == '/' {
		return 3
	}
	if strings.HasPrefix(c, "//") {
		n := 2
		for i, parts := 2, 0; i < len(c); i++ {
			if c[i] == '/' {
				parts++
				if parts == 2 {
					return i
				}
			}
			n = i + 1
		}
		return n
	}
	return 0
}

func isDriveLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// isShortName reports a component shaped like an 8.3 alias: NAME~N[.EXT].
func isShortName(c string) bool {
	i := strings.LastIndexByte(c, '~')
	if i < 0 || i+1 >= len(c) {
		return false
	}
	j := i + 1
	for j < len(c) && c[j] >= '0' && c[j] <= '9' {
		j++
	}
	return j > i+1 && (j == len(c) || c[j] == '.')
}

// isDeviceName reports the names Win32 maps to devices in every directory, with
// any extension (nul.txt is NUL too).
func isDeviceName(c string) bool {
	base := c
	if i := strings.IndexByte(base, '.'); i >= 0 {
		base = base[:i]
	}
	base = strings.TrimRight(base, " ")
	switch base {
	case "con", "prn", "aux", "nul", "conin$", "conout$":
		return true
	}
	if len(base) == 4 && (strings.HasPrefix(base, "com") || strings.HasPrefix(base, "lpt")) && base[3] >= '0' && base[3] <= '9' {
		return true
	}
	if (strings.HasPrefix(base, "com") || strings.HasPrefix(base, "lpt")) && (base[3:] == "¹" || base[3:] == "²" || base[3:] == "³") {
		return true
	}
	return false
}

// useWindowsPaths switches p to Windows path semantics and maps what it holds to the
// canonical form (NewPolicy on Windows; tests on any system).
func (p *Policy) useWindowsPaths(w winPaths) {
	p.win = &w
	c := func(s string) string {
		if s == "" {
			return ""
		}
		if v, err := w.canon(s); err == nil {
			return v
		}
		return w.canonPattern(s)
	}
	p.root, p.home, p.tmp = c(p.root), c(p.home), c(p.tmp)
	for _, l := range []*[]string{&p.own, &p.readable, &p.writable} {
		for i := range *l {
			(*l)[i] = c((*l)[i])
		}
	}
	fix := func(pp *pathPattern) {
		pp.win = true
		if pp.kind == 0 {
			pp.pat = w.canonPattern(pp.pat)
		} else {
			pp.pat = strings.ToLower(strings.ReplaceAll(pp.pat, `\`, "/"))
		}
		pp.literal = !strings.ContainsAny(pp.pat, "*?[{")
	}
	for i := range p.credentials {
		fix(&p.credentials[i])
	}
	for i := range p.denied {
		fix(&p.denied[i])
	}
	for i := range p.rules {
		fix(&p.rules[i].pathPattern)
	}
}

// judged maps abs to the form the judge compares: itself on Unix, the canonical
// form with Windows semantics (or why it is refused).
func (p *Policy) judged(abs string) (string, error) {
	if p.win == nil {
		return abs, nil
	}
	return p.win.canon(abs)
}

// winLoose is canon where it succeeds, else the path lower-cased with '/'
// separators (a refused spelling is denied by DecidePath; a mere match on it fails).
func winLoose(p string) string {
	if c, err := (winPaths{}).canon(p); err == nil {
		return c
	}
	return strings.ToLower(strings.ReplaceAll(p, `\`, "/"))
}

// parentDir is the directory above q in a pattern's semantics; a root is its own.
func (pp pathPattern) parentDir(q string) string {
	if pp.win {
		return winPaths{}.parent(q)
	}
	return filepath.Dir(q)
}

// relDir is path.Dir for the slash-separated relative paths of root-relative
// patterns (the same on every system).
func relDir(q string) string { return path.Dir(q) }
