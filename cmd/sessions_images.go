package cmd

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/lovia-dev/lovia/internal/textutil"
	"io"

	"github.com/lovia-dev/lovia/internal/transcript"
)

// placeholderEntries returns entries with each attachment's bytes replaced by its
// size and SHA-256: `sessions show --json` describes images, it does not dump them
// (export keeps them).
func placeholderEntries(entries []transcript.Entry) []transcript.Entry {
	var out []transcript.Entry
	for i := range entries {
		if len(entries[i].Attachments) == 0 {
			continue
		}
		if out == nil {
			out = append([]transcript.Entry(nil), entries...)
		}
		atts := make([]transcript.Attachment, len(entries[i].Attachments))
		copy(atts, entries[i].Attachments)
		for j := range atts {
			if a := &atts[j]; len(a.Data) > 0 {
				sum := sha256.Sum256(a.Data)
				a.SHA256, a.Size, a.Data = hex.EncodeToString(sum[:]), len(a.Data), nil
			}
		}
		out[i].Attachments = atts
	}
	if out == nil {
		return entries
	}
	return out
}

// writeAttachments prints one placeholder line per attachment of a user message.
func writeAttachments(w io.Writer, e transcript.Entry) {
	n := 0
	for _, a := range e.Attachments {
		size := len(a.Data)
		if size == 0 {
			size = a.Size
		}
		what := "attachment"
		if len(a.MIME) > 6 && a.MIME[:6] == "image/" {
			n++
			what = fmt.Sprintf("image %d", n)
		}
		line := fmt.Sprintf("> [%s: %s, %s", what, a.MIME, textutil.Bytes(int64(size)))
		if a.Name != "" {
			line += ", " + a.Name
		}
		fmt.Fprintln(w, line+"]")
	}
}
