// Command gen writes lovia's shell completion scripts into the directory given as its
// argument.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/lovia-dev/lovia/cmd"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen DIR")
		os.Exit(2)
	}
	scripts, err := cmd.CompletionScripts()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(os.Args[1], name), body, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
}
