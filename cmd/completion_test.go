package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The shipped scripts must match what this build generates.
func TestCompletionsAreFresh(t *testing.T) {
	scripts, err := CompletionScripts()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range scripts {
		got, err := os.ReadFile(filepath.Join("..", "completions", name))
		if err != nil {
			t.Fatalf("completions/%s is missing: run `go generate ./completions`", name)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("completions/%s is stale: run `go generate ./completions`", name)
		}
	}
}
