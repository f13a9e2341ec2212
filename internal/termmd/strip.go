package termmd

import (
	"io"
	"strconv"
	"strings"

	"golang.org/x/net/html"
)

// skipContent reports the elements whose text bluemonday's policies drop with the tags.
func skipContent(name string) bool {
	switch name {
	case "frame", "frameset", "iframe", "noembed", "noframes", "noscript", "nostyle", "object", "script", "style", "title":
		return true
	}
	return false
}

// stripHTML is what glamour gets from bluemonday.StrictPolicy().Sanitize: every
// tag, comment and doctype removed, the text kept (HTML-escaped), the text of
// script, style and the skipContent elements dropped. It follows bluemonday's
// sanitize loop for a policy that allows no element (TestStripHTMLMatchesBluemonday
// compares them), without linking bluemonday, whose CSS handler tables and their
// regular expressions were built at every lovia start-up.
func stripHTML(s string) string {
	if strings.TrimSpace(s) == "" {
		return s
	}
	var (
		b             strings.Builder
		skip          bool
		skipping      int
		mostRecentTag string
	)
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		if z.Next() == html.ErrorToken {
			if z.Err() == io.EOF {
				return b.String()
			}
			return ""
		}
		tok := z.Token()
		switch tok.Type {
		case html.StartTagToken:
			mostRecentTag = normaliseElementName(tok.Data)
			if mostRecentTag == "script" || mostRecentTag == "style" {
				continue
			}
			if skipContent(tok.Data) {
				skip = true
				skipping++
			}
		case html.EndTagToken:
			name := normaliseElementName(tok.Data)
			if mostRecentTag == name {
				mostRecentTag = ""
			}
			if name == "script" || name == "style" {
				continue
			}
			if skipContent(tok.Data) {
				skipping--
				if skipping == 0 {
					skip = false
				}
			}
		case html.TextToken:
			if !skip && mostRecentTag != "script" && mostRecentTag != "style" {
				b.WriteString(tok.String())
			}
		}
	}
}

// normaliseElementName is bluemonday's: lower case, non-ASCII runes quoted.
func normaliseElementName(s string) string {
	return strings.TrimSuffix(strings.TrimPrefix(strings.ToLower(strconv.QuoteToASCII(s)), `"`), `"`)
}
