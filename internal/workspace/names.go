package workspace

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// ShowName is how a file name appears in list_files and grep_files output. A name
// with control characters, bidirectional overrides or bytes that are not UTF-8 is
// shown as a Go-quoted string ("bad\x1bname"), so it cannot act on a terminal or
// hide text, and passing that quoted form back to a file tool opens the file (see
// unquoteName). A name that itself starts with a quote is quoted too, so the two
// cannot be confused.
func ShowName(name string) string {
	if needsQuote(name) {
		return strconv.Quote(name)
	}
	return name
}

func needsQuote(s string) bool {
	if !utf8.ValidString(s) || strings.HasPrefix(s, `"`) {
		return true
	}
	for _, r := range s {
		switch {
		case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
			return true
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return true
		}
	}
	return false
}

// unquoteName turns a quoted name as ShowName printed it back into the bytes of the
// name; any other path is returned as it is.
func unquoteName(p string) string {
	if len(p) < 2 || p[0] != '"' || p[len(p)-1] != '"' {
		return p
	}
	if s, err := strconv.Unquote(p); err == nil {
		return s
	}
	return p
}

// showRel is ShowName for a root-relative path: the whole path is quoted when any
// part of it needs it, so the quoted form can be passed back as it is.
func showRel(rel string) string {
	if !needsQuote(rel) {
		return rel
	}
	return strconv.Quote(rel)
}
