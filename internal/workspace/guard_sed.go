package workspace

import (
	"fmt"
	"strings"
)

// sedCheck judges a sed script: the e command and the s///e flag run programs, w/W
// and s///w write files, r/R read them. Scripts the parser does not fully understand
// are not read-only.
func sedCheck(g *guard, p *parsed, st *gstate) (use, string) {
	var scripts []string
	for _, o := range p.opts {
		if !o.def.has('s') {
			continue
		}
		if o.def.has('r') {
			return useCode, "the sed script comes from a file the guard does not see"
		}
		if o.val.dyn {
			return useCode, "the sed script is only known at run time"
		}
		scripts = append(scripts, o.val.lit)
	}
	if len(scripts) == 0 {
		if len(p.operands) == 0 {
			return useSafe, ""
		}
		if p.operands[0].dyn {
			return useCode, "the sed script is only known at run time"
		}
		scripts = append(scripts, p.operands[0].lit)
	}
	sc := sedScript{src: strings.Join(scripts, "\n")}
	sc.parse()
	u, why := useSafe, ""
	for _, f := range sc.reads {
		g.claim(word{lit: f}, OpRead, st, "sed r")
	}
	for _, f := range sc.writes {
		g.claim(word{lit: f}, OpWrite, st, "sed w")
		if !isStream(f) {
			u, why = useWrites, "the sed script writes "+f
		}
	}
	if sc.bad != "" {
		u, why = useCode, sc.bad
	}
	return u, why
}

// sedScript is a small parser of GNU sed's script language, enough to find every
// command that reads, writes or runs something.
type sedScript struct {
	src           string
	i             int
	reads, writes []string
	bad           string // why the script is not read-only ("" when it is)
}

func (s *sedScript) fail(why string) {
	if s.bad == "" {
		s.bad = why
	}
}

func (s *sedScript) peek() byte {
	if s.i < len(s.src) {
		return s.src[s.i]
	}
	return 0
}

func (s *sedScript) skipSpace() {
	for s.i < len(s.src) && (s.src[s.i] == ' ' || s.src[s.i] == '\t') {
		s.i++
	}
}

// toEOL returns the rest of the line (a file name or text argument).
func (s *sedScript) toEOL() string {
	j := strings.IndexByte(s.src[s.i:], '\n')
	if j < 0 {
		j = len(s.src) - s.i
	}
	out := s.src[s.i : s.i+j]
	s.i += j
	return out
}

// delimited reads up to the unescaped delimiter d (GNU: brackets are not special).
func (s *sedScript) delimited(d byte) bool {
	for s.i < len(s.src) {
		c := s.src[s.i]
		s.i++
		switch {
		case c == '\\':
			s.i++
		case c == d:
			return true
		case c == '\n' && d != '\n':
			return false
		}
	}
	return false
}

func (s *sedScript) address() bool {
	c := s.peek()
	switch {
	case c >= '0' && c <= '9':
		for s.i < len(s.src) && (s.src[s.i] >= '0' && s.src[s.i] <= '9' || s.src[s.i] == '~') {
			s.i++
		}
	case c == '$':
		s.i++
	case c == '/' || c == '\\':
		s.i++
		d := byte('/')
		if c == '\\' {
			if s.i >= len(s.src) {
				return false
			}
			d = s.src[s.i]
			s.i++
		}
		if !s.delimited(d) {
			return false
		}
		for s.peek() == 'I' || s.peek() == 'M' {
			s.i++
		}
	case c == '+' || c == '~':
		s.i++
		for s.i < len(s.src) && s.src[s.i] >= '0' && s.src[s.i] <= '9' {
			s.i++
		}
	default:
		return false
	}
	return true
}

func (s *sedScript) parse() {
	for s.i < len(s.src) && s.bad == "" {
		c := s.peek()
		if c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '}' {
			s.i++
			continue
		}
		if c == '#' {
			s.toEOL()
			continue
		}
		if s.address() {
			s.skipSpace()
			if s.peek() == ',' {
				s.i++
				s.skipSpace()
				if !s.address() {
					s.fail("the sed script has an address the guard does not understand")
					return
				}
			}
		}
		s.skipSpace()
		for s.peek() == '!' {
			s.i++
			s.skipSpace()
		}
		if s.i >= len(s.src) {
			s.fail("the sed script ends after an address")
			return
		}
		cmd := s.src[s.i]
		s.i++
		switch cmd {
		case '{':
			continue
		case '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'l', 'L', 'q', 'Q':
			s.skipSpace()
			for s.i < len(s.src) && s.src[s.i] >= '0' && s.src[s.i] <= '9' {
				s.i++
			}
		case 'a', 'i', 'c':
			// Text up to the end of the line; a backslash at the end continues it.
			for {
				line := s.toEOL()
				if !strings.HasSuffix(line, "\\") || s.i >= len(s.src) {
					break
				}
				s.i++
			}
			continue
		case ':', 'b', 't', 'T':
			for s.i < len(s.src) && s.src[s.i] != '\n' && s.src[s.i] != ';' {
				s.i++
			}
			continue
		case 'r', 'R':
			s.skipSpace()
			s.reads = append(s.reads, s.toEOL())
			continue
		case 'w', 'W':
			s.skipSpace()
			s.writes = append(s.writes, s.toEOL())
			continue
		case 'e':
			s.fail("the sed script's e command runs a program")
			return
		case 's', 'y':
			if s.i >= len(s.src) || s.src[s.i] == '\n' || s.src[s.i] == '\\' {
				s.fail("the sed script has an s or y command the guard does not understand")
				return
			}
			d := s.src[s.i]
			s.i++
			if !s.delimited(d) || !s.delimited(d) {
				s.fail(fmt.Sprintf("the sed script's %c command is not terminated", cmd))
				return
			}
			if cmd == 's' && !s.sflags() {
				return
			}
		default:
			s.fail(fmt.Sprintf("the sed script's %q command is not one the guard knows to be read-only", cmd))
			return
		}
		s.skipSpace()
		switch s.peek() {
		case 0, '\n', ';', '}', '#':
		default:
			s.fail("the sed script has extra characters after a command")
			return
		}
	}
}

// sflags reads the flags of s///: e runs the pattern space as a command, w writes.
func (s *sedScript) sflags() bool {
	for s.i < len(s.src) {
		c := s.src[s.i]
		switch {
		case c == 'g' || c == 'p' || c == 'i' || c == 'I' || c == 'm' || c == 'M' || c >= '0' && c <= '9':
			s.i++
		case c == 'e':
			s.fail("the sed script's s///e flag runs a program")
			return false
		case c == 'w':
			s.i++
			s.skipSpace()
			s.writes = append(s.writes, s.toEOL())
			return true
		default:
			return true
		}
	}
	return true
}
