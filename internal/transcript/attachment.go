package transcript

import (
	"crypto/sha256"
	"encoding/hex"
)

// DetachData returns entries with each attachment's bytes replaced by their
// SHA-256 and size, calling detached (when not nil) with each attachment before
// its bytes go. The entries given are not changed: entries with attachments are
// copied, the others shared; with nothing to detach, entries itself is returned.
// Stores keep the bytes apart once per content; views show a placeholder.
func DetachData(entries []Entry, detached func(Attachment)) []Entry {
	var out []Entry
	for i := range entries {
		if !hasData(entries[i].Attachments) {
			continue
		}
		if out == nil {
			out = append([]Entry(nil), entries...)
		}
		atts := append([]Attachment(nil), entries[i].Attachments...)
		for j := range atts {
			a := &atts[j]
			if len(a.Data) == 0 {
				continue
			}
			sum := sha256.Sum256(a.Data)
			a.SHA256, a.Size = hex.EncodeToString(sum[:]), len(a.Data)
			if detached != nil {
				detached(*a)
			}
			a.Data = nil
		}
		out[i].Attachments = atts
	}
	if out == nil {
		return entries
	}
	return out
}

func hasData(atts []Attachment) bool {
	for _, a := range atts {
		if len(a.Data) > 0 {
			return true
		}
	}
	return false
}
