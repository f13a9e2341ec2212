package secret

import (
	"strings"
	"testing"
)

func TestScrub(t *testing.T) {
	s := NewScrubber("sk-abcdefgh12345678", "short", "sk-abcdefgh12345678-longer", "")
	if s.Len() != 2 {
		t.Fatalf("len %d: short and empty values are ignored", s.Len())
	}
	in := "key=sk-abcdefgh12345678 other=sk-abcdefgh12345678-longer short stays"
	want := "key=[redacted] other=[redacted] short stays"
	if got := s.Scrub(in); got != want {
		t.Fatalf("got %q", got)
	}
	var none *Scrubber
	if none.Scrub("x") != "x" || NewScrubber().Scrub("x") != "x" {
		t.Fatal("an empty scrubber changed text")
	}
}

func TestFromEnviron(t *testing.T) {
	env := []string{
		"OPENAI_API_KEY=sk-openai-0000000", "GITHUB_TOKEN=ghp_000000000", "DB_PASSWORD=hunter22",
		"PATH=/usr/bin", "HOME=/home/u", "MY_THING=named-secret-1", "AWS_SHARED_CREDENTIALS_FILE=/home/u/.aws/credentials",
	}
	got := strings.Join(FromEnviron(env, []string{"MY_THING"}), ",")
	if got != "sk-openai-0000000,ghp_000000000,hunter22,named-secret-1" {
		t.Fatalf("got %s", got)
	}
}
