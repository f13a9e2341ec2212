package workspace

import (
	"fmt"
	"strings"
)

// findArgs is how many arguments each find primary takes, and what it does:
// "r" the argument is a path read, "w" written, "l" a file listing start points.
var findPrimaries = map[string]struct {
	n   int
	eff string
}{
	"-name": {1, ""}, "-iname": {1, ""}, "-path": {1, ""}, "-ipath": {1, ""}, "-wholename": {1, ""},
	"-iwholename": {1, ""}, "-regex": {1, ""}, "-iregex": {1, ""}, "-lname": {1, ""}, "-ilname": {1, ""},
	"-type": {1, ""}, "-xtype": {1, ""}, "-size": {1, ""}, "-mtime": {1, ""}, "-mmin": {1, ""},
	"-atime": {1, ""}, "-amin": {1, ""}, "-ctime": {1, ""}, "-cmin": {1, ""}, "-used": {1, ""},
	"-user": {1, ""}, "-group": {1, ""}, "-uid": {1, ""}, "-gid": {1, ""}, "-perm": {1, ""},
	"-links": {1, ""}, "-inum": {1, ""}, "-fstype": {1, ""}, "-context": {1, ""}, "-regextype": {1, ""},
	"-maxdepth": {1, ""}, "-mindepth": {1, ""}, "-printf": {1, ""},
	"-newer": {1, "r"}, "-anewer": {1, "r"}, "-cnewer": {1, "r"}, "-samefile": {1, "r"},
	"-empty": {}, "-nouser": {}, "-nogroup": {}, "-readable": {}, "-writable": {}, "-executable": {},
	"-depth": {}, "-d": {}, "-mount": {}, "-xdev": {}, "-follow": {0, "L"}, "-noleaf": {},
	"-ignore_readdir_race": {}, "-noignore_readdir_race": {}, "-daystart": {}, "-true": {},
	"-false": {}, "-print": {}, "-print0": {}, "-ls": {}, "-prune": {}, "-quit": {}, "-not": {},
	"-a": {}, "-and": {}, "-o": {}, "-or": {}, "!": {}, "(": {}, ")": {}, ",": {}, "-help": {},
	"--help": {}, "-version": {}, "--version": {}, "-warn": {}, "-nowarn": {},
	"-delete": {0, "W"}, "-fprint": {1, "w"}, "-fprint0": {1, "w"}, "-fls": {1, "w"}, "-fprintf": {2, "w"},
	"-files0-from": {1, "l"},
}

// findUse judges find: its start points are read (names and metadata); -exec and
// -ok run a command on every file found (judged as that command reading the whole
// tree); -delete and -fprint write.
func (g *guard) findUse(ws []word, st *gstate, depth int) (use, string) {
	u, why := useSafe, ""
	worse := func(nu use, w string) {
		if nu > u {
			u, why = nu, w
		}
	}
	i, follow := 1, false
	// Leading options: -H -L -P -D debugopts -Olevel.
	for i < len(ws) && !ws[i].dyn {
		s := ws[i].lit
		switch {
		case s == "-H" || s == "-P":
		case s == "-L":
			follow = true
		case s == "-D" && i+1 < len(ws):
			i++
		case strings.HasPrefix(s, "-O") && isDigits(s[2:]):
		default:
			goto roots
		}
		i++
	}
roots:
	var roots []word
	for i < len(ws) && (ws[i].dyn || !strings.HasPrefix(ws[i].lit, "-") && ws[i].lit != "(" && ws[i].lit != "!" && ws[i].lit != ",") {
		roots = append(roots, ws[i])
		i++
	}
	if len(roots) == 0 {
		roots = []word{{lit: "."}}
	}
	writes, typed := false, false
	type payload struct {
		cmd  []word
		what string
	}
	var runs []payload
	for ; i < len(ws); i++ {
		w := ws[i]
		if w.dyn {
			worse(useCode, "a find expression word is only known at run time")
			continue
		}
		s := w.lit
		switch s {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			var cmd []word
			for j < len(ws) && (ws[j].dyn || ws[j].lit != ";" && ws[j].lit != "+") {
				cmd = append(cmd, ws[j])
				j++
			}
			runs = append(runs, payload{cmd, s})
			worse(useCode, fmt.Sprintf("find %s runs a command on the files it finds", s))
			i = j
			continue
		}
		pr, ok := findPrimaries[s]
		if !ok && strings.HasPrefix(s, "-newer") && len(s) == 8 {
			pr, ok = findPrimaries["-newer"], true
			if s[7] == 't' {
				pr.eff = "" // -newerXt takes a time, not a file
			}
		}
		if !ok {
			worse(useCode, fmt.Sprintf("%s is not a find primary the guard knows to be read-only", s))
			continue
		}
		var args []word
		for k := 0; k < pr.n && i+1 < len(ws); k++ {
			i++
			args = append(args, ws[i])
		}
		if s == "-type" && len(args) == 1 && !args[0].dyn && !strings.Contains(args[0].lit, "l") {
			typed = true // no symbolic links reach the command
		}
		switch pr.eff {
		case "r":
			for _, a := range args {
				g.claim(a, OpRead, st, "find "+s)
			}
		case "w":
			if len(args) > 0 {
				g.claim(args[0], OpWrite, st, "find "+s)
			}
			worse(useWrites, fmt.Sprintf("find %s writes a file", s))
		case "W":
			writes = true
			worse(useWrites, "find -delete deletes what it finds")
		case "l":
			if len(args) > 0 {
				g.claim(args[0], OpRead, st, "find "+s)
				g.claim(word{dyn: true, src: "the start points listed in " + args[0].show()}, OpRead, st, "find "+s)
			}
		case "L":
			follow = true
		}
	}
	op := OpRead
	if writes {
		op = OpWrite
	}
	for _, r := range roots {
		if writes {
			g.claimTree(r, op, st, "find", follow)
		} else {
			g.claim(r, op, st, "find")
		}
	}
	if follow && (writes || len(runs) > 0) {
		g.a.reason(Ask, "find -L follows symbolic links; a link can lead to credential stores")
	} else if len(runs) > 0 && !typed {
		// The command gets symbolic links too, and opening one follows it.
		g.a.reason(Ask, "find passes symbolic links to the command, which can lead to credential stores (add -type f to exclude them)")
	}
	// Each payload sees every file below each start point: "{}" stands for the tree.
	for _, r := range runs {
		for _, root := range roots {
			cmd := make([]word, 0, len(r.cmd))
			for _, c := range r.cmd {
				if !c.dyn && strings.Contains(c.lit, "{}") {
					c = root
					c.tree = true
				}
				cmd = append(cmd, c)
			}
			if len(cmd) == 0 {
				continue
			}
			parts := make([]string, 0, len(cmd))
			for _, c := range cmd {
				parts = append(parts, c.show())
			}
			g.simple(cmd, st.copy(), depth+1, strings.Join(parts, " "))
		}
	}
	return u, why
}
