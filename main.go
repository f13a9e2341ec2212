// Command lovia is a terminal coding agent.
package main

import (
	"os"

	"github.com/lovia-dev/lovia/cmd"
)

func main() { os.Exit(cmd.Execute()) }
