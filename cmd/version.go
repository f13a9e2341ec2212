package cmd

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/lovia-dev/lovia/internal/app"
)

// NewCmdVersion prints the version.
func NewCmdVersion(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print lovia's version",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(f.IO.Out, "lovia %s (%s, %s/%s)\n", app.Version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
