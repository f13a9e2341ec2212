package workspace

import (
	"os"

	"github.com/lovia-dev/lovia/internal/gitignore"
)

// ignoreChain is the .gitignore files from the root down to a directory (the
// matcher is shared with the TUI's @ completion: internal/gitignore).
type ignoreChain gitignore.Chain

// parseGitignore reads the rules of a .gitignore in base (root-relative).
func parseGitignore(data []byte, base string) *gitignore.Set { return gitignore.Parse(data, base) }

// with returns the chain extended by the .gitignore in dir (if any).
func (c ignoreChain) with(absDir, relDir string) ignoreChain {
	// A regular file of at most 1 MiB, never through a link: a .gitignore that is a
	// FIFO or a link to /dev/zero must not hang or exhaust a listing (it is then not
	// applied).
	data, err := readNoFollow(absDir + "/.gitignore")
	if err != nil {
		return c
	}
	return ignoreChain(gitignore.Chain(c).With(gitignore.Parse(data, relDir)))
}

// ignored reports whether rel (root-relative, slash-separated) is ignored; the last
// matching rule wins, as in git.
func (c ignoreChain) ignored(rel string, isDir bool) bool {
	return gitignore.Chain(c).Ignored(rel, isDir)
}

// maxIgnoreFile caps one .gitignore or info/exclude.
const maxIgnoreFile = 1 << 20

// rootIgnores is the chain at the root: .git/info/exclude, then .gitignore.
func rootIgnores(root string) ignoreChain {
	var c ignoreChain
	if data, err := readNoFollow(root + "/.git/info/exclude"); err == nil {
		c = ignoreChain(gitignore.Chain(c).With(gitignore.Parse(data, "")))
	}
	return c.with(root, "")
}

// readNoFollow reads a small regular file at a symlink-free path without following
// any link (git does not follow a symlinked .gitignore either): a link planted as
// .gitignore must not make lovia read a file outside the root.
func readNoFollow(abs string) ([]byte, error) {
	f, err := openResolved(nil, "", abs, os.O_RDONLY|toolOpenFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, _, _, err := readOpened(f, maxIgnoreFile)
	return data, err
}
