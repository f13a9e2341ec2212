package termmd

import (
	"html"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

// RenderContext holds the current rendering options and state.
type RenderContext struct {
	options Options

	blockStack *BlockStack
	table      *TableElement

	// chroma is the code blocks' chroma style, built on the first code block.
	chroma func() *chroma.Style
}

// NewRenderContext returns a new RenderContext.
func NewRenderContext(options Options) RenderContext {
	return RenderContext{
		options:    options,
		blockStack: &BlockStack{},
		table:      &TableElement{},
		chroma:     sync.OnceValue(func() *chroma.Style { return chromaStyleOf(options.Styles.CodeBlock) }),
	}
}

// SanitizeHTML strips HTML content to its text (glamour: bluemonday's strict
// policy; here stripHTML).
func (ctx RenderContext) SanitizeHTML(s string, trimSpaces bool) string {
	s = stripHTML(s)
	if trimSpaces {
		s = strings.TrimSpace(s)
	}

	return html.UnescapeString(s)
}
