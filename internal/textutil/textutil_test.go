package textutil

import "testing"

func TestOneLineAndClip(t *testing.T) {
	if got := OneLine("  a\n\tb   c \r\n"); got != "a b c" {
		t.Errorf("OneLine = %q", got)
	}
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"one\ntwo three four", 9, "one two …"},
		{"日本語のテキスト", 4, "日本語…"},
		{"x", 0, ""},
	} {
		if got := Clip(c.in, c.n); got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

func TestMentionsAndBytes(t *testing.T) {
	got := Mentions("see @a.go, @b.png and @a.go again; mail me@x.org or @ alone (@c.txt)")
	want := []string{"a.go", "b.png"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("Mentions = %q, want %q", got, want)
	}
	for n, want := range map[int64]string{12: "12 bytes", 3 << 10: "3.0 KiB", 3<<20 + 1<<19: "3.5 MiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
