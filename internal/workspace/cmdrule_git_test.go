package workspace

import "testing"

// A deny or ask rule on a subcommand holds when global options come first (git's
// from the guard's table, other programs' by their shape); an allow rule does not
// widen to them (git -c can run programs).
func TestCmdRuleGitGlobals(t *testing.T) {
	deny := compiledCmdRule{words: []string{"git", "push"}, decision: Deny}
	allow := compiledCmdRule{words: []string{"git", "status"}, decision: Allow}
	npm := compiledCmdRule{words: []string{"npm", "publish"}, decision: Ask}
	cargo := compiledCmdRule{words: []string{"cargo", "publish"}, decision: Deny}
	allowNpm := compiledCmdRule{words: []string{"npm", "test"}, decision: Allow}
	for _, c := range []struct {
		r    compiledCmdRule
		argv []string
		want bool
	}{
		{deny, []string{"git", "push"}, true},
		{deny, []string{"git", "-C", ".", "push", "origin"}, true},
		{deny, []string{"/usr/bin/git", "--no-pager", "-P", "--git-dir=.git", "push"}, true},
		{deny, []string{"git", "--work-tree", ".", "push"}, true},
		{deny, []string{"git", "-C", "push"}, true}, // "push" may be a value: matching more is only stricter
		{deny, []string{"git", "pushx"}, false},
		{deny, []string{"git", "--frobnicate", "push"}, true}, // by its shape
		{deny, []string{"git", "log", "--grep", "push"}, false},
		{deny, []string{"git", "--", "push"}, true},
		{npm, []string{"npm", "--prefix", "dir", "publish"}, true},
		{npm, []string{"npm", "-w", "pkg", "--dry-run=false", "publish"}, true},
		{npm, []string{"npm", "--loglevel=silent", "publish"}, true},
		{npm, []string{"npm", "run", "publish"}, false},
		{npm, []string{"npm", "--prefix", "dir", "run", "publish"}, false},
		{cargo, []string{"cargo", "+nightly", "publish"}, true},
		{allowNpm, []string{"npm", "--prefix", "dir", "test"}, false},
		{allow, []string{"git", "status"}, true},
		{allow, []string{"git", "-c", "core.fsmonitor=x", "status"}, false},
		{allow, []string{"git", "-C", ".", "status"}, false},
	} {
		if got := c.r.matches(c.argv); got != c.want {
			t.Errorf("rule %q (%s) on %q: matches = %v, want %v", c.r.words, c.r.decision, c.argv, got, c.want)
		}
	}
}
