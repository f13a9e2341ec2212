// Command sync refreshes the data copied from chroma's lexers package: the XML
// lexers in embedded/ and LICENSE.chroma, from the chroma version in go.mod. Run it
// with `go generate` in internal/termmd/lexers.
//
// The Go-coded lexers are not refreshed: they were restructured to register lazily,
// so after a chroma upgrade compare them with upstream's by hand (the package's
// tests compare the resulting registries).
package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const module = "github.com/alecthomas/chroma/v2"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sync:", err)
		os.Exit(1)
	}
}

func run() error {
	var stderr bytes.Buffer
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}\t{{.Version}}", module)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go list %s: %w: %s", module, err, stderr.Bytes())
	}
	dir, version, _ := strings.Cut(strings.TrimSpace(string(out)), "\t")
	if dir == "" {
		return fmt.Errorf("go list %s: module not in the module cache (run go mod download)", module)
	}

	old, err := filepath.Glob(filepath.Join("embedded", "*"))
	if err != nil {
		return fmt.Errorf("listing embedded: %w", err)
	}
	for _, path := range old {
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("removing the old copy: %w", err)
		}
	}
	if err := os.MkdirAll("embedded", 0o755); err != nil {
		return fmt.Errorf("creating embedded: %w", err)
	}
	src := filepath.Join(dir, "lexers", "embedded")
	entries, err := os.ReadDir(src)
	if err != nil {
		return fmt.Errorf("reading %s: %w", src, err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		if err := copyFile(filepath.Join(src, e.Name()), filepath.Join("embedded", e.Name())); err != nil {
			return err
		}
	}
	if err := copyFile(filepath.Join(dir, "COPYING"), "LICENSE.chroma"); err != nil {
		return err
	}
	fmt.Printf("sync: copied %d files of %s %s; check the Go-coded lexers by hand\n", len(entries), module, version)
	return nil
}

// copyFile copies src to dst; the module cache's files are read-only, the copies
// are not.
func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("reading %s: %w", src, err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", dst, err)
	}
	return nil
}
