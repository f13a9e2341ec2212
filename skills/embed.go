// Package skills holds lovia's bundled agent skills: one folder per skill, each with a
// SKILL.md (YAML frontmatter name + description, then instructions) and optional
// supporting files. They are embedded in the binary; internal/plugin/skills loads them.
package skills

import "embed"

// FS holds the bundled skill folders at its root (FS/<name>/SKILL.md).
// Every skill folder must be listed here; TestEveryFolderEmbedded checks it.
//
//go:embed git-commit code-review go-testing
var FS embed.FS
