package buildinfo

import (
	"strings"
	"testing"
)

func TestGet(t *testing.T) {
	in := Get()
	if in.Version == "" || in.Go == "" || in.OS == "" || in.Arch == "" {
		t.Fatalf("incomplete: %+v", in)
	}
	s := Info{Version: "v1.2.3", Commit: "abc123", Date: "2026-11-30", Go: "go1.26", OS: "linux", Arch: "amd64"}.String()
	for _, want := range []string{"v1.2.3", "abc123", "2026-11-30", "linux/amd64"} {
		if !strings.Contains(s, want) {
			t.Errorf("%q lacks %q", s, want)
		}
	}
}
