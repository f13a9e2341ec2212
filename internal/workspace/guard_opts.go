package workspace

import (
	"sort"
	"strings"
)

// The guard parses a command's options the way the program itself does (getopt_long:
// short-option clusters, attached values, GNU long-option abbreviations, "--"), so
// that "-tDIR", "-C/x", "--targ=/x" and "--in-pl" are seen for what they are.

// argKind is whether an option takes a value.
type argKind uint8

const (
	argNone argKind = iota
	argReq          // a value: attached (-ofile, --out=file) or the next word
	argOpt          // an optional value, attached only (-i.bak, --in-place=.bak)
	argTwo          // two following words (jq --arg NAME VALUE); the effect is on the second
)

// Effect letters of an option (a spec token's suffix):
//
//	r  its value is a path the program reads
//	R  its value is a directory the program reads recursively
//	w  its value is a path the program writes
//	l  its value is a file naming further files to read (they are unknown)
//	d  its value is the directory the program works in (operands are relative to it)
//	x  it runs other programs or code, or acts beyond reading: never without approval
//	W  the operands are written (sed -i)
//	c  the operands are read recursively
//	L  recursion follows symbolic links
//	s  the script or pattern comes from the option (the first operand is not one)
//	a  the operands after the first are arguments, not files (jq --args)
type optDef struct {
	name string // as written: "-o", "--output", or "-name" for one-dash long options
	arg  argKind
	eff  string
}

func (o *optDef) has(e byte) bool { return strings.IndexByte(o.eff, e) >= 0 }

// optSpec is how one program parses its options.
type optSpec struct {
	short map[byte]*optDef
	long  map[string]*optDef // without the leading "--" (or "-" when oneDash)
	names []string           // sorted long names, for abbreviations
	// exact: long options must be spelled out (programs that do not accept
	// abbreviations, or whose option list here is not complete).
	exact bool
	// num: -NUM is an option (head -5, grep -3).
	num bool
	// posix: options end at the first operand (wrappers: env, nice, xargs ...).
	posix bool
	// oneDash: options are whole words after one dash (xxd -cols, find -name); the
	// first letter of a word with an unknown name may carry an attached value (-c8).
	oneDash bool
}

// opts compiles a spec: whitespace-separated tokens NAME[KIND[EFFECTS]] where NAME is
// -x or --long, KIND is "=" (takes a value), "?" (optional attached value), "%"
// (two values) or ":" (no value, effects follow). Flags "+exact", "+num", "+posix",
// "+onedash" set the parse mode.
func opts(s string) *optSpec {
	sp := &optSpec{short: map[byte]*optDef{}, long: map[string]*optDef{}}
	for _, tok := range strings.Fields(s) {
		switch tok {
		case "+exact":
			sp.exact = true
			continue
		case "+num":
			sp.num = true
			continue
		case "+posix":
			sp.posix = true
			continue
		case "+onedash":
			sp.oneDash, sp.exact = true, true
			continue
		}
		name, kind, eff := tok, argNone, ""
		if i := strings.IndexAny(tok[1:], "=?%:"); i >= 0 {
			name, eff = tok[:i+1], tok[i+2:]
			switch tok[i+1] {
			case '=':
				kind = argReq
			case '?':
				kind = argOpt
			case '%':
				kind = argTwo
			}
		}
		d := &optDef{name: name, arg: kind, eff: eff}
		switch {
		case strings.HasPrefix(name, "--"):
			sp.long[name[2:]] = d
		case sp.oneDash:
			sp.long[name[1:]] = d
			if len(name) == 2 {
				sp.short[name[1]] = d
			}
		case len(name) == 2:
			sp.short[name[1]] = d
		default:
			panic("workspace: bad option spec token " + tok)
		}
	}
	for n := range sp.long {
		sp.names = append(sp.names, n)
	}
	sort.Strings(sp.names)
	return sp
}

// popt is one option as parsed.
type popt struct {
	def    *optDef
	val    word // the value (the second one for argTwo)
	hasVal bool
	as     string // as written, for messages
	at     int    // index of the word it starts in
}

// parsed is a command line split into options and operands.
type parsed struct {
	opts     []popt
	operands []word
	// unknown is the first option the spec does not know ("" when none).
	unknown string
	// dynamic: some word is only known at run time (it might be an option).
	dynamic bool
	// first is the index in the words of the first operand (0: none).
	first int
	// opAt are the indices of the operands in the words.
	opAt []int
	// late are the option words (and values) after the first operand: a program
	// that does not permute its arguments (BSD, POSIXLY_CORRECT) reads them as files.
	late []word
}

func (p *parsed) operand(w word, i int) {
	if p.first == 0 {
		p.first = i
	}
	p.operands = append(p.operands, w)
	p.opAt = append(p.opAt, i)
}

