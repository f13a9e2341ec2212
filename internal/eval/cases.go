// Package eval runs declarative evaluation cases against agents: each case is run one
// or more times (samples), its outcome judged by checks, and the results gathered into
// a report that can be compared with a saved baseline.
package eval

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/lovia-dev/lovia/internal/config/yamlfile"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/safefile"
)

// File is a cases file (`lovia eval FILE`).
type File struct {
	// Path is where the file was read from; relative script: models resolve against
	// its directory.
	Path     string   `yaml:"-"`
	Defaults Defaults `yaml:"defaults"`
	Judge    Judge    `yaml:"judge"`
	Cases    []Case   `yaml:"cases"`
}

// Defaults apply to every case that does not set its own value.
type Defaults struct {
	Model       string `yaml:"model"`
	Preset      string `yaml:"preset"`
	Samples     int    `yaml:"samples"`
	MaxTurns    int    `yaml:"max_turns"`
	Concurrency int    `yaml:"concurrency"`
}

// Judge configures llm_judge checks.
type Judge struct {
	Model     string  `yaml:"model"`
	Threshold float64 `yaml:"threshold"`
}

// Case is one evaluation case.
type Case struct {
	Name     string      `yaml:"name"`
	Input    string      `yaml:"input"`
	Model    string      `yaml:"model"`
	Preset   string      `yaml:"preset"`
	Samples  int         `yaml:"samples"`
	MaxTurns int         `yaml:"max_turns"`
	Checks   []CheckSpec `yaml:"checks"`
}

// DefaultJudgeThreshold is the llm_judge pass mark.
const DefaultJudgeThreshold = 0.7

// Load reads and validates a cases file.
func Load(path string) (*File, error) {
	b, err := safefile.ReadNamed(path, safefile.MaxEvalCases)
	if err != nil {
		hint := errs.HintOf(err)
		if hint == "" {
			hint = "check the path given to `lovia eval`"
		}
		return nil, errs.Wrap(errs.KindConfig, err, "cannot read eval file", hint)
	}
	if err := yamlfile.Check(path, b); err != nil {
		return nil, err
	}
	f, err := Parse(b)
	if err != nil {
		return nil, errs.Wrap(errs.KindConfig, err, path, "fix the case file; see docs/evals.md for the format")
	}
	f.Path = path
	return f, nil
}

// Parse decodes and validates cases from YAML. Errors carry line numbers.
func Parse(b []byte) (*File, error) {
	var f File
	if err := yamlfile.Check("cases", b); err != nil {
		return nil, err // Load checked already, naming the file; this guards other callers
	}
	dec := yaml.NewDecoder(bytes.NewReader(b), yaml.Strict())
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s", yaml.FormatError(err, false, true))
	}
	if len(f.Cases) == 0 {
		return nil, fmt.Errorf("no cases: add a top-level `cases:` list")
	}
	seen := map[string]bool{}
	for i := range f.Cases {
		c := &f.Cases[i]
		if c.Name == "" {
			c.Name = fmt.Sprintf("case-%d", i+1)
		}
		if seen[c.Name] {
			return nil, fmt.Errorf("case %q appears twice: case names must be unique", c.Name)
		}
		seen[c.Name] = true
		if strings.TrimSpace(c.Input) == "" {
			return nil, fmt.Errorf("case %q has no input", c.Name)
		}
		if c.Model == "" {
			c.Model = f.Defaults.Model
		}
		if c.Preset == "" {
			c.Preset = f.Defaults.Preset
		}
		if c.Samples <= 0 {
			c.Samples = max(f.Defaults.Samples, 1)
		}
		if c.MaxTurns <= 0 {
			c.MaxTurns = f.Defaults.MaxTurns
		}
		if len(c.Checks) == 0 {
			return nil, fmt.Errorf("case %q has no checks", c.Name)
		}
		for j, cs := range c.Checks {
			if _, err := cs.Build(); err != nil {
				return nil, fmt.Errorf("case %q, check %d: %w", c.Name, j+1, err)
			}
		}
	}
	if f.Judge.Threshold <= 0 {
		f.Judge.Threshold = DefaultJudgeThreshold
	}
	return &f, nil
}

// ResolveModel makes a relative script: path relative to the cases file.
func (f *File) ResolveModel(model string) string {
	p, ok := strings.CutPrefix(model, "script:")
	if !ok || filepath.IsAbs(p) || f.Path == "" {
		return model
	}
	return "script:" + filepath.Join(filepath.Dir(f.Path), p)
}
