package cmd

import (
	"bytes"
	"io"
	"os"
)

// CompletionScripts renders the shell completion scripts shipped in completions/,
// keyed by file name.
func CompletionScripts() (map[string][]byte, error) {
	f := &Factory{IO: &IOStreams{In: io.NopCloser(bytes.NewReader(nil)), Out: io.Discard, ErrOut: io.Discard}, Getenv: os.Getenv, Common: &CommonFlags{}}
	root := NewRootCmd(f)
	out := map[string][]byte{}
	gens := []struct {
		name string
		gen  func(io.Writer) error
	}{
		{"lovia.bash", func(w io.Writer) error { return root.GenBashCompletionV2(w, true) }},
		{"_lovia", root.GenZshCompletion},
		{"lovia.fish", func(w io.Writer) error { return root.GenFishCompletion(w, true) }},
		{"lovia.ps1", root.GenPowerShellCompletionWithDesc},
	}
	for _, g := range gens {
		var b bytes.Buffer
		if err := g.gen(&b); err != nil {
			return nil, err
		}
		out[g.name] = b.Bytes()
	}
	return out, nil
}
