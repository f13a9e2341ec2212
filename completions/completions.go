// Package completions holds lovia's generated shell completion scripts (bash, zsh,
// fish, PowerShell). The scripts are thin: they call `lovia __complete`, so session ids,
// run ids, presets and models complete dynamically. Regenerate with `go generate
// ./completions`; a test in cmd/ fails when they are stale.
package completions

//go:generate go run ./gen .
