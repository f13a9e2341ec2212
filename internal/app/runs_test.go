package app

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/config"
	"github.com/lovia-dev/lovia/internal/errs"
)

func TestPlanResume(t *testing.T) {
	dir := t.TempDir()
	st := &Settings{Model: "openai:x", Preset: "coder", Policy: "coding", Cwd: dir, MaxTurns: 50, BudgetTokens: 0}
	flag := func(k, v, f string) config.Override { return config.Override{Key: k, Value: v, Flag: f} }
	restored := []config.Override{
		flag("preset", "coder", "(run settings)"), flag("policy", "coding", "(run settings)"), flag("max_turns", "50", "(run settings)"),
		flag("db", "/d/lovia.db", "(the run's database)"),
	}
	tests := []struct {
		name    string
		typed   []config.Override
		cwd     string
		cwdSet  bool
		st      *Settings
		flags   []config.Override
		wantCwd string
		notices []string
		errKind errs.Kind
	}{
		{name: "nothing typed: the run's settings", st: st, flags: restored, wantCwd: dir},
		{
			name:  "typed flags win and are announced",
			typed: []config.Override{flag("model", "anthropic:y", "--model"), flag("max_turns", "9", "--max-turns"), flag("policy", "coding", "--policy")},
			st:    st,
			flags: append(append([]config.Override{}, restored...),
				flag("model", "anthropic:y", "--model"), flag("max_turns", "9", "--max-turns"), flag("policy", "coding", "--policy")),
			wantCwd: dir,
			notices: []string{"--model overrides the run's openai:x", "--max-turns overrides the run's 50"},
		},
		{
			name: "-C typed", cwd: "/elsewhere", cwdSet: true, st: st, flags: restored, wantCwd: "/elsewhere",
			notices: []string{"--cwd overrides the run's " + dir},
		},
		{name: "working directory gone", st: &Settings{Cwd: filepath.Join(dir, "gone")}, errKind: errs.KindUsage},
		{name: "no settings recorded", st: &Settings{}, flags: []config.Override{flag("db", "/d/lovia.db", "(the run's database)")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := PlanResume(Options{Cwd: tt.cwd, Flags: tt.typed}, tt.st, "/d/lovia.db", tt.cwdSet)
			if tt.errKind != "" {
				if errs.KindOf(err) != tt.errKind || !strings.Contains(errs.HintOf(err), "-C DIR") {
					t.Fatalf("err %v, want kind %s with a -C hint", err, tt.errKind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(plan.Options.Flags, tt.flags) {
				t.Errorf("flags\n got %v\nwant %v", plan.Options.Flags, tt.flags)
			}
			if plan.Options.Cwd != tt.wantCwd {
				t.Errorf("cwd %q, want %q", plan.Options.Cwd, tt.wantCwd)
			}
			if !reflect.DeepEqual(plan.Notices, tt.notices) {
				t.Errorf("notices %q, want %q", plan.Notices, tt.notices)
			}
		})
	}
}

func TestSettingsFlagString(t *testing.T) {
	st := &Settings{Flags: map[string]any{"output": "json", "n": 3.0, "none": nil}}
	for k, want := range map[string]string{"output": "json", "n": "3", "none": "", "missing": ""} {
		if got := st.FlagString(k); got != want {
			t.Errorf("FlagString(%q) = %q, want %q", k, got, want)
		}
	}
	var nilSt *Settings
	if nilSt.FlagString("output") != "" {
		t.Error("nil settings")
	}
}

func TestRestoreModel(t *testing.T) {
	home := t.TempDir()
	env := func(extra map[string]string) func(string) string {
		return func(k string) string {
			switch k {
			case "HOME":
				return home
			case "XDG_CONFIG_HOME":
				return filepath.Join(home, ".config")
			}
			return extra[k]
		}
	}
	st := &Settings{Model: "openai:x"}
	tests := []struct {
		name string
		opts Options
		want bool
	}{
		{"nothing configured: pinned", Options{Cwd: home, Getenv: env(nil)}, true},
		{"configured model differs: pinned", Options{Cwd: home, Getenv: env(map[string]string{"LOVIA_MODEL": "anthropic:y"})}, true},
		{"configured model is the run's: not pinned", Options{Cwd: home, Getenv: env(map[string]string{"LOVIA_MODEL": "openai:x"})}, false},
		{"typed --model wins", Options{Cwd: home, Getenv: env(nil), Flags: []config.Override{{Key: "model", Value: "ollama:z", Flag: "--model"}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, ok, err := RestoreModel(tt.opts, st)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tt.want || (ok && (o.Key != "model" || o.Value != "openai:x")) {
				t.Errorf("got %+v %v, want pinned=%v", o, ok, tt.want)
			}
		})
	}
	if _, ok, err := RestoreModel(Options{Cwd: home, Getenv: env(nil)}, &Settings{}); ok || err != nil {
		t.Errorf("no recorded model: %v %v", ok, err)
	}
}
