package cmd

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/lovia-dev/lovia/internal/buildinfo"
)

// NewCmdMan writes manual pages generated from the command tree, so the pages never
// drift from the flags: `lovia man` prints lovia(1); `--dir` writes one page per
// command (lovia.1, lovia-run.1, …) as the release packages install them.
func NewCmdMan(f *Factory) *cobra.Command {
	dir := ""
	c := &cobra.Command{
		Use:   "man",
		Short: "Print lovia's manual page, or write every page with --dir",
		Long: "Print the lovia(1) manual page in roff, or write one page per command into a\n" +
			"directory with --dir (release packages install these under share/man/man1).\n\n" +
			"  lovia man | man -l -\n  lovia man --dir ./man",
		Args:   cobra.NoArgs,
		Hidden: false,
		RunE: func(c *cobra.Command, _ []string) error {
			root := c.Root()
			root.DisableAutoGenTag = true
			header := &doc.GenManHeader{
				Title:   "LOVIA",
				Section: "1",
				Source:  "lovia " + buildinfo.Get().Version,
				Manual:  "lovia manual",
			}
			if dir == "" {
				return doc.GenMan(root, header, f.IO.Out)
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("man: %w", err)
			}
			if err := doc.GenManTree(root, header, dir); err != nil {
				return fmt.Errorf("man: writing pages into %s: %w", dir, err)
			}
			return nil
		},
	}
	c.Flags().StringVar(&dir, "dir", "", "write one page per command into `DIR`")
	_ = c.MarkFlagDirname("dir")
	return c
}
