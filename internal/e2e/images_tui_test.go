package e2e

import (
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/provider/providertest"
)

// In the chat, an @mention of an image, a pasted image path and Ctrl-V with an
// image on the clipboard (a fake xclip on PATH) attach the image: the prompt shows
// [image N], and the request carries the image natively.
func TestImagesInChat(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	if testing.Short() {
		t.Skip("drives tmux")
	}
	srv := providertest.NewOpenAIServer(t,
		providertest.Turn{Text: "reply-one: a small picture"},
		providertest.Turn{Text: "reply-two: two pictures"})
	repo, home, tools := t.TempDir(), t.TempDir(), t.TempDir()
	shot, pasted, clip := imgPNG(t, 6, 3), imgPNG(t, 5, 5), imgPNG(t, 7, 2)
	for name, data := range map[string][]byte{"shot.png": shot, "pasted.png": pasted} {
		if err := os.WriteFile(filepath.Join(repo, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(tools, "clip.png"), clip, 0o644); err != nil {
		t.Fatal(err)
	}
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Skip("no cat")
	}
	xclip := "#!/bin/sh\ncase \"$*\" in *TARGETS*) echo image/png;; *image/png*) " + cat + " " + tools + "/clip.png;; *) exit 1;; esac\n"
	if err := os.WriteFile(filepath.Join(tools, "xclip"), []byte(xclip), 0o755); err != nil {
		t.Fatal(err)
	}

	s := &tmuxSession{t: t, socket: fmt.Sprintf("lovia-img-%d", os.Getpid())}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	vars := []string{"LOVIA_HOME=" + home, "HOME=" + home, "TERM=xterm-256color", "DISPLAY=:0", "WAYLAND_DISPLAY=",
		"PATH=" + tools + ":" + os.Getenv("PATH"), "HTTPS_PROXY=http://127.0.0.1:9", "NO_PROXY=127.0.0.1,localhost"}
	for k, v := range srv.EnvVars() {
		vars = append(vars, k+"="+v)
	}
	command := fmt.Sprintf("env %s %s -m openai:gpt-4.1 --policy coding; echo LOVIA-EXITED; sleep 600", strings.Join(vars, " "), bin)
	s.run("new-session", "-d", "-s", "main", "-x", "110", "-y", "30", "-c", repo, command)
	s.waitFor("new session", 15*time.Second)

	// 1: an @mention.
	s.text("what is in @shot.png?")
	s.keys("Enter")
	s.waitFor("attached image shot.png", 10*time.Second)
	s.waitFor("reply-one", 10*time.Second)

	// 2: a pasted path (bracketed paste) and Ctrl-V.
	s.run("set-buffer", filepath.Join(repo, "pasted.png"))
	s.run("paste-buffer", "-p", "-t", "main")
	s.waitVisible("[image 1]", 10*time.Second)
	s.text(" and ")
	s.keys("C-v")
	s.waitVisible("[image 2]", 10*time.Second)
	s.keys("Enter")
	s.waitFor("› [image 1] and [image 2]", 10*time.Second)
	s.waitFor("reply-two", 10*time.Second)

	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	b64 := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	var got []string
	for _, p := range imgParts(reqs[1].Body, chatImagePart) {
		got = append(got, p.b64)
	}
	// The second request replays the first message's image, then the two new ones.
	want := []string{b64(shot), b64(pasted), b64(clip)}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("images in the second request: %d, want shot, pasted, clipboard in order\nbody: %s", len(got), provTail(string(reqs[1].Body), 2000))
	}
}
