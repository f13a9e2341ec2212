// Command lovia is a terminal coding agent.
package main

import (
	"os"

	"github.com/lovia-dev/lovia/cmd"
	"github.com/lovia-dev/lovia/internal/workspace/sandbox"
)

func main() {
	// The sandbox helper re-executes lovia to confine a command before exec; it must
	// not go through flag parsing.
	if len(os.Args) > 1 && os.Args[1] == sandbox.Subcommand {
		os.Exit(sandbox.Main(os.Args[2:], os.Stderr))
	}
	os.Exit(cmd.Execute())
}
