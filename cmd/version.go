package cmd

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/lovia-dev/lovia/internal/buildinfo"
)

// NewCmdVersion prints the version.
func NewCmdVersion(f *Factory) *cobra.Command {
	asJSON := false
	c := &cobra.Command{
		Use:   "version",
		Short: "Print lovia's version",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			in := buildinfo.Get()
			if asJSON {
				enc := json.NewEncoder(f.IO.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(in)
			}
			_, err := fmt.Fprintln(f.IO.Out, in.String())
			return err
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}
