package tui

import "testing"

// A paste is taken for an image path when it is one line naming a file with an
// image extension, as file managers and terminals paste a dropped file.
func TestPastedPath(t *testing.T) {
	for in, want := range map[string]string{
		"/home/me/shot.png":            "/home/me/shot.png",
		"'/home/me/my shot.PNG'":       "/home/me/my shot.PNG",
		"\"/tmp/a.jpeg\"\n":            "/tmp/a.jpeg",
		"file:///tmp/b.webp":           "/tmp/b.webp",
		`/home/me/my\ shot.gif`:        "/home/me/my shot.gif",
		"shot.png is broken":           "",
		"/tmp/a.png\n/tmp/b.png":       "",
		"look at this: func main() {}": "",
		"/home/me/notes.txt":           "",
	} {
		if got := pastedPath(in); got != want {
			t.Errorf("pastedPath(%q) = %q, want %q", in, got, want)
		}
	}
}
