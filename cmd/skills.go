package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/lovia-dev/lovia/internal/textutil"

	"github.com/spf13/cobra"

	"github.com/lovia-dev/lovia/internal/config"
	"github.com/lovia-dev/lovia/internal/plugin/skills"
	"github.com/lovia-dev/lovia/internal/termtext"
	bundledskills "github.com/lovia-dev/lovia/skills"
)

// SkillsOptions are the inputs of `lovia skills`.
type SkillsOptions struct {
	F    *Factory
	JSON bool
}

// NewCmdSkills builds `lovia skills`.
func NewCmdSkills(f *Factory, runF func(*SkillsOptions) error) *cobra.Command {
	opts := &SkillsOptions{F: f}
	c := &cobra.Command{
		Use:   "skills",
		Short: "List the agent skills lovia can load, and where they come from",
		Long: `List the skills the model can load on demand: the bundled ones, then
~/.config/lovia/skills, the project's .lovia/skills, .agents/skills and
.claude/skills, then skills.dirs from the config (a later skill with the same name
wins). Each skill is a folder with a SKILL.md (frontmatter name and description).
A SKILL.md that cannot be read is reported on stderr with its file and line; the
other skills are still listed.`,
		Example: `  lovia skills
  lovia skills --json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return skillsRun(c.Context(), opts)
		},
	}
	c.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return c
}

func skillsRun(ctx context.Context, opts *SkillsOptions) error {
	f := opts.F
	if ctx == nil {
		ctx = context.Background()
	}
	cfg, err := config.Load(config.Options{Cwd: f.Common.Cwd, Getenv: f.Getenv, Flags: f.Common.Overrides()})
	if err != nil {
		return err
	}
	dirs := append(skills.DirsFor(f.Getenv("HOME"), cfg.UserDir, cfg.Root), cfg.Skills.Dirs...)
	list, problems := skills.List(ctx, skills.Config{Bundled: bundledskills.FS, Dirs: dirs, NoWatch: true, Repo: cfg.Root})
	for _, p := range problems {
		var w *skills.Warning
		if errors.As(p, &w) {
			fmt.Fprintf(f.IO.ErrOut, "lovia: warning: %s\n", termtext.String(fmt.Sprint(p)))
			continue
		}
		fmt.Fprintf(f.IO.ErrOut, "lovia: skipped a skill: %s\n", termtext.String(fmt.Sprint(p)))
	}
	type row struct {
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Source      string   `json:"source"`
		Path        string   `json:"path"`
		Shadows     []string `json:"shadows,omitempty"`
	}
	rows := []row{}
	for _, s := range list {
		rows = append(rows, row{s.Name, textutil.OneLine(s.Description), s.Source, s.Path, s.Shadows})
	}
	if opts.JSON {
		enc := json.NewEncoder(f.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(f.IO.Out, "no skills found")
		return err
	}
	tw := newTable(termtext.NewWriter(f.IO.Out)) // repository text, sanitized
	fmt.Fprintln(tw, "NAME\tDESCRIPTION\tPATH")
	for _, r := range rows {
		desc := r.Description
		if f.IO.StdoutTTY && len([]rune(desc)) > 72 {
			desc = string([]rune(desc)[:71]) + "…"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, desc, r.Path)
	}
	return tw.Flush()
}
