package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Credential stores by any route: a program that reads a directory recursively
// (grep -r, rg, tar c, cp -r, zip -r, find -exec on what it finds) reads every
// credential store below it, and a glob may match one without naming it. Those are
// judged as reads (or writes) of the stores themselves.

// protectedStores are the absolute patterns of the credential stores and the
// absolute or home-relative denied_paths.
func (p *Policy) protectedStores() []string {
	out := make([]string, 0, len(p.credentials)+len(p.denied))
	for _, c := range p.credentials {
		out = append(out, c.pat)
	}
	for _, d := range p.denied {
		if d.kind == 0 {
			out = append(out, d.pat)
		}
	}
	for _, r := range p.rules {
		if r.kind == 0 {
			out = append(out, r.pat) // judged by DecidePath: an allow rule adds nothing
		}
	}
	return out
}

// literalPrefix is the part of a pattern before its first glob component.
func literalPrefix(pat string) string {
	i := strings.IndexAny(pat, "*?[{\\")
	if i < 0 {
		return pat
	}
	j := strings.LastIndexByte(pat[:i], '/')
	if j <= 0 {
		return "/"
	}
	return pat[:j]
}

// claimTree claims w and every protected store below it.
func (g *guard) claimTree(w word, op Op, st *gstate, what string, follow bool) {
	n := len(g.a.Claims)
	g.claim(w, op, st, what)
	if w.dyn || len(g.a.Claims) == n {
		return
	}
	c := g.a.Claims[len(g.a.Claims)-1]
	if c.Abs == "" || isStream(c.Path) {
		return
	}
	if follow {
		g.a.reason(Ask, fmt.Sprintf("%s follows symbolic links below %s; a link can lead to credential stores", what, w.show()))
	}
	var stores []string
	if g.stores == nil {
		g.stores = g.p.protectedStores()
	}
	for _, s := range g.stores {
		if s == c.Abs || !within(c.Abs, s) {
			continue // the claim itself judged a store at or above the path
		}
		stores = append(stores, s)
	}
	if len(stores) > 0 {
		g.storeClaims(stores, op, fmt.Sprintf("%s %s %ss everything below it", what, w.show(), op))
	}
	if !g.treeNames {
		switch {
		case g.p.Inside(c.Abs):
			g.treeMatches(c.Abs, op, fmt.Sprintf("%s %s %ss everything below it", what, w.show(), op))
		case within(c.Abs, g.p.root):
			// The tree holds the whole workspace (grep -r x ..).
			g.treeMatches(g.p.root, op, fmt.Sprintf("%s %s %ss everything below it", what, w.show(), op))
		}
	}
}

// treeBudget bounds the directory entries looked at for one recursive claim.
const treeBudget = 3000

// relPatterns are the root-relative and bare patterns (denied_paths, path rules)
// that can restrict op: a recursive read inside the root reaches the files they
// name (grep -r reads .env when denied_paths has .env*).
func (p *Policy) relPatterns(op Op) []pathPattern {
	var out []pathPattern
	for _, d := range p.denied {
		if d.kind != 0 {
			out = append(out, d)
		}
	}
	for _, r := range p.rules {
		d := r.read
		if op == OpWrite {
			d = r.write
		}
		if d != nil && *d != Allow && r.kind != 0 {
			out = append(out, r.pathPattern)
		}
	}
	return out
}

