package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// A small reader and checker of the SBPL subset the generator writes, so the tests
// on Linux can say a profile would be read by sandbox-exec as intended: balanced
// parentheses, only known operations and filters, string literals with only the \"
// and \\ escapes, absolute paths in path filters.

type sexp struct {
	kind int    // kSym, kStr, kRegex or kList
	atom string // kSym
	str  string // kStr, unescaped; kRegex, as written
	list []sexp // kList
}

const (
	kSym = iota
	kStr
	kList
	kRegex
)

func parseSBPL(src string) ([]sexp, error) {
	p := &sbplReader{s: src}
	var out []sexp
	for {
		p.skip()
		if p.i >= len(p.s) {
			return out, nil
		}
		e, err := p.read(0)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
}

type sbplReader struct {
	s string
	i int
}

func (p *sbplReader) skip() {
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == ' ' || c == '\n' || c == '\t':
			p.i++
		case c == ';':
			for p.i < len(p.s) && p.s[p.i] != '\n' {
				p.i++
			}
		default:
			return
		}
	}
}

func (p *sbplReader) read(depth int) (sexp, error) {
	if depth > 50 {
		return sexp{}, errors.New("nested too deep")
	}
	p.skip()
	if p.i >= len(p.s) {
		return sexp{}, errors.New("unexpected end of profile")
	}
	switch c := p.s[p.i]; {
	case c == '(':
		p.i++
		var l []sexp
		for {
			p.skip()
			if p.i >= len(p.s) {
				return sexp{}, errors.New("unbalanced: missing )")
			}
			if p.s[p.i] == ')' {
				p.i++
				return sexp{list: l, kind: kList}, nil
			}
			e, err := p.read(depth + 1)
			if err != nil {
				return sexp{}, err
			}
			l = append(l, e)
		}
	case c == ')':
		return sexp{}, fmt.Errorf("unbalanced: ) at %d", p.i)
	case c == '#' && p.i+1 < len(p.s) && p.s[p.i+1] == '"':
		// A regex literal runs to the next quote; the generator writes neither
		// quotes nor backslashes inside one.
		end := strings.IndexByte(p.s[p.i+2:], '"')
		if end < 0 {
			return sexp{}, errors.New("unterminated regex")
		}
		rx := p.s[p.i+2 : p.i+2+end]
		if strings.ContainsAny(rx, "\\\n") {
			return sexp{}, fmt.Errorf("regex %q holds a backslash or newline", rx)
		}
		p.i += end + 3
		return sexp{str: rx, kind: kRegex}, nil
	case c == '"':
		p.i++
		var b strings.Builder
		for {
			if p.i >= len(p.s) {
				return sexp{}, errors.New("unterminated string")
			}
			c := p.s[p.i]
			switch {
			case c == '"':
				p.i++
				return sexp{str: b.String(), kind: kStr}, nil
			case c == '\\':
				if p.i+1 >= len(p.s) {
					return sexp{}, errors.New("escape at end")
				}
				n := p.s[p.i+1]
				if n != '"' && n != '\\' {
					return sexp{}, fmt.Errorf("escape \\%c is not one the generator writes", n)
				}
				b.WriteByte(n)
				p.i += 2
			case c < 0x20 || c == 0x7f:
				return sexp{}, fmt.Errorf("raw control character %#x in a string", c)
			default:
				b.WriteByte(c)
				p.i++
			}
		}
	default:
		start := p.i
		for p.i < len(p.s) && !strings.ContainsRune(" \n\t();\"", rune(p.s[p.i])) {
			p.i++
		}
		sym := p.s[start:p.i]
		for _, r := range sym {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-*._", r)) {
				return sexp{}, fmt.Errorf("bad symbol %q", sym)
			}
		}
		return sexp{atom: sym, kind: kSym}, nil
	}
}

var sbplOps = map[string]bool{
	"default": true, "process-exec": true, "process-fork": true, "signal": true, "process-info*": true,
	"sysctl-read": true, "user-preference-read": true, "mach-host*": true, "ipc-posix-sem": true,
	"iokit-open": true, "mach-lookup": true, "pseudo-tty": true, "file-read*": true, "file-write*": true,
	"file-ioctl": true, "file-write-data": true, "network*": true, "system-socket": true,
}

