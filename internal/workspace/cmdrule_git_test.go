package workspace

import "testing"

// A deny or ask rule on a git subcommand holds when git's global options come first;
// an allow rule does not widen to them (git -c can run programs).
func TestCmdRuleGitGlobals(t *testing.T) {
	deny := compiledCmdRule{words: []string{"git", "push"}, decision: Deny}
	allow := compiledCmdRule{words: []string{"git", "status"}, decision: Allow}
	for _, c := range []struct {
		r    compiledCmdRule
		argv []string
		want bool
	}{
		{deny, []string{"git", "push"}, true},
		{deny, []string{"git", "-C", ".", "push", "origin"}, true},
		{deny, []string{"/usr/bin/git", "--no-pager", "-P", "--git-dir=.git", "push"}, true},
		{deny, []string{"git", "--work-tree", ".", "push"}, true},
		{deny, []string{"git", "-C", "push"}, false}, // "push" is -C's directory
		{deny, []string{"git", "pushx"}, false},
		{deny, []string{"git", "--frobnicate", "push"}, false}, // unknown: the guard asks anyway
		{allow, []string{"git", "status"}, true},
		{allow, []string{"git", "-c", "core.fsmonitor=x", "status"}, false},
		{allow, []string{"git", "-C", ".", "status"}, false},
	} {
		if got := c.r.matches(c.argv); got != c.want {
			t.Errorf("rule %q (%s) on %q: matches = %v, want %v", c.r.words, c.r.decision, c.argv, got, c.want)
		}
	}
}
