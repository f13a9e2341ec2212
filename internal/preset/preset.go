// Package preset loads agent presets: the bundled ones (presets/*.yaml, parsed at
// build time into bundled_gen.go),
// then the user's (~/.config/lovia/presets) and the project's (.lovia/presets); a
// later preset with the same name replaces an earlier one.
package preset

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lovia-dev/lovia/internal/config/trust"
	"github.com/lovia-dev/lovia/internal/config/yamlfile"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/guardrail"
	"github.com/lovia-dev/lovia/internal/safefile"
)

// Preset is a named, declarative agent configuration.
type Preset struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// HandoffDescription tells other agents when to transfer to this one.
	HandoffDescription string `yaml:"handoff_description"`
	Instructions       string `yaml:"instructions"`
	// Model ("provider:model") is used when neither flag, env nor config sets one.
	Model string `yaml:"model"`
	// Policy is the workspace policy default for runs that start with this preset.
	Policy string `yaml:"policy"`
	// Tools is an allow-list of tool names (empty: every tool).
	Tools []string `yaml:"tools"`
	// Plugins names built-in plugins to enable (todo, skills, mcp, memory, subagents).
	Plugins []string `yaml:"plugins"`
	// Handoffs names presets this agent may transfer to.
	Handoffs []string `yaml:"handoffs"`
	// AgentsAsTools names presets offered to this agent as tools (ask_<name>): each
	// call runs that preset as a child run and returns its answer.
	AgentsAsTools []string `yaml:"agents_as_tools"`
	Limits        Limits   `yaml:"limits"`
	// OutputSchema is a JSON Schema (written as YAML) for a structured final answer.
	OutputSchema map[string]any `yaml:"output_schema"`
	// OutputGuardrails check the final answer of a run of this preset (see
	// docs/guardrails.md); an untrusted project's preset keeps only its LLM checks.
	OutputGuardrails []guardrail.Spec `yaml:"output_guardrails"`

	// Source is "bundled" or the file the preset was read from.
	Source string `yaml:"-"`
}

// Limits bound a run of the preset (0 = default).
type Limits struct {
	MaxTurns           int `yaml:"max_turns"`
	BudgetTokens       int `yaml:"budget_tokens"`
	MaxToolOutputChars int `yaml:"max_tool_output_chars"`
}

// Schema returns the output schema as JSON (nil when none).
func (p *Preset) Schema() (json.RawMessage, error) {
	if len(p.OutputSchema) == 0 {
		return nil, nil
	}
	return json.Marshal(yamlfile.JSONable(p.OutputSchema))
}

// KnownPlugins are the plugin names a preset may list.
var KnownPlugins = []string{"todo", "skills", "mcp", "memory", "subagents", "web", "human"}

// Set is every preset found, by name.
type Set struct {
	byName map[string]*Preset
}

// Dirs are the on-disk preset directories, lowest precedence first (missing ones are
// skipped).
type Dirs struct {
	User    string // ~/.config/lovia/presets
	Project string // <root>/.lovia/presets
	// TrustProject applies the project presets' loosening parts: a preset that
	// replaces a bundled or user preset of the same name, and a policy looser than
	// coding. Without it those parts are ignored (ProjectLoosening names them).
	TrustProject bool
}

// Load reads the bundled presets and those in dirs. A bad file fails the load with an
// error naming the file and line.
func Load(dirs Dirs) (*Set, error) {
	s := &Set{byName: map[string]*Preset{}}
	s.addBundled()
	for _, d := range []string{dirs.User, dirs.Project} {
		if d == "" {
			continue
		}
		if _, err := os.Stat(d); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		project := d == dirs.Project && !dirs.TrustProject
		if err := s.addFS(os.DirFS(d), ".", d, project); err != nil {
			return nil, err
		}
	}
	for _, p := range s.byName {
		for _, h := range p.Handoffs {
			if _, ok := s.byName[h]; !ok {
				return nil, errs.Newf(errs.KindConfig, "name an existing preset (known: "+strings.Join(s.Names(), ", ")+")",
					"preset %s (%s): handoff to unknown preset %q", p.Name, p.Source, h)
			}
		}
		for _, h := range p.AgentsAsTools {
			if _, ok := s.byName[h]; !ok {
				return nil, errs.Newf(errs.KindConfig, "name an existing preset (known: "+strings.Join(s.Names(), ", ")+")",
					"preset %s (%s): agents_as_tools names unknown preset %q", p.Name, p.Source, h)
			}
		}
	}
	return s, nil
}

// addBundled adds the bundled presets, parsed at build time from presets/*.yaml
// (bundled_gen.go; TestBundledGenerated keeps it current).
func (s *Set) addBundled() {
	for _, p := range bundledPresets() {
		s.byName[p.Name] = p
	}
}

// addFS adds the presets of fsys/dir; untrusted (an untrusted project's) presets do
// not replace earlier ones and get no policy looser than coding.
func (s *Set) addFS(fsys fs.FS, dir, origin string, untrusted bool) error {
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return errs.Wrap(errs.KindConfig, err, "read presets in "+origin, "make the directory readable")
	}
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !(strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")) {
			continue
		}
		var data []byte
		var err error
		if origin == "bundled" {
			data, err = fs.ReadFile(fsys, path.Join(dir, name))
		} else {
			// A preset on disk is a regular file of at most 1 MiB that does not link
			// out of the directory holding presets/ (~/.config/lovia, .lovia).
			data, err = safefile.ReadBeneath(filepath.Dir(origin), filepath.Join(origin, filepath.FromSlash(path.Join(dir, name))), safefile.MaxPreset)
		}
		if err != nil {
			return errs.Wrap(errs.KindConfig, err, "read preset "+name, errs.HintOf(err))
		}
		file := name
		source := "bundled"
		if origin != "bundled" {
			file = filepath.Join(origin, name)
			source = file
		}
		p, err := Parse(file, data)
		if err != nil {
			return err
		}
		if p.Name == "" {
			p.Name = strings.TrimSuffix(strings.TrimSuffix(name, ".yaml"), ".yml")
		}
		p.Source = source
		if untrusted {
			if _, ok := s.byName[p.Name]; ok {
				continue
			}
			if trust.Looser(p.Policy, defaultPolicy) {
				p.Policy = ""
			}
			p.OutputGuardrails = slices.DeleteFunc(p.OutputGuardrails, func(g guardrail.Spec) bool { return g.Command != "" })
		}
		s.byName[p.Name] = p
	}
	return nil
}

