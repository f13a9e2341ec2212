// Package lexers is chroma's lexer registry (github.com/alecthomas/chroma/v2/lexers)
// built on first use instead of at program start.
//
// Upstream builds its registry in a package variable's initialiser, parsing the
// <config> of all 240 embedded XML lexers: ~6 ms of CPU and 2.3 MB of heap in every
// process that links it, including lovia's runs and sandbox helper, which never
// highlight code. This package holds the same lexers and behaves the same, but
// parses nothing until Get, Analyse, Match, MatchMimeType or Names is first called.
//
// Copied from chroma v2.14.0 (MIT, see LICENSE.chroma):
//
//   - embedded/*.xml verbatim; `go generate` refreshes them from the chroma version
//     in go.mod and TestEmbeddedMatchesModule fails when they differ.
//   - lexers.go and the Go-coded lexers (caddyfile.go … zed.go). Their composite
//     literals got field names (go vet); each `var X = Register(...)` became a
//     function registerX(reg, ...) that newRegistry calls in upstream's order; the
//     init functions of dns.go, mysql.go and zed.go became set…Analyser(reg) with
//     their regular expressions compiled there; the HTML variable became newHTML;
//     Fallback is a function; Register and GlobalLexerRegistry are not exported, so
//     the registry cannot change after it is built.
//
// The tests compare this registry with upstream's (imported by tests only): the
// lexer for every name and alias, the registration order, token streams of a corpus
// in common languages, Analyse and Fallback. Upgrading chroma: `go generate` for
// the XML, the Go-coded lexers by hand (the comparison tests fail until they match).
// Once chroma builds its registry on first use, import its lexers package instead
// and delete this one.
package lexers

//go:generate go run ./internal/sync
