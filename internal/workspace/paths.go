package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

func userHome() (string, error) {
	h, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return resolveLoose(h), nil
}

func tempDir() string { return os.TempDir() }

// expandHome replaces a leading "~" or "~/" with home. "~user" is left alone.
func expandHome(p, home string) string {
	if home == "" {
		return p
	}
	if p == "~" {
		return home
	}
	if strings.HasPrefix(p, "~/") {
		return home + p[1:]
	}
	return p
}

// maxSymlinks bounds symlink chains like the kernel's ELOOP limit.
const maxSymlinks = 40

// Resolution failures: the kernel would not reach any file through such a path,
// so a path that fails to resolve is denied rather than judged by its text.
var (
	errLoop      = fmt.Errorf("more than %d symbolic links (%w)", maxSymlinks, syscall.ELOOP)
	errMagicLink = errors.New("it goes through a /proc magic link (such as /proc/self/fd/N or /proc/PID/cwd), which names an open file rather than a path")
)

// resolveLoose resolves an absolute path like the kernel would, tolerating a
// missing tail. For trusted input (configuration, the home directory): a path that
// cannot be resolved is returned cleaned.
func resolveLoose(abs string) string {
	out, err := resolvePath(abs, "")
	if err != nil {
		return filepath.Clean(abs)
	}
	return out
}

// resolvePath resolves an absolute path component by component as the kernel's
// path walk does: symlinks are followed where they are met, ".." goes to the parent
// of what was actually reached, and a trailing run of components that do not exist
// yet is kept as written (what a create would make). It fails where the kernel
// would fail to reach anything: ".." or "." after a missing component, any
// component after a non-directory, more than maxSymlinks links, an unreadable
// link, and magic links under /proc. The result is clean, absolute and free of
// symlinks in its existing part — which is what safeOpen relies on.
//
// known, when set, is an already resolved directory: a path below it starts there
// (saving an lstat per component of the root on every decision).
func resolvePath(abs, known string) (string, error) {
	// No lexical Clean: "link/.." must go to the parent of link's target.
	if !filepath.IsAbs(abs) {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("relative path without a working directory: %w", err)
		}
		abs = wd + "/" + abs
	}
	links := 0
	cur := "/"
	var rest []string
	if known != "" && strings.HasPrefix(abs, known+"/") {
		cur = known
		rest = strings.Split(abs[len(known)+1:], "/")
	} else {
		rest = strings.Split(strings.TrimPrefix(abs, "/"), "/")
	}
	missing := "" // the first component that does not exist, once met
	notDir := ""  // an existing non-directory, once met
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		if notDir != "" {
			// Anything after a file ("file/", "file/.", "file/..") is ENOTDIR.
			return "", fmt.Errorf("%s is not a directory (%w)", notDir, syscall.ENOTDIR)
		}
		switch c {
		case "", ".":
			continue
		case "..":
			if missing != "" {
				// The kernel cannot walk through what is not there.
				return "", fmt.Errorf("%s does not exist, so .. after it leads nowhere (%w)", missing, syscall.ENOENT)
			}
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		if missing != "" {
			cur = next
			continue
		}
		fi, err := os.Lstat(next)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				return "", err
			}
			missing = next
			cur = next
			continue
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			if !fi.IsDir() {
				notDir = next
			}
			cur = next
			continue
		}
		if cur != "/proc" && strings.HasPrefix(cur, "/proc/") {
			// Below /proc every symlink is a magic link: the kernel jumps to the object,
			// not to the text readlink shows.
			return "", fmt.Errorf("%s: %w", next, errMagicLink)
		}
		links++
		if links > maxSymlinks {
			return "", fmt.Errorf("%s: %w", next, errLoop)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if target == "" {
			return "", fmt.Errorf("%s is an empty symbolic link (%w)", next, syscall.ENOENT)
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		rest = append(strings.Split(strings.TrimPrefix(target, "/"), "/"), rest...)
	}
	return cur, nil
}

// Resolve turns a path as the model or a command wrote it (absolute, "~", or relative
// to cwd) into the absolute path it lands on. A path that cannot be resolved is
// returned cleaned; use resolve where the answer decides anything.
func (p *Policy) Resolve(path, cwd string) string {
	abs, err := p.resolve(path, cwd)
	if err != nil {
		return p.lexical(path, cwd)
	}
	return abs
}

func (p *Policy) absolute(path, cwd string) string {
	path = expandHome(path, p.home)
	if !filepath.IsAbs(path) {
		if cwd == "" {
			cwd = p.root
		}
		path = cwd + "/" + path
	}
	return path
}

func (p *Policy) lexical(path, cwd string) string { return filepath.Clean(p.absolute(path, cwd)) }

// resolve is Resolve reporting why a path cannot be resolved.
func (p *Policy) resolve(path, cwd string) (string, error) {
	return resolvePath(p.absolute(path, cwd), p.root)
}

// Judge resolves path (relative to cwd, "" = the root) and decides op on it: the
// one place a path given by the model or a command is turned into a verdict. A path
// the kernel could not resolve (a loop, ".." after a missing directory, a magic link)
// is denied, and abs is then "" (there is no path it names).
func (p *Policy) Judge(path, cwd string, op Op) (abs string, d Decision, why string) {
	abs, err := p.resolve(path, cwd)
	if err != nil {
		return "", Deny, fmt.Sprintf("%s cannot be resolved to a file: %v", path, err)
	}
	d, why = p.DecidePath(abs, op)
	return abs, d, why
}
