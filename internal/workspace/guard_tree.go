package workspace

import (
	"fmt"
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
