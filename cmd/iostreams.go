package cmd

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"
)

// IOStreams are a command's standard streams and what they are connected to. It is the
// one place that decides TTY-ness, so tests run every command with buffers.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// StdinTTY / StdoutTTY / StderrTTY report terminals.
	StdinTTY  bool
	StdoutTTY bool
	StderrTTY bool
	// StdinPiped reports that stdin is a pipe or a regular file (something to read),
	// as opposed to a terminal or /dev/null.
	StdinPiped bool
}

// System returns the process's streams.
func System() *IOStreams {
	io := &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	io.StdinTTY = isTerminal(os.Stdin)
	io.StdoutTTY = isTerminal(os.Stdout)
	io.StderrTTY = isTerminal(os.Stderr)
	if st, err := os.Stdin.Stat(); err == nil && !io.StdinTTY {
		m := st.Mode()
		io.StdinPiped = m&os.ModeNamedPipe != 0 || m.IsRegular() || m&os.ModeSocket != 0
	}
	return io
}

func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}
