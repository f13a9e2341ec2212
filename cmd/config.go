package cmd

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/lovia-dev/lovia/internal/config"
	"github.com/lovia-dev/lovia/internal/preset"
	"github.com/lovia-dev/lovia/internal/termtext"
)

// ConfigOptions are the inputs of `lovia config`.
type ConfigOptions struct {
	F    *Factory
	JSON bool
}

// NewCmdConfig builds `lovia config`: the effective configuration and its sources.
func NewCmdConfig(f *Factory, runF func(*ConfigOptions) error) *cobra.Command {
	opts := &ConfigOptions{F: f}
	c := &cobra.Command{
		Use:   "config",
		Short: "Show the effective configuration and where each value comes from",
		Long: `Show every effective setting and its source. Precedence, highest first: flags,
environment (LOVIA_MODEL, LOVIA_PRESET, LOVIA_POLICY, LOVIA_MAX_TURNS,
LOVIA_BUDGET_TOKENS, LOVIA_HOME, LOVIA_DB, LOVIA_SANDBOX), the project's .lovia/config.yaml,
~/.config/lovia/config.yaml, built-in defaults.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return configRun(opts)
		},
	}
	c.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return c
}

func configRun(opts *ConfigOptions) error {
	f := opts.F
	cfg, err := config.Load(config.Options{Cwd: f.Common.Cwd, Getenv: f.Getenv, Flags: f.Common.Overrides()})
	if err != nil {
		return err
	}
	// The chosen preset supplies model and policy where nothing more specific did.
	set, err := preset.Load(cfg.PresetDirs())
	if err != nil {
		return err
	}
	p, err := set.Get(cfg.Preset)
	if err != nil {
		return err
	}
	if p.Model != "" && cfg.Source("model").Layer == config.LayerDefault {
		cfg.SetPreset("model", p.Model, p.Name)
	}
	if p.Policy != "" {
		cfg.SetPreset("policy", p.Policy, p.Name)
	} else if cfg.Source("policy").Layer == config.LayerDefault {
		cfg.SetPreset("policy", config.DefaultPolicy, "(default)")
	}
	if opts.JSON {
		enc := json.NewEncoder(f.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"values": cfg.Values(), "files": cfg.Files, "root": cfg.Root, "user_dir": cfg.UserDir,
			"trust": map[string]any{"trusted": cfg.Trust.Trusted, "via": cfg.Trust.Via, "ignored": cfg.Trust.Ignored()}})
	}
	tw := newTable(termtext.NewWriter(f.IO.Out)) // repository text, sanitized
	fmt.Fprintln(tw, "KEY\tVALUE\tSOURCE")
	for _, v := range cfg.Values() {
		val := v.Value
		if val == "" {
			val = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", v.Key, val, v.Source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(f.IO.Out, "\nuser config dir: %s\nproject root:    %s\n", cfg.UserDir, cfg.Root)
	if len(cfg.Files) == 0 {
		fmt.Fprintln(f.IO.Out, "config files:    none (create .lovia/config.yaml or ~/.config/lovia/config.yaml)")
	}
	for _, p := range cfg.Files {
		fmt.Fprintf(f.IO.Out, "config file:     %s\n", p)
	}
	switch t := cfg.Trust; {
	case len(t.Entries) == 0:
	case t.Trusted:
		fmt.Fprintf(f.IO.Out, "trust:           trusted (%s): %d loosening project setting(s) apply\n", t.Via, len(t.Entries))
	default:
		fmt.Fprintf(f.IO.Out, "trust:           not trusted: %d loosening project setting(s) ignored (`lovia trust` shows them)\n", len(t.Entries))
	}
	return nil
}
