package tui

import (
	"strings"
	"testing"
)

// TestStreamedSequenceSplitAcrossDeltas: an escape sequence the model streams in two
// deltas is still removed before the text is drawn.
func TestStreamedSequenceSplitAcrossDeltas(t *testing.T) {
	var s mdStream
	for _, d := range []string{"Hello \x1b]5", "2;c;cm0gLXJmIH4=\x07wor", "ld \x1b", "[2J\u009b", "31mdone\n"} {
		s.AppendRaw(d)
	}
	got := s.String()
	if strings.ContainsAny(got, "\x1b\x07\u009b") || got != "Hello world done\n" {
		t.Fatalf("streamed text = %q", got)
	}
}
