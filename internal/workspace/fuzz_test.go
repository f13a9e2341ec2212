package workspace

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// FuzzGuard: the guard never panics, and never allows a command that does not parse.
func FuzzGuard(f *testing.F) {
	for _, c := range commandCases {
		f.Add(c.cmd)
	}
	e := newTestEnv(f)
	pols := []*Policy{e.policy(f, PresetCoding), e.policy(f, PresetTrusted)}
	f.Fuzz(func(t *testing.T, cmd string) {
		for _, p := range pols {
			a := p.AnalyzeCommand(cmd, "")
			_, perr := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
			if perr != nil && a.Decision == Allow {
				t.Fatalf("%q does not parse (%v) but was allowed", cmd, perr)
			}
			if !a.Parsed && a.Decision == Allow {
				t.Fatalf("%q: unparsed payload allowed", cmd)
			}
			if a.Decision != Allow && len(a.Reasons) == 0 {
				t.Fatalf("%q: %s without a reason", cmd, a.Decision)
			}
			p.AnalyzeArgv(strings.Fields(cmd), p.root)
		}
	})
}
