package cmd

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/lovia-dev/lovia/internal/app"
	"github.com/lovia-dev/lovia/internal/config"
	"github.com/lovia-dev/lovia/internal/instructions"
	"github.com/lovia-dev/lovia/internal/termtext"
)

// InstructionsOptions are the inputs of `lovia instructions`.
type InstructionsOptions struct {
	F    *Factory
	JSON bool
	Text bool
}

// NewCmdInstructions builds `lovia instructions`.
func NewCmdInstructions(f *Factory, runF func(*InstructionsOptions) error) *cobra.Command {
	opts := &InstructionsOptions{F: f}
	c := &cobra.Command{
		Use:   "instructions",
		Short: "List the instruction files lovia reads (AGENTS.md, CLAUDE.md, imports) and why",
		Long: `List the instruction files that go into the system prompt, in order, and why
each was read: ~/.config/lovia/AGENTS.md and ~/.claude/CLAUDE.md, then AGENTS.md,
CLAUDE.md and CLAUDE.local.md in every directory from the repository root down to
the working directory, with the files their @path imports name (at most 5 deep,
each file once). Imports that were not followed (outside the repository, a cycle,
too deep) and files that were refused are listed with the reason.`,
		Example: `  lovia instructions
  lovia instructions --text
  lovia instructions --json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return instructionsRun(opts)
		},
	}
	c.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	c.Flags().BoolVar(&opts.Text, "text", false, "print the combined instructions as the model sees them")
	return c
}

func instructionsRun(opts *InstructionsOptions) error {
	f := opts.F
	cfg, err := config.Load(config.Options{Cwd: f.Common.Cwd, Getenv: f.Getenv, Flags: f.Common.Overrides()})
	if err != nil {
		return err
	}
	res, problems := instructions.Load(app.InstructionsOptions(cfg, f.Getenv("HOME")))
	if opts.Text {
		fmt.Fprintln(f.IO.Out, res.Text)
		return nil
	}
	if opts.JSON {
		type file struct {
			Path    string `json:"path"`
			Why     string `json:"why"`
			Bytes   int    `json:"bytes"`
			Omitted int    `json:"omitted,omitempty"`
		}
		out := struct {
			Files     []file   `json:"files"`
			Notes     []string `json:"notes,omitempty"`
			Problems  []string `json:"problems,omitempty"`
			Truncated bool     `json:"truncated,omitempty"`
		}{Files: []file{}, Notes: res.Notes, Truncated: res.Truncated}
		for _, fl := range res.Files {
			out.Files = append(out.Files, file{fl.Path, fl.Why, fl.Bytes, fl.Omitted})
		}
		for _, p := range problems {
			out.Problems = append(out.Problems, p.Error())
		}
		enc := json.NewEncoder(f.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	if len(res.Files) == 0 {
		fmt.Fprintln(f.IO.Out, "No instruction files found (AGENTS.md, CLAUDE.md, CLAUDE.local.md).")
	}
	for _, fl := range res.Files {
		p := fl.Path
		if r, err := filepath.Rel(cfg.Cwd, p); err == nil && len(r) < len(p) {
			p = r
		}
		line := fmt.Sprintf("%s  (%s, %d bytes", termtext.String(p), termtext.String(fl.Why), fl.Bytes)
		if fl.Omitted > 0 {
			line += fmt.Sprintf(", %d cut by the size cap", fl.Omitted)
		}
		fmt.Fprintln(f.IO.Out, line+")")
	}
	for _, n := range res.Notes {
		fmt.Fprintln(f.IO.Out, "note: "+termtext.String(n))
	}
	for _, p := range problems {
		fmt.Fprintln(f.IO.ErrOut, "lovia: "+termtext.String(p.Error()))
	}
	return nil
}
