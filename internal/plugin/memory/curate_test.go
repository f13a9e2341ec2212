package memory

import (
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/transcript"
)

func TestParseProposals(t *testing.T) {
	scrub := func(s string) string { return strings.ReplaceAll(s, "sk-SECRET123", "[REDACTED]") }
	answer := "Here are facts:\n- Tests run with `make check`.\n* The API key is sk-SECRET123 in .env\n2. Use tabs in Go files.\n- Tests run with `make check`.\n- " +
		strings.Repeat("x", maxProposalChars+1) + "\n- NONE\nnot a list line\n- a\n- b\n- c\n- d\n"
	got := ParseProposals(answer, scrub)
	want := []string{"Tests run with `make check`.", "The API key is [REDACTED] in .env", "Use tabs in Go files.", "a", "b"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if got := ParseProposals("NONE", nil); len(got) != 0 {
		t.Fatalf("NONE: got %q", got)
	}
}

func TestCurationDigestBoundedAndScrubbed(t *testing.T) {
	var es []transcript.Entry
	es = append(es, transcript.UserInput("first question"))
	for i := 0; i < 200; i++ {
		es = append(es, transcript.Entry{Type: transcript.TypeToolResult, Text: strings.Repeat("o", 5000)})
	}
	es = append(es, transcript.Entry{Type: transcript.TypeAssistantText, Text: "token ghp_TOPSECRET done"})
	d := CurationDigest(es, func(s string) string { return strings.ReplaceAll(s, "ghp_TOPSECRET", "[REDACTED]") })
	if n := len([]rune(d)); n > MaxCurationInput+100 {
		t.Fatalf("digest is %d runes, over the bound", n)
	}
	if strings.Contains(d, "ghp_TOPSECRET") || !strings.Contains(d, "token [REDACTED] done") {
		t.Fatalf("digest tail not scrubbed or missing: %q", d[len(d)-80:])
	}
	if !strings.Contains(d, "earlier entries left out") {
		t.Fatal("a cut digest must say so")
	}
}
