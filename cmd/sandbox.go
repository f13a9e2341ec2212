package cmd

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/lovia-dev/lovia/internal/workspace/sandbox"
)

// NewCmdSandboxExec is the hidden helper the workspace re-executes lovia as: started
// in new namespaces, it sets them up (private /proc, read-only and hidden paths,
// process limit), confines itself with Landlock and runs the command — or, with
// --serve, many commands (see internal/workspace/sandbox).
// Flags are not parsed by cobra: the arguments belong to the helper verbatim.
func NewCmdSandboxExec() *cobra.Command {
	return &cobra.Command{
		Use:                sandbox.Subcommand + " --rw DIR --ro DIR --path PROG -- ARGV...",
		Hidden:             true,
		DisableFlagParsing: true,
		SilenceUsage:       true,
		Run: func(c *cobra.Command, args []string) {
			// Returns only when the command could not be started.
			os.Exit(sandbox.Main(args, os.Stderr))
		},
	}
}
