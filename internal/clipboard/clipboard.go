// Package clipboard reads an image from the system clipboard through the
// platform's own tool, chosen at run time: wl-paste (Wayland), xclip (X11),
// pngpaste or osascript (macOS), PowerShell (Windows). When none is there it says
// which one to install instead of failing vaguely.
package clipboard

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"github.com/lovia-dev/lovia/internal/imagefit"
)

// ErrNoImage means the clipboard holds no image (text, or nothing).
var ErrNoImage = errors.New("the clipboard holds no image")

// Reader reads the clipboard. Its fields are the environment it runs in; zero
// values mean the process's own (New).
type Reader struct {
	GOOS   string
	Getenv func(string) string
	// LookPath finds a program (exec.LookPath).
	LookPath func(string) (string, error)
}

// New returns the Reader of this process.
func New() Reader { return Reader{GOOS: runtime.GOOS, Getenv: os.Getenv, LookPath: exec.LookPath} }

// Tool is one way of reading the clipboard.
type Tool struct {
	Name string
	// read returns the image bytes (ErrNoImage when there is none).
	read func(ctx context.Context, path string) ([]byte, error)
	path string
}

// Select picks the clipboard tool for this system, or explains what is missing.
func (r Reader) Select() (Tool, error) {
	look := r.LookPath
	if look == nil {
		look = exec.LookPath
	}
	getenv := r.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	find := func(name string, read func(context.Context, string) ([]byte, error)) (Tool, bool) {
		p, err := look(name)
		if err != nil {
			return Tool{}, false
		}
		return Tool{Name: name, read: read, path: p}, true
	}
	goos := r.GOOS
	if goos == "" {
		goos = runtime.GOOS
	}
	switch goos {
	case "darwin":
		if t, ok := find("pngpaste", readPngpaste); ok {
			return t, nil
		}
		if t, ok := find("osascript", readOsascript); ok {
			return t, nil
		}
		return Tool{}, errors.New("no clipboard tool found: osascript is missing (brew install pngpaste also works)")
	case "windows":
		for _, n := range []string{"powershell.exe", "pwsh.exe", "powershell", "pwsh"} {
			if t, ok := find(n, readPowerShell); ok {
				return t, nil
			}
		}
		return Tool{}, errors.New("no clipboard tool found: PowerShell is not on PATH")
	}
	// Linux and the other Unix systems: Wayland first when a Wayland session is
	// running, then X11.
	wayland, x11 := getenv("WAYLAND_DISPLAY") != "", getenv("DISPLAY") != ""
	if wayland {
		if t, ok := find("wl-paste", readWlPaste); ok {
			return t, nil
		}
	}
	if x11 || !wayland {
		if t, ok := find("xclip", readXclip); ok {
			return t, nil
		}
	}
	switch {
	case wayland:
		return Tool{}, errors.New("no clipboard tool found: install wl-clipboard (wl-paste)")
	case x11:
		return Tool{}, errors.New("no clipboard tool found: install xclip")
	}
	return Tool{}, errors.New("no clipboard: no graphical session (neither WAYLAND_DISPLAY nor DISPLAY is set); paste an image file's path instead")
}

// ReadImage reads the clipboard's image and checks it (imagefit.Check): the bytes
// and their MIME type.
func (r Reader) ReadImage(ctx context.Context) ([]byte, string, error) {
	t, err := r.Select()
	if err != nil {
		return nil, "", err
	}
	data, err := t.read(ctx, t.path)
	if err != nil {
		return nil, "", err
	}
	if len(data) == 0 {
		return nil, "", ErrNoImage
	}
	in, err := imagefit.Check(data)
	if errors.Is(err, imagefit.ErrNotImage) {
		return nil, "", ErrNoImage
	}
	if err != nil {
		return nil, "", fmt.Errorf("clipboard image: %w", err)
	}
	return data, in.MIME, nil
}

// output runs path with args and returns its standard output, at most
// imagefit.MaxFileBytes.
func output(ctx context.Context, path string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, path, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	data, rerr := io.ReadAll(io.LimitReader(out, imagefit.MaxFileBytes+1))
	if len(data) > imagefit.MaxFileBytes {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("the clipboard image is larger than %d MiB", imagefit.MaxFileBytes>>20)
	}
	if err := cmd.Wait(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 200 {
			msg = msg[:200]
		}
		return nil, fmt.Errorf("%s: %w: %s", path, err, msg)
	}
	return data, rerr
}

// imageType picks the best image type from a list of offered MIME types.
func imageType(types string) string {
	offered := strings.Fields(types)
	for _, want := range []string{"image/png", "image/jpeg", "image/webp", "image/gif"} {
		for _, t := range offered {
			if t == want {
				return want
			}
		}
	}
	return ""
}

func readWlPaste(ctx context.Context, path string) ([]byte, error) {
	types, err := output(ctx, path, "--list-types")
	if err != nil {
		return nil, err
	}
	t := imageType(string(types))
	if t == "" {
		return nil, ErrNoImage
	}
	return output(ctx, path, "--no-newline", "--type", t)
}

func readXclip(ctx context.Context, path string) ([]byte, error) {
	types, err := output(ctx, path, "-selection", "clipboard", "-t", "TARGETS", "-o")
	if err != nil {
		return nil, err
	}
	t := imageType(string(types))
	if t == "" {
		return nil, ErrNoImage
	}
	return output(ctx, path, "-selection", "clipboard", "-t", t, "-o")
}

func readPngpaste(ctx context.Context, path string) ([]byte, error) {
	data, err := output(ctx, path, "-")
	if err != nil {
		return nil, ErrNoImage // pngpaste fails when the clipboard holds no image
	}
	return data, nil
}

// readOsascript asks AppleScript for the clipboard as PNG; it prints «data PNGf89504E…».
func readOsascript(ctx context.Context, path string) ([]byte, error) {
	out, err := output(ctx, path, "-e", "the clipboard as «class PNGf»")
	if err != nil {
		return nil, ErrNoImage // "Can't make the clipboard into type «class PNGf»"
	}
	s := strings.TrimSpace(string(out))
	s = strings.TrimPrefix(s, "«data PNGf")
	s = strings.TrimSuffix(s, "»")
	data, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("osascript: unexpected clipboard output")
	}
	return data, nil
}

const psScript = `Add-Type -AssemblyName System.Windows.Forms; Add-Type -AssemblyName System.Drawing; ` +
	`$i = [System.Windows.Forms.Clipboard]::GetImage(); if ($i) { $m = New-Object System.IO.MemoryStream; ` +
	`$i.Save($m, [System.Drawing.Imaging.ImageFormat]::Png); [Convert]::ToBase64String($m.ToArray()) }`

func readPowerShell(ctx context.Context, path string) ([]byte, error) {
	out, err := output(ctx, path, "-NoProfile", "-NonInteractive", "-STA", "-Command", psScript)
	if err != nil {
		return nil, err
	}
	s := strings.TrimSpace(string(out))
	if s == "" {
		return nil, ErrNoImage
	}
	data, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("PowerShell: unexpected clipboard output")
	}
	return data, nil
}
