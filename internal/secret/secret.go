// Package secret scrubs the values of secrets lovia holds (provider keys, tokens the
// configuration names) out of text that reaches the model, the transcript, the
// database or the logs. It is defence in depth: the environment allow-lists keep
// secrets away from commands, MCP servers and hooks in the first place.
package secret

import (
	"sort"
	"strings"
)

// Redacted replaces every occurrence of a secret value.
const Redacted = "[redacted]"

// MinLen is the shortest value scrubbed: shorter ones ("1", "true", a port) would
// mangle ordinary text and are no credential anyway.
const MinLen = 8

// Scrubber replaces known secret values. The zero value and nil scrub nothing.
type Scrubber struct {
	r *strings.Replacer
	n int
}

// NewScrubber returns a scrubber of values (short and duplicate values are ignored).
func NewScrubber(values ...string) *Scrubber {
	seen := map[string]bool{}
	var vs []string
	for _, v := range values {
		v = strings.TrimSpace(v)
		if len(v) < MinLen || seen[v] {
			continue
		}
		seen[v] = true
		vs = append(vs, v)
	}
	if len(vs) == 0 {
		return &Scrubber{}
	}
	// Longest first, so a secret containing another is replaced whole.
	sort.Slice(vs, func(i, j int) bool { return len(vs[i]) > len(vs[j]) })
	pairs := make([]string, 0, 2*len(vs))
	for _, v := range vs {
		pairs = append(pairs, v, Redacted)
	}
	return &Scrubber{r: strings.NewReplacer(pairs...), n: len(vs)}
}

// Len is the number of values scrubbed.
func (s *Scrubber) Len() int {
	if s == nil {
		return 0
	}
	return s.n
}

// Scrub returns text with every secret value replaced by Redacted.
func (s *Scrubber) Scrub(text string) string {
	if s == nil || s.r == nil || text == "" {
		return text
	}
	return s.r.Replace(text)
}

// SecretName reports whether an environment variable's name says it holds a
// credential: *_API_KEY, *_TOKEN, *_SECRET, *PASSWORD and the like.
func SecretName(name string) bool {
	n := strings.ToUpper(name)
	for _, s := range []string{"_FILE", "_PATH", "_DIR"} {
		if strings.HasSuffix(n, s) {
			return false // where a credential lives, not the credential
		}
	}
	for _, s := range []string{"API_KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE_KEY", "ACCESS_KEY", "AUTHORIZATION"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return strings.HasSuffix(n, "_KEY")
}

// FromEnviron returns the values of the variables of environ ("NAME=value") whose
// names look secret (SecretName) or are listed in names.
func FromEnviron(environ []string, names []string) []string {
	named := map[string]bool{}
	for _, n := range names {
		named[n] = true
	}
	var out []string
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || v == "" {
			continue
		}
		if named[k] || SecretName(k) {
			out = append(out, v)
		}
	}
	return out
}