func (p *parsed) rest(ws []word, from int) {
	for k := from; k < len(ws); k++ {
		p.operand(ws[k], k)
	}
}

func (p *parsed) has(e byte) bool {
	for _, o := range p.opts {
		if o.def.has(e) {
			return true
		}
	}
	return false
}

func (p *parsed) hasName(n string) bool {
	for _, o := range p.opts {
		if o.def.name == n {
			return true
		}
	}
	return false
}

// lookupLong resolves a long option name, GNU style: an exact match, or a unique
// prefix (several matches are fine when they all mean the same).
func (sp *optSpec) lookupLong(n string) *optDef {
	if d := sp.long[n]; d != nil {
		return d
	}
	if sp.exact || n == "" {
		return nil
	}
	i := sort.SearchStrings(sp.names, n)
	var found *optDef
	for ; i < len(sp.names) && strings.HasPrefix(sp.names[i], n); i++ {
		d := sp.long[sp.names[i]]
		if found != nil && (found.arg != d.arg || found.eff != d.eff) {
			return nil // ambiguous: the program refuses it, so treat it as unknown
		}
		if found == nil {
			found = d
		}
	}
	return found
}

// parse splits ws[1:] by the spec.
func (sp *optSpec) parse(ws []word) *parsed {
	p := &parsed{}
	unknown := func(s string) {
		if p.unknown == "" {
			p.unknown = s
		}
	}
	next := func(i *int) (word, bool) {
		if *i+1 < len(ws) {
			*i++
			return ws[*i], true
		}
		return word{}, false
	}
	for i := 1; i < len(ws); i++ {
		w := ws[i]
		if w.dyn {
			p.dynamic = true
			p.operand(w, i)
			if sp.posix {
				p.rest(ws, i+1)
				return p
			}
			continue
		}
		s := w.lit
		if s == "--" {
			p.rest(ws, i+1)
			return p
		}
		if len(s) < 2 || s[0] != '-' {
			p.operand(w, i)
			if sp.posix {
				p.rest(ws, i+1)
				return p
			}
			continue
		}
		if p.first != 0 {
			p.late = append(p.late, w)
			if i+1 < len(ws) {
				p.late = append(p.late, ws[i+1])
			}
		}
		if sp.num && isDigits(s[1:]) {
			p.opts = append(p.opts, popt{def: &optDef{name: "-NUM"}, as: s, at: i})
			continue
		}
		if strings.HasPrefix(s, "--") || sp.oneDash {
			body := strings.TrimPrefix(strings.TrimPrefix(s, "-"), "-")
			name, val, eq := strings.Cut(body, "=")
			d := sp.lookupLong(name)
			if d == nil && sp.oneDash && !strings.HasPrefix(s, "--") {
				// -c8: a one-letter option with its value attached.
				if sd := sp.short[s[1]]; sd != nil && sd.arg == argReq {
					p.opts = append(p.opts, popt{def: sd, val: word{lit: s[2:], src: s[2:]}, hasVal: true, as: s, at: i})
					continue
				}
			}
			if d == nil {
				unknown(s)
				continue
			}
			o := popt{def: d, as: s, at: i}
			switch d.arg {
			case argNone:
				if eq {
					unknown(s)
					continue
				}
			case argOpt:
				if eq {
					o.val, o.hasVal = word{lit: val, src: val}, true
				}
			case argReq:
				if eq {
					o.val, o.hasVal = word{lit: val, src: val}, true
				} else if v, ok := next(&i); ok {
					o.val, o.hasVal = v, true
				} else {
					unknown(s)
					continue
				}
			case argTwo:
				if _, ok := next(&i); !ok {
					unknown(s)
					continue
				}
				if v, ok := next(&i); ok {
					o.val, o.hasVal = v, true
				} else {
					unknown(s)
					continue
				}
			}
			p.opts = append(p.opts, o)
			continue
		}
		// A cluster of short options: -rnf, -tDIR, -C/x, -n5.
		for j := 1; j < len(s); j++ {
			d := sp.short[s[j]]
			if d == nil {
				unknown(s)
				break
			}
			o := popt{def: d, as: "-" + s[j:j+1], at: i}
			if d.arg == argReq || d.arg == argOpt || d.arg == argTwo {
				if j+1 < len(s) {
					o.val, o.hasVal = word{lit: s[j+1:], src: s[j+1:]}, true
				} else if d.arg == argReq {
					if v, ok := next(&i); ok {
						o.val, o.hasVal = v, true
					} else {
						unknown(s)
						break
					}
				} else if d.arg == argTwo {
					next(&i)
					if v, ok := next(&i); ok {
						o.val, o.hasVal = v, true
					}
				}
				p.opts = append(p.opts, o)
				break
			}
			p.opts = append(p.opts, o)
		}
	}
	return p
}
