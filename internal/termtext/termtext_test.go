package termtext

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain", "hello, world\n\tindented ünïcödé 日本", "hello, world\n\tindented ünïcödé 日本"},
		{"sgr colour", "\x1b[31mred\x1b[0m", "red"},
		{"clear screen", "before\x1b[2J\x1b[Hafter", "beforeafter"},
		{"title BEL", "\x1b]0;pwned\x07text", "text"},
		{"title ST", "\x1b]2;pwned\x1b\\text", "text"},
		{"osc 52 clipboard", "x\x1b]52;c;cm0gLXJmIH4=\x07y", "xy"},
		{"osc 8 hyperlink", "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\", "click"},
		{"dcs", "a\x1bP1$r0m\x1b\\b", "ab"},
		{"apc pm sos", "a\x1b_apc\x1b\\b\x1b^pm\x1b\\c\x1bXsos\x1b\\d", "abcd"},
		{"reset and cursor save", "a\x1bcb\x1b7c\x1b8d", "abcd"},
		{"charset", "a\x1b(Bb\x1b#8c", "abc"},
		{"8-bit CSI raw", "a\x9b2Jb", "ab"},
		{"8-bit OSC raw", "a\x9d0;t\x9cb", "ab"},
		{"8-bit OSC as UTF-8", "a\u009d0;t\u009cb", "ab"},
		{"C1 NEL escaped", "a\u0085b", `a\u0085b`},
		{"invalid byte", "a\xffb", `a\xffb`},
		{"C0", "a\x00b\x08c\x7fd", "a^@b^Hc^?d"},
		{"bell", "ding\x07", "ding^G"},
		{"lone ESC at end", "a\x1b", "a^["},
		{"ESC then control", "a\x1b\x01b", "a^[^Ab"},
		{"CRLF", "a\r\nb", "a\nb"},
		{"CR overwrite", "rm -rf ~\rls      ", "rm -rf ~\nls      "},
		{"CR CR LF", "a\r\r\nb", "a\n\nb"},
		{"bidi", "if x \u202e} \u2066y\u2069", `if x \u202e} \u2066y\u2069`},
		{"unterminated OSC hides one line at most", "\x1b]0;title\nanswer", "\nanswer"},
		{"CSI cancelled by control", "\x1b[1\n2J", "\n2J"},
		{"smart quotes in a title", "\x1b]0;“x”\x07ok", "ok"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := String(c.in); got != c.want {
				t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
			}
			var w bytes.Buffer
			sw := NewWriter(&w)
			sw.Write([]byte(c.in))
			sw.Flush()
			if got := w.String(); got != c.want {
				t.Errorf("Writer(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestUnterminatedSequenceIsBounded(t *testing.T) {
	long := strings.Repeat("a", maxStr+100)
	out := String("\x1b]0;" + long)
	if !strings.HasSuffix(out, strings.Repeat("a", 90)) {
		t.Fatalf("an unterminated OSC swallowed everything: %d bytes shown", len(out))
	}
	out = String("\x1b[" + strings.Repeat("1;", maxCSI) + "visible")
	if !strings.HasSuffix(out, "visible") {
		t.Fatalf("an endless CSI swallowed the text: %q", out)
	}
}

func TestCleanDoesNotAllocate(t *testing.T) {
	s := strings.Repeat("plain text ünïcödé\n", 100)
	if n := testing.AllocsPerRun(100, func() { _ = String(s) }); n != 0 {
		t.Fatalf("String of clean text allocated %v times", n)
	}
}

func TestStreamAcrossPieces(t *testing.T) {
	in := "one \x1b]52;c;aGVsbG8=\x07two \x1b[2Jthree 日本 \u202e \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\r\nend\x9b1m."
	want := String(in)
	for cut := 0; cut <= len(in); cut++ {
		for cut2 := cut; cut2 <= len(in); cut2 += 3 {
			var st Stream
			got := st.String(in[:cut]) + st.String(in[cut:cut2]) + st.String(in[cut2:]) + st.End()
			if got != want {
				t.Fatalf("split at %d,%d: %q, want %q", cut, cut2, got, want)
			}
		}
	}
}

func TestWriter(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	for _, p := range []string{"a\x1b", "]0;ti", "tle\x1b", "\\b \xe6\x97", "\xa5 c\x1b"} {
		if n, err := w.Write([]byte(p)); err != nil || n != len(p) {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "ab 日 c^["; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestWriterSteadyStateDoesNotAllocate(t *testing.T) {
	w := NewWriter(discard{})
	delta := []byte("some streamed \x1b[1mtext\x1b[0m, ")
	w.Write(delta)
	if n := testing.AllocsPerRun(1000, func() { w.Write(delta) }); n != 0 {
		t.Fatalf("Write allocated %v times per delta", n)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// forbidden reports the first control a terminal would act on.
func forbidden(s string) (rune, bool) {
	for _, r := range s {
		switch {
		case r < 0x20 && r != '\n' && r != '\t', r == 0x7f, r >= 0x80 && r <= 0x9f,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return r, true
		}
	}
	return 0, false
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"plain", "\x1b[31mred\x1b[0m\r\n\x1b]8;;http://x\x07link\x1b]8;;\x07\ttab\x00",
		"\x9b2J\x9d0;x\x9c\u009b1m", "\xe6\x97\xa5\xe6\x97", "\x1bP\x1b\\\x1b\x1b[", "a\r\rb\u202ec"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, cut int) {
		out := String(s)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of %q: %q", s, out)
		}
		if strings.ContainsAny(out, "\x1b\x07\r") {
			t.Fatalf("ESC, BEL or CR left in %q", out)
		}
		if r, bad := forbidden(out); bad {
			t.Fatalf("control %U left in %q", r, out)
		}
		if again := String(out); again != out {
			t.Fatalf("not idempotent: %q -> %q", out, again)
		}
		if utf8.ValidString(s) && !strings.ContainsAny(s, "\x1b\r") && !strings.ContainsFunc(s, func(r rune) bool { return showAs(r) != keep }) {
			// Text without sequences keeps its printable characters.
			for _, r := range s {
				if r >= 0x20 && r != 0x7f && !strings.ContainsRune(out, r) {
					t.Fatalf("%q lost %q: %q", s, r, out)
				}
			}
		}
		// Streaming in two pieces gives the same text.
		if cut < 0 {
			cut = -cut
		}
		if len(s) > 0 {
			cut %= len(s) + 1
		} else {
			cut = 0
		}
		var st Stream
		if got := st.String(s[:cut]) + st.String(s[cut:]) + st.End(); got != out {
			t.Fatalf("streamed %q|%q = %q, want %q", s[:cut], s[cut:], got, out)
		}
	})
}

var sink string

// BenchmarkString measures a typical streamed delta (clean) and a dirty one.
func BenchmarkString(b *testing.B) {
	clean := "Here is the fix: replace `x := y` with `x = y` in main.go, then run go test ./... again.\n"
	dirty := "\x1b[1mHere\x1b[0m is the \x1b]8;;http://x\x1b\\fix\x1b]8;;\x1b\\: replace `x := y`\r\n"
	b.Run("clean", func(b *testing.B) {
		b.SetBytes(int64(len(clean)))
		for b.Loop() {
			sink = String(clean)
		}
	})
	b.Run("dirty", func(b *testing.B) {
		b.SetBytes(int64(len(dirty)))
		for b.Loop() {
			sink = String(dirty)
		}
	})
}

func BenchmarkWriter(b *testing.B) {
	delta := []byte("Here is the \x1b[1mfix\x1b[0m: replace `x := y` with `x = y` in main.go ")
	w := NewWriter(discard{})
	b.SetBytes(int64(len(delta)))
	b.ReportAllocs()
	for b.Loop() {
		w.Write(delta)
	}
}