// maxScanBytes bounds a project preset ProjectLoosening reads.
const maxScanBytes = 1 << 20

// defaultPolicy is the policy a project preset may set without trust (or stricter).
const defaultPolicy = "coding"

// ProjectLoosening returns the parts of the project's presets that need trust: a
// preset that would replace a bundled or user preset of the same name, and a policy
// looser than coding. Files that do not parse are skipped (Load reports them).
func ProjectLoosening(dirs Dirs) []trust.Entry {
	if dirs.Project == "" {
		return nil
	}
	ents, err := os.ReadDir(dirs.Project)
	if err != nil {
		return nil
	}
	base := &Set{byName: map[string]*Preset{}}
	base.addBundled()
	if dirs.User != "" {
		if _, err := os.Stat(dirs.User); err == nil {
			_ = base.addFS(os.DirFS(dirs.User), ".", dirs.User, false)
		}
	}
	var out []trust.Entry
	seen := map[string]bool{}
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !(strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")) {
			continue
		}
		file := filepath.Join(dirs.Project, name)
		// Every command loads the configuration: a FIFO, a device or a huge file here
		// must not hang or bloat it (Load reports what it cannot read).
		if st, err := os.Stat(file); err != nil || !st.Mode().IsRegular() || st.Size() > maxScanBytes {
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		p, err := Parse(file, data)
		if err != nil {
			continue
		}
		if p.Name == "" {
			p.Name = strings.TrimSuffix(strings.TrimSuffix(name, ".yaml"), ".yml")
		}
		if seen[p.Name] {
			continue
		}
		seen[p.Name] = true
		if old, ok := base.byName[p.Name]; ok {
			what := "your preset " + old.Source
			if old.Source == "bundled" {
				what = "the bundled preset"
			}
			out = append(out, trust.Entry{File: file, Line: lineOf(data, "name"), Key: "preset " + p.Name,
				Value: p.Name, Why: "replaces " + what + " of the same name"})
			continue
		}
		if trust.Looser(p.Policy, defaultPolicy) {
			out = append(out, trust.Entry{File: file, Line: lineOf(data, "policy"), Key: "preset " + p.Name + " policy",
				Value: p.Policy, Why: "a looser policy than " + defaultPolicy})
		}
		for i, g := range p.OutputGuardrails {
			if g.Command != "" {
				out = append(out, trust.Entry{File: file, Line: lineOf(data, "output_guardrails"), Key: fmt.Sprintf("preset %s output_guardrails[%d]", p.Name, i),
					Value: g.Command, Why: "runs a command on the final output (output guardrail)"})
			}
		}
	}
	return out
}

// lineOf returns the line of a top-level key in data (0 when absent).
func lineOf(data []byte, key string) int {
	for i, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, key+":") {
			return i + 1
		}
	}
	return 0
}

// Parse decodes and checks one preset file.
func Parse(file string, data []byte) (*Preset, error) {
	var p Preset
	if err := yamlfile.Decode(file, data, &p); err != nil {
		return nil, err
	}
	bad := func(hint, format string, args ...any) error {
		return errs.Newf(errs.KindConfig, hint, "preset %s: "+format, append([]any{file}, args...)...)
	}
	if p.Policy != "" && p.Policy != "readonly" && p.Policy != "coding" && p.Policy != "trusted" {
		return nil, bad("use readonly, coding or trusted", "unknown policy %q", p.Policy)
	}
	if p.Model != "" && !strings.Contains(p.Model, ":") {
		return nil, bad("write it as PROVIDER:MODEL", "model %q is not of the form PROVIDER:MODEL", p.Model)
	}
	for _, pl := range p.Plugins {
		if !slices.Contains(KnownPlugins, pl) {
			return nil, bad("known plugins: "+strings.Join(KnownPlugins, ", "), "unknown plugin %q", pl)
		}
	}
	if p.Limits.MaxTurns < 0 || p.Limits.BudgetTokens < 0 {
		return nil, bad("use whole numbers >= 0", "negative limit")
	}
	if _, err := p.Schema(); err != nil {
		return nil, bad("write output_schema as a JSON Schema mapping", "output_schema: %v", err)
	}
	for i, g := range p.OutputGuardrails {
		if err := g.Validate(fmt.Sprintf("preset %s: output_guardrails[%d]", file, i)); err != nil {
			return nil, err
		}
	}
	return &p, nil
}

// Get returns the preset called name.
func (s *Set) Get(name string) (*Preset, error) {
	p, ok := s.byName[name]
	if !ok {
		return nil, errs.Newf(errs.KindConfig, "known presets: "+strings.Join(s.Names(), ", ")+" (lovia presets lists them)",
			"unknown preset %q", name)
	}
	return p, nil
}

// Names lists the preset names, sorted.
func (s *Set) Names() []string {
	out := make([]string, 0, len(s.byName))
	for n := range s.byName {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// List returns every preset sorted by name.
func (s *Set) List() []*Preset {
	var out []*Preset
	for _, n := range s.Names() {
		out = append(out, s.byName[n])
	}
	return out
}
