package lexers

import (
	"github.com/alecthomas/chroma/v2"
)

// newHTML returns the HTML lexer that the Go-coded lexers of HTML with embedded
// code delegate to (upstream: the package variable HTML; not registered itself).
func newHTML() *chroma.RegexLexer {
	return chroma.MustNewXMLLexer(embedded, "embedded/html.xml")
}
