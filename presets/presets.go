// Package presets embeds lovia's bundled agent presets (*.yaml).
package presets

import "embed"

// FS holds the bundled preset files.
//
//go:embed *.yaml
var FS embed.FS
