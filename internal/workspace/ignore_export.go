package workspace

// Ignores is the .gitignore chain in force at one directory, for walkers outside this
// package (rewind snapshots) that must skip what the file tools skip. The zero value
// ignores nothing.
type Ignores struct{ c ignoreChain }

// RootIgnores is the chain at root: .git/info/exclude, then root's .gitignore. Ignore
// files are read without following links.
func RootIgnores(root string) Ignores { return Ignores{rootIgnores(root)} }

// With returns the chain extended by the .gitignore in absDir (root-relative relDir,
// slash-separated), if there is one.
func (i Ignores) With(absDir, relDir string) Ignores { return Ignores{i.c.with(absDir, relDir)} }

// Ignored reports whether rel (root-relative, slash-separated) is ignored.
func (i Ignores) Ignored(rel string, isDir bool) bool { return i.c.ignored(rel, isDir) }
