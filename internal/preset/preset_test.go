package preset

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/errs"
)

func TestBundled(t *testing.T) {
	s, err := Load(Dirs{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"coder", "reviewer", "planner"} {
		p, err := s.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if p.Source != "bundled" || p.Description == "" || p.Instructions == "" {
			t.Errorf("%s: %+v", name, p)
		}
	}
	r, _ := s.Get("reviewer")
	if r.Policy != "readonly" || slicesHas(r.Tools, "write_file") || slicesHas(r.Tools, "shell") {
		t.Errorf("reviewer is not read-only: %+v", r)
	}
	pl, _ := s.Get("planner")
	if len(pl.Handoffs) != 1 || pl.Handoffs[0] != "coder" || slicesHas(pl.Tools, "edit_file") {
		t.Errorf("planner: %+v", pl)
	}
}

func slicesHas(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func TestUserAndProjectOverride(t *testing.T) {
	dir := t.TempDir()
	user, project := filepath.Join(dir, "user"), filepath.Join(dir, "project")
	write := func(p, body string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(user, "coder.yaml"), "name: coder\ndescription: my coder\ninstructions: be brief\n")
	write(filepath.Join(user, "docs.yaml"), "description: writes docs\ninstructions: write docs\nlimits: {max_turns: 5}\noutput_schema: {type: object, required: [summary]}\n")
	write(filepath.Join(project, "coder.yaml"), "name: coder\ndescription: project coder\ninstructions: follow CONTRIBUTING\n")
	s, err := Load(Dirs{User: user, Project: project, TrustProject: true})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := s.Get("coder")
	if c.Description != "project coder" || c.Source != filepath.Join(project, "coder.yaml") {
		t.Errorf("coder %+v", c)
	}
	// Untrusted, the project's coder does not replace the user's.
	if s, err = Load(Dirs{User: user, Project: project}); err != nil {
		t.Fatal(err)
	}
	if c, _ = s.Get("coder"); c.Description != "my coder" {
		t.Errorf("untrusted project preset replaced the user's: %+v", c)
	}
	d, err := s.Get("docs")
	if err != nil || d.Limits.MaxTurns != 5 || d.Source != filepath.Join(user, "docs.yaml") {
		t.Fatalf("docs %+v %v", d, err)
	}
	if sch, _ := d.Schema(); !strings.Contains(string(sch), `"required":["summary"]`) {
		t.Errorf("schema %s", sch)
	}
	if _, err := s.Get("nope"); errs.KindOf(err) != errs.KindConfig || !strings.Contains(errs.HintOf(err), "docs") {
		t.Errorf("unknown: %v / %s", err, errs.HintOf(err))
	}
}

func TestBadPresets(t *testing.T) {
	tests := []struct{ body, want string }{
		{"name: x\ninstruction: hi\n", `x.yaml:2:1: unknown key "instruction"`},
		{"name: x\npolicy: yolo\n", "unknown policy"},
		{"name: x\nplugins: [todo, telepathy]\n", "unknown plugin \"telepathy\""},
		{"name: x\nhandoffs: [ghost]\n", "handoff to unknown preset \"ghost\""},
		{"name: x\nlimits: {max_turns: many}\n", "x.yaml:2:"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "x.yaml"), []byte(tt.body), 0o644)
		_, err := Load(Dirs{Project: dir})
		if err == nil || errs.KindOf(err) != errs.KindConfig || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.body, err, tt.want)
		}
	}
}
