package lexers

import (
	"embed"
	"io/fs"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

//go:embed embedded
var embedded embed.FS

// registry returns upstream's GlobalLexerRegistry, built on first use instead of
// at program start. Nothing registers into it afterwards (upstream's Register is
// not copied), so after the build it is only read. It is assigned in init, not in
// its declaration, because the lexers' emitters look lexers up through Get, which
// calls registry: Go rejects that as an initialisation cycle.
var registry func() *chroma.LexerRegistry

func init() { registry = sync.OnceValue(newRegistry) }

// newRegistry registers the lexers in the order upstream's package initialisation
// does, so that where two lexers share a name or alias the same one wins and
// Analyse breaks ties the same way: the XML lexers in fs.Glob order, then the
// Go-coded ones in Go's variable initialisation order (file by file, except that
// Go follows Go Text Template, which its rules refer to), then the init functions
// that give three XML lexers an analyser. TestRegistryMatchesUpstream checks it.
func newRegistry() *chroma.LexerRegistry {
	reg := chroma.NewLexerRegistry()
	// index(reg)
	paths, err := fs.Glob(embedded, "embedded/*.xml")
	if err != nil {
		panic(err)
	}
	for _, path := range paths {
		reg.Register(chroma.MustNewXMLLexer(embedded, path))
	}

	html := newHTML()
	registerCaddyfile(reg)
	registerCaddyfileDirectives(reg)
	registerCommonLisp(reg)
	registerEmacsLisp(reg)
	registerGenshiText(reg)
	registerGenshiHTMLTemplate(reg)
	registerGenshi(reg)
	registerGoHTMLTemplate(reg, html)
	registerGo(reg, registerGoTextTemplate(reg))
	registerHaxe(reg)
	registerHTTP(reg)
	registerMarkdown(reg, html)
	registerPHTML(reg, html)
	registerRaku(reg)
	registerRestructuredtext(reg)
	registerSvelte(reg, html)
	registerTyposcript(reg)

	setDNSAnalyser(reg)
	setMySQLAnalyser(reg)
	setZedAnalyser(reg)
	return reg
}

// Names of all lexers, optionally including aliases.
func Names(withAliases bool) []string {
	return registry().Names(withAliases)
}

// Get a Lexer by name, alias or file extension.
//
// Note that this if there isn't an exact match on name or alias, this will
// call Match(), so it is not efficient.
func Get(name string) chroma.Lexer {
	return registry().Get(name)
}

// MatchMimeType attempts to find a lexer for the given MIME type.
func MatchMimeType(mimeType string) chroma.Lexer {
	return registry().MatchMimeType(mimeType)
}

// Match returns the first lexer matching filename.
//
// Note that this iterates over all file patterns in all lexers, so it's not
// particularly efficient.
func Match(filename string) chroma.Lexer {
	return registry().Match(filename)
}

// Analyse text content and return the "best" lexer..
func Analyse(text string) chroma.Lexer {
	return registry().Analyse(text)
}

// PlaintextRules is used for the fallback lexer as well as the explicit
// plaintext lexer.
func PlaintextRules() chroma.Rules {
	return chroma.Rules{
		"root": []chroma.Rule{
			{Pattern: `.+`, Type: chroma.Text, Mutator: nil},
			{Pattern: `\n`, Type: chroma.Text, Mutator: nil},
		},
	}
}

// Fallback returns the lexer to use if no other is found (upstream: the variable
// Fallback).
var Fallback = sync.OnceValue(func() chroma.Lexer {
	return chroma.MustNewLexer(&chroma.Config{
		Name:      "fallback",
		Filenames: []string{"*"},
		Priority:  -1,
	}, PlaintextRules)
})