// filter name -> the kind of its arguments: "path" (one absolute string), "name"
// (one string), "sym" (one symbol), "filters" (nested filters).
var sbplFilters = map[string]string{
	"subpath": "path", "literal": "path", "global-name": "name", "iokit-registry-entry-class": "name",
	"target": "sym", "regex": "regex", "require-all": "filters", "require-any": "filters", "require-not": "filters",
}

// checkSBPL validates a parsed profile and returns every path a filter names.
func checkSBPL(forms []sexp) (paths []string, err error) {
	if len(forms) == 0 || forms[0].kind != kList || len(forms[0].list) != 2 || forms[0].list[0].atom != "version" || forms[0].list[1].atom != "1" {
		return nil, errors.New("the profile does not start with (version 1)")
	}
	var filter func(e sexp) error
	filter = func(e sexp) error {
		if e.kind != kList || len(e.list) == 0 || e.list[0].kind != kSym {
			return fmt.Errorf("a filter must be a list headed by a symbol: %+v", e)
		}
		args := e.list[1:]
		switch kind := sbplFilters[e.list[0].atom]; kind {
		case "path", "name":
			if len(args) != 1 || args[0].kind != kStr {
				return fmt.Errorf("(%s) takes one string", e.list[0].atom)
			}
			if kind == "path" {
				if !strings.HasPrefix(args[0].str, "/") {
					return fmt.Errorf("path %q is not absolute", args[0].str)
				}
				paths = append(paths, args[0].str)
			}
		case "regex":
			if len(args) != 1 || args[0].kind != kRegex {
				return fmt.Errorf("(regex) takes one #\"...\" literal")
			}
			if !strings.HasPrefix(args[0].str, "^/") || !strings.HasSuffix(args[0].str, "$") {
				return fmt.Errorf("regex %q is not anchored at an absolute path", args[0].str)
			}
			if _, err := regexp.CompilePOSIX(args[0].str); err != nil {
				return fmt.Errorf("regex %q: %w", args[0].str, err)
			}
		case "sym":
			if len(args) != 1 || args[0].kind != kSym {
				return fmt.Errorf("(%s) takes one symbol", e.list[0].atom)
			}
		case "filters":
			if len(args) == 0 || e.list[0].atom == "require-not" && len(args) != 1 {
				return fmt.Errorf("(%s) has the wrong number of filters", e.list[0].atom)
			}
			for _, a := range args {
				if err := filter(a); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("unknown filter %q", e.list[0].atom)
		}
		return nil
	}
	for _, f := range forms[1:] {
		if f.kind != kList || len(f.list) < 2 || f.list[0].kind != kSym {
			return nil, fmt.Errorf("a rule must be (allow|deny OPERATION... FILTER...): %+v", f)
		}
		if a := f.list[0].atom; a != "allow" && a != "deny" {
			return nil, fmt.Errorf("unknown rule %q", a)
		}
		i := 1
		for ; i < len(f.list) && f.list[i].kind == kSym; i++ {
			if !sbplOps[f.list[i].atom] {
				return nil, fmt.Errorf("unknown operation %q", f.list[i].atom)
			}
		}
		if i == 1 {
			return nil, errors.New("a rule without an operation")
		}
		for ; i < len(f.list); i++ {
			if err := filter(f.list[i]); err != nil {
				return nil, err
			}
		}
	}
	return paths, nil
}

func mustCheck(t *testing.T, prof string) []string {
	t.Helper()
	forms, err := parseSBPL(prof)
	if err != nil {
		t.Fatalf("profile does not parse: %v\n%s", err, prof)
	}
	paths, err := checkSBPL(forms)
	if err != nil {
		t.Fatalf("profile is not valid SBPL: %v\n%s", err, prof)
	}
	return paths
}

// The reader itself rejects what it must (so a passing check means something).
func TestSBPLReaderRejectsBrokenProfiles(t *testing.T) {
	for _, bad := range []string{
		`(version 1) (allow file-read*`,
		`(version 1) (allow file-read*))`,
		`(version 1) (allow file-write* (subpath "/a))`,
		`(version 1) (allow file-write* (subpath "/a\n"))`,
		`(version 1) (allow file-write* (subpath "relative"))`,
		`(version 1) (allow file-writ* (subpath "/a"))`,
		`(version 1) (allow file-write* (regex "/a"))`,
		`(version 1) (permit file-write*)`,
		`(allow file-read*)`,
		"(version 1) (allow file-write* (subpath \"/a\n\"))",
		`(version 1) (allow file-write* (require-not (subpath "/a") (subpath "/b")))`,
		`(version 1) (allow file-write* (regex #"^/a[$"))`,
		`(version 1) (allow file-write* (regex #"a$"))`,
		`(version 1) (allow file-write* (regex #"^/a\"/b$"))`,
		`(version 1) (allow file-write* (regex "^/a$"))`,
	} {
		forms, err := parseSBPL(bad)
		if err == nil {
			_, err = checkSBPL(forms)
		}
		if err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func TestSBPLStringEscapesQuotesAndBackslashes(t *testing.T) {
	for in, want := range map[string]string{
		`/a/b`:                    `"/a/b"`,
		`/a "b"/c`:                `"/a \"b\"/c"`,
		`/a\b`:                    `"/a\\b"`,
		`/x\"))(allow default)(;`: `"/x\\\"))(allow default)(;"`,
		`/(paren)/;semi`:          `"/(paren)/;semi"`,
		`/ünï/código`:             `"/ünï/código"`,
	} {
		got, err := SBPLString(in)
		if err != nil || got != want {
			t.Errorf("SBPLString(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"/a\nb", "/a\x00b", "/a\rb", "/a\tb", "/a\x7fb", "/a\xffb", "/a\u0085b"} {
		if got, err := SBPLString(bad); err == nil {
			t.Errorf("SBPLString(%q) = %s, want a refusal", bad, got)
		}
	}
}

// A hostile path must stay one string literal and name exactly itself.
func TestSeatbeltProfileHostilePaths(t *testing.T) {
	hostile := `/tmp/x") (allow file-write* (subpath "/")) ("`
	prof, err := SeatbeltProfile(SeatbeltSpec{Writable: []string{hostile, `/tmp/back\slash\`}, Protect: []string{`/tmp/x"/.git/config`}})
	if err != nil {
		t.Fatal(err)
	}
	paths := mustCheck(t, prof)
	for _, p := range paths {
		if p == "/" {
			t.Fatalf("a path broke out of its literal: the profile names / \n%s", prof)
		}
	}
	for _, want := range []string{hostile, `/tmp/back\slash\`, `/tmp/x"/.git/config`} {
		if !contains(paths, want) {
			t.Errorf("profile does not name %q; it names %q", want, paths)
		}
	}
	for _, bad := range []SeatbeltSpec{
		{Writable: []string{"/tmp/a\nb"}},
		{Protect: []string{"/r/.git/config\x00"}},
		{Hide: []string{"relative/.ssh"}},
		{Writable: []string{""}},
	} {
		if _, err := SeatbeltProfile(bad); err == nil {
			t.Errorf("SeatbeltProfile(%+v) accepted a path it cannot name", bad)
		}
	}
}

func TestSeatbeltProfileRules(t *testing.T) {
	spec := SeatbeltSpec{
		Writable: []string{"/r", "/private/tmp"},
		Protect:  []string{"/r/.git/config", "/r/.git/hooks", "/r/.lovia", "/r/vendor/x/.git/hooks"},
		Hide:     []string{"/Users/u/.ssh"},
	}
	prof, err := SeatbeltProfile(spec)
	if err != nil {
		t.Fatal(err)
	}
	forms, _ := parseSBPL(prof)
	mustCheck(t, prof)
	write := rulesFor(forms, "allow", "file-write*")
	if len(write) != 1 {
		t.Fatalf("want one file-write* rule, got %d\n%s", len(write), prof)
	}
	w := render(write[0])
	for _, want := range []string{
		`(subpath "/r")`, `(subpath "/private/tmp")`,
		`(require-not (subpath "/r/.git/config"))`, `(require-not (subpath "/r/.git/hooks"))`,
		`(require-not (subpath "/r/.lovia"))`, `(require-not (subpath "/Users/u/.ssh"))`,
		// the directories on the way to a protected path cannot be renamed
		`(require-not (literal "/r/.git"))`, `(require-not (literal "/r"))`,
		`(require-not (literal "/r/vendor/x/.git"))`, `(require-not (literal "/r/vendor"))`,
	} {
		if !strings.Contains(w, want) {
			t.Errorf("the write rule lacks %s:\n%s", want, w)
		}
	}
	if strings.Contains(w, `(literal "/Users`) {
		t.Errorf("directories outside the writable ones need no literal denial:\n%s", w)
	}
	read := rulesFor(forms, "allow", "file-read*")
	found := false
	for _, r := range read {
		if strings.Contains(render(r), `(require-not (subpath "/Users/u/.ssh"))`) {
			found = true
		}
		if len(r.list) == 2 {
			t.Errorf("an unconditional (allow file-read*) would show the hidden store")
		}
	}
	if !found {
		t.Errorf("reads do not exclude the hidden store\n%s", prof)
	}
	if len(rulesFor(forms, "allow", "network*")) != 0 || len(rulesFor(forms, "allow", "system-socket")) != 0 {
		t.Errorf("network rules without Network")
	}
	if len(rulesFor(forms, "deny", "")) != 1 {
		t.Errorf("only (deny default) is expected: exclusions are require-not filters")
	}
	spec.Network = true
	prof, _ = SeatbeltProfile(spec)
	forms, _ = parseSBPL(prof)
	mustCheck(t, prof)
	if len(rulesFor(forms, "allow", "network*")) != 1 {
		t.Errorf("Network: no network rule\n%s", prof)
	}
	// Without writable directories there is no write rule at all.
	prof, _ = SeatbeltProfile(SeatbeltSpec{})
	forms, _ = parseSBPL(prof)
	mustCheck(t, prof)
	if len(rulesFor(forms, "allow", "file-write*")) != 0 {
		t.Errorf("a write rule without writable directories\n%s", prof)
	}
}

func TestSeatbeltArgs(t *testing.T) {
	got := SeatbeltArgs("(version 1)", "/usr/bin/git", []string{"git", "-C", "x", "status"})
	want := []string{SandboxExecPath, "-p", "(version 1)", "--", "/usr/bin/git", "-C", "x", "status"}
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("SeatbeltArgs = %q, want %q", got, want)
	}
}

func FuzzSBPLString(f *testing.F) {
	for _, s := range []string{"/a", `/a"b`, `/a\b`, `\"`, `"))(allow default)`, "/a\nb", "\\\\\"", "/ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := SBPLString(s)
		if err != nil {
			return
		}
		if !utf8.ValidString(s) {
			t.Fatalf("accepted invalid UTF-8 %q", s)
		}
		r := &sbplReader{s: q}
		e, err := r.read(0)
		if err != nil {
			t.Fatalf("SBPLString(%q) = %s does not read back: %v", s, q, err)
		}
		if e.kind != kStr || e.str != s || r.i != len(q) {
			t.Fatalf("SBPLString(%q) = %s reads back as %+v (consumed %d of %d)", s, q, e, r.i, len(q))
		}
		// As a path in a whole profile: still valid, and named exactly.
		p := "/" + s
		prof, err := SeatbeltProfile(SeatbeltSpec{Writable: []string{p}, Protect: []string{p + "/.git/config"}, Hide: []string{"/h/" + s}})
		if err != nil {
			t.Fatalf("profile for %q: %v", p, err)
		}
		forms, err := parseSBPL(prof)
		if err != nil {
			t.Fatalf("profile for %q does not parse: %v", p, err)
		}
		paths, err := checkSBPL(forms)
		if err != nil {
			t.Fatalf("profile for %q is invalid: %v", p, err)
		}
		// Every path the profile names is one given, an ancestor of one, or a device.
		known := map[string]bool{"/dev/ptmx": true, "/dev/null": true, "/dev/zero": true, "/dev/tty": true, "/dev/dtracehelper": true, "/dev/fd": true}
		for _, x := range []string{p, p + "/.git/config", "/h/" + s} {
			for c := path.Clean(x); ; c = path.Dir(c) {
				known[c] = true
				if c == "/" {
					break
				}
			}
		}
		for _, got := range paths {
			if !known[got] {
				t.Fatalf("path %q put %q into the profile", p, got)
			}
		}
	})
}

func rulesFor(forms []sexp, verb, op string) []sexp {
	var out []sexp
	for _, f := range forms {
		if f.kind != kList || len(f.list) < 2 || f.list[0].atom != verb {
			continue
		}
		if op == "" {
			out = append(out, f)
			continue
		}
		// Rules whose only operation is op.
		if f.list[1].kind == kSym && f.list[1].atom == op && (len(f.list) == 2 || f.list[2].kind == kList) {
			out = append(out, f)
		}
	}
	return out
}

func render(e sexp) string {
	switch e.kind {
	case kSym:
		return e.atom
	case kStr:
		q, _ := SBPLString(e.str)
		return q
	case kRegex:
		return `#"` + e.str + `"`
	}
	parts := make([]string, len(e.list))
	for i, x := range e.list {
		parts[i] = render(x)
	}
	return "(" + strings.Join(parts, " ") + ")"
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// The golden profiles of each policy (written by the workspace package's
// TestSeatbeltGoldenProfiles) are valid SBPL too.
func TestSeatbeltGoldenProfilesAreValidSBPL(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "seatbelt", "*.sb"))
	if err != nil || len(files) < 5 {
		t.Fatalf("golden profiles: %v, %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		mustCheck(t, strings.ReplaceAll(string(b), "$BASE", "/base")) // the test's temp dir
	}
}

// The case-folded rules match the path in every case, and what lies below it; they
// stay one literal whatever the path holds.
func TestCaseFoldRegex(t *testing.T) {
	for _, p := range []string{"/Users/me/src/repo/.git/hooks", `/r/we"ird\name/.git/config`, "/r/josé/[x]^/.lovia", "/r/a b(c)|d$/.git"} {
		checkCaseFold(t, p)
	}
	prof, _ := SeatbeltProfile(SeatbeltSpec{Writable: []string{"/r"}, Protect: []string{"/r/.git/hooks"}})
	if !strings.Contains(prof, `(require-not (regex #"^/[Rr]/[.][Gg][Ii][Tt]/[Hh][Oo][Oo][Kk][Ss](/.*)?$"))`) {
		t.Errorf("no case-folded rule for .git/hooks:\n%s", prof)
	}
	if !strings.Contains(prof, `(require-not (regex #"^/[Rr]/[.][Gg][Ii][Tt]$"))`) {
		t.Errorf("no case-folded rule for the .git directory itself:\n%s", prof)
	}
}

func checkCaseFold(t *testing.T, p string) {
	t.Helper()
	lit := caseFoldRegex(p, true)
	r := &sbplReader{s: lit}
	e, err := r.read(0)
	if err != nil || e.kind != kRegex || r.i != len(lit) {
		t.Fatalf("caseFoldRegex(%q) = %s: not one regex literal (%v)", p, lit, err)
	}
	rx, err := regexp.CompilePOSIX(e.str)
	if err != nil {
		t.Fatalf("caseFoldRegex(%q) = %s: %v", p, lit, err)
	}
	for _, v := range []string{p, strings.ToUpper(p), strings.ToLower(p), p + "/x", p + "/a/b"} {
		if !rx.MatchString(v) {
			t.Errorf("caseFoldRegex(%q) = %s does not match %q", p, lit, v)
		}
	}
	if rx.MatchString(p+"x") && !strings.Contains(e.str, ".*") {
		t.Errorf("caseFoldRegex(%q) = %s matches a sibling %q", p, lit, p+"x")
	}
}

func FuzzCaseFoldRegex(f *testing.F) {
	for _, s := range []string{"/a", `/a"b`, `/a\b`, "/[x]", "/ü/.GIT", "/a$b^c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := "/" + s
		if _, err := SBPLString(p); err != nil {
			return // refused before any rule is written
		}
		checkCaseFold(t, p)
	})
}
