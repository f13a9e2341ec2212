// Package termmd renders markdown as styled terminal text.
//
// It is glamour v2.0.1's renderer (charm.land/glamour/v2: its ansi package, the
// ascii, dark and light styles and the parser setup of NewTermRenderer; MIT, see
// LICENSE.glamour) copied here with these changes:
//
//   - A style's Format is filled by substituting {{.text}} (formatToken) instead of
//     executing it as a text/template. Executing any template makes the Go linker
//     keep every exported method of every type that may reach an interface
//     (golang/go#62024): with glamour linked, lovia's executable was 93 MB; without
//     the template, 55 MB, and a 100-turn run's peak RSS 15 MB lower.
//   - Code blocks build their chroma style from the rules once per renderer instead
//     of registering it in chroma's global style registry, and the chroma styles
//     package (which parses every bundled style at start-up) is not imported.
//   - HTML is stripped to its text by stripHTML, which follows bluemonday's strict
//     policy (FuzzStripHTML compares them) without linking bluemonday, whose CSS
//     tables and regular expressions were built at every start-up.
//   - Emoji shortcodes are not rendered (lovia never enabled glamour's emoji
//     extension) and unknown nodes render as nothing rather than printing a warning
//     to standard output.
//   - The styles are built by functions instead of shared package variables.
//
// TestMatchesGlamour renders a corpus with both and requires identical output, so
// the copy can be compared with, and replaced by, a glamour release that no longer
// executes templates.
package termmd

import (
	"bytes"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// Markdown renders markdown documents with one set of options.
type Markdown struct {
	md goldmark.Markdown
}

// New returns a renderer set up as glamour's NewTermRenderer sets up its own: GitHub
// flavoured markdown, definition lists and heading IDs.
func New(opts Options) *Markdown {
	md := goldmark.New(
		goldmark.WithExtensions(extension.GFM, extension.DefinitionList),
		goldmark.WithParserOptions(parser.WithAutoHeadingID()),
	)
	md.SetRenderer(renderer.NewRenderer(
		renderer.WithNodeRenderers(util.Prioritized(NewRenderer(opts), 1000)),
	))
	return &Markdown{md: md}
}

// Render returns src rendered.
func (m *Markdown) Render(src string) (string, error) {
	var buf bytes.Buffer
	err := m.md.Convert([]byte(src), &buf)
	return buf.String(), err
}
