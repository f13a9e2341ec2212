package cmd

import (
	"fmt"
	"io"

	"github.com/lovia-dev/lovia/internal/textutil"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// placeholderEntries returns entries with each attachment's bytes replaced by its
// size and SHA-256: `sessions show --json` describes images, it does not dump them
// (export keeps them).
func placeholderEntries(entries []transcript.Entry) []transcript.Entry {
	return transcript.DetachData(entries, nil)
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