// treeMatches looks below dir (inside the root) for files the policy does not allow
// for op; a tree too large to look through asks.
func (g *guard) treeMatches(dir string, op Op, how string) {
	pats := g.p.relPatterns(op)
	if len(pats) == 0 {
		return
	}
	budget := treeBudget
	var found []string
	// rg skips what .gitignore names, inside a git repository.
	var chain ignoreChain
	useIgnores := false
	if g.treeGitignore {
		if _, err := os.Stat(g.p.root + "/.git"); err == nil {
			useIgnores = true
			chain = rootIgnores(g.p.root)
			rel, _ := relInside(g.p.root, dir)
			if rel != "." {
				parts := strings.Split(rel, "/")
				for k := range parts {
					r := strings.Join(parts[:k+1], "/")
					chain = chain.with(g.p.root+"/"+r, r)
				}
			}
		}
	}
	var walk func(d string, chain ignoreChain) bool
	walk = func(d string, chain ignoreChain) bool {
		ents, err := os.ReadDir(d)
		if err != nil {
			return true
		}
		for _, e := range ents {
			if budget--; budget < 0 {
				return false
			}
			if e.Name() == ".git" || e.Type()&os.ModeSymlink != 0 {
				continue // recursive readers do not follow links they meet
			}
			if g.treeNoHidden && strings.HasPrefix(e.Name(), ".") {
				continue // rg skips hidden files unless told otherwise
			}
			abs := d + "/" + e.Name()
			if useIgnores {
				if rel, ok := relInside(g.p.root, abs); ok && chain.ignored(rel, e.IsDir()) {
					continue
				}
			}
			for _, pp := range pats {
				if pp.match(abs, g.p.root) {
					found = append(found, abs)
					break
				}
			}
			if len(found) > 0 {
				return true
			}
			if e.IsDir() {
				sub := chain
				if useIgnores {
					rel, _ := relInside(g.p.root, abs)
					sub = chain.with(abs, rel)
				}
				if !walk(abs, sub) {
					return false
				}
			}
		}
		return true
	}
	if !walk(dir, chain) {
		g.a.reason(Ask, fmt.Sprintf("%s; it is too large to check for files denied_paths or path_rules protect", how))
		return
	}
	for _, f := range found {
		d, why := g.p.DecidePath(f, op)
		if d == Allow {
			continue
		}
		g.a.Claims = append(g.a.Claims, Claim{Path: f, Abs: f, Op: op, Verdict: d, Why: why})
		g.a.reason(d, fmt.Sprintf("%s, including %s: %s", how, f, why))
	}
}

// storeClaims judges the protected stores a command reaches indirectly; the reason
// names the first one the policy does not allow.
func (g *guard) storeClaims(stores []string, op Op, how string) {
	worst, first, n := Allow, "", 0
	for _, s := range stores {
		// Judged as the pattern itself (~/.config/lovia/credentials* matches its own
		// text), shown as its directory.
		d, why := g.p.DecidePath(s, op)
		if d == Allow {
			continue
		}
		base := literalPrefix(s)
		g.a.Claims = append(g.a.Claims, Claim{Path: base, Abs: base, Op: op, Verdict: d, Why: why})
		n++
		if d > worst {
			worst, first = d, fmt.Sprintf("%s, including %s: %s", how, base, why)
		}
	}
	if n > 1 {
		first += fmt.Sprintf(" (and %d more protected paths)", n-1)
	}
	g.a.reason(worst, first)
}

// globStores judges the protected stores a glob pattern may match. dir is the
// pattern's literal directory part.
func (g *guard) globStores(pattern, dir string, op Op, st *gstate) {
	abs := g.p.Resolve(dir, st.cwd)
	rest := pattern
	if strings.HasSuffix(dir, "/") {
		rest = pattern[len(dir):]
	}
	pcomps := strings.Split(rest, "/")
	var stores []string
	if g.stores == nil {
		g.stores = g.p.protectedStores()
	}
	for _, s := range g.stores {
		if s == abs || !within(abs, s) {
			continue
		}
		rel, _ := relInside(abs, s)
		scomps := strings.Split(rel, "/")
		match := true
		for k := 0; k < len(pcomps) && k < len(scomps); k++ {
			if pcomps[k] == "**" {
				break
			}
			// Without dotglob, a wildcard does not match a leading dot.
			if !g.dotglob && strings.HasPrefix(scomps[k], ".") && !strings.HasPrefix(pcomps[k], ".") {
				match = false
				break
			}
			ok, err := filepath.Match(pcomps[k], scomps[k])
			if err != nil || !ok {
				match = false
				break
			}
		}
		if match {
			stores = append(stores, s)
		}
	}
	if len(stores) > 0 {
		g.storeClaims(stores, op, fmt.Sprintf("the pattern %s may match", pattern))
	}
}
