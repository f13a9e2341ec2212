package cmd

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/lovia-dev/lovia/internal/config"
	"github.com/lovia-dev/lovia/internal/preset"
	"github.com/lovia-dev/lovia/internal/termtext"
)

// PresetsOptions are the inputs of `lovia presets`.
type PresetsOptions struct {
	F    *Factory
	JSON bool
}

// NewCmdPresets builds `lovia presets`.
func NewCmdPresets(f *Factory, runF func(*PresetsOptions) error) *cobra.Command {
	opts := &PresetsOptions{F: f}
	c := &cobra.Command{
		Use:   "presets",
		Short: "List agent presets and where they come from",
		Long: `List the agent presets: bundled ones, then ~/.config/lovia/presets/*.yaml, then the
project's .lovia/presets/*.yaml (a later preset with the same name wins).
Choose one with --preset NAME.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return presetsRun(opts)
		},
	}
	c.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return c
}

func presetsRun(opts *PresetsOptions) error {
	f := opts.F
	cfg, err := config.Load(config.Options{Cwd: f.Common.Cwd, Getenv: f.Getenv, Flags: f.Common.Overrides()})
	if err != nil {
		return err
	}
	set, err := preset.Load(cfg.PresetDirs())
	if err != nil {
		return err
	}
	type row struct {
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Source      string   `json:"source"`
		Policy      string   `json:"policy,omitempty"`
		Handoffs    []string `json:"handoffs,omitempty"`
		Default     bool     `json:"default,omitempty"`
	}
	var rows []row
	for _, p := range set.List() {
		rows = append(rows, row{p.Name, p.Description, p.Source, p.Policy, p.Handoffs, p.Name == cfg.Preset})
	}
	if opts.JSON {
		enc := json.NewEncoder(f.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	tw := newTable(termtext.NewWriter(f.IO.Out)) // repository text, sanitized
	fmt.Fprintln(tw, "NAME\tDESCRIPTION\tSOURCE")
	for _, r := range rows {
		name := r.Name
		if r.Default {
			name += " *"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", name, r.Description, r.Source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if src := cfg.Source("preset"); src.Layer == config.LayerDefault {
		fmt.Fprintln(f.IO.Out, "\n* used when --preset is not given")
	} else {
		fmt.Fprintf(f.IO.Out, "\n* used when --preset is not given (set by %s)\n", src)
	}
	return nil
}
