package provider

import (
	"context"
	"strings"

	"github.com/lovia-dev/lovia/internal/transcript"
)

// ReplyText drains p.Stream for a tool-less request (a summary, a verdict, proposals)
// and returns the reply's text: the final assistant entries, or the streamed text
// when the adapter gave no entry; a discard (a retried attempt) starts over.
func ReplyText(ctx context.Context, p Provider, req Request) (string, error) {
	var final, streamed strings.Builder
	for d, err := range p.Stream(ctx, req) {
		if err != nil {
			return "", err
		}
		switch d.Kind {
		case DeltaDiscard:
			final.Reset()
			streamed.Reset()
		case DeltaText:
			streamed.WriteString(d.Text)
		case DeltaEntry:
			if d.Entry != nil && d.Entry.Type == transcript.TypeAssistantText {
				final.WriteString(d.Entry.Text)
			}
		}
	}
	if strings.TrimSpace(final.String()) != "" {
		return final.String(), nil
	}
	return streamed.String(), nil
}
