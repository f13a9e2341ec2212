package workspace

import (
	"os"
	"path/filepath"
	"strings"
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

// resolveLoose resolves an absolute path like the kernel would (symlinks followed
// component by component, ".." applied to the resolved parent) while tolerating
// components that do not exist yet: those are appended as they are.
func resolveLoose(abs string) string {
	out, _ := resolvePath(abs, "")
	return out
}

// resolvePath is resolveLoose reporting whether a symlink loop was hit.
// known, when set, is an already resolved directory: a path below it starts there
// (saving an lstat per component of the root on every decision).
func resolvePath(abs, known string) (string, bool) {
	// No lexical Clean: "link/.." must go to the parent of link's target.
	if !filepath.IsAbs(abs) {
		if wd, err := os.Getwd(); err == nil {
			abs = wd + "/" + abs
		}
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
	missing := false
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		if missing {
			cur = next
			continue
		}
		fi, err := os.Lstat(next)
		if err != nil {
			// Does not exist (yet): the rest is taken lexically.
			missing = true
			cur = next
			continue
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		links++
		if links > maxSymlinks {
			return next, false
		}
		target, err := os.Readlink(next)
		if err != nil {
			cur = next
			continue
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		rest = append(strings.Split(strings.Trim(target, "/"), "/"), rest...)
	}
	return cur, true
}

// Resolve turns a path as the model or a command wrote it (absolute, "~", or relative
// to cwd) into the absolute path it lands on.
func (p *Policy) Resolve(path, cwd string) string {
	path = expandHome(path, p.home)
	if !filepath.IsAbs(path) {
		if cwd == "" {
			cwd = p.root
		}
		path = cwd + "/" + path
	}
	out, _ := resolvePath(path, p.root)
	return out
}
