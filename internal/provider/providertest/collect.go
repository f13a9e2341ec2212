package providertest

import (
	"context"
	"strings"

	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

// Reply is everything one Stream call produced, gathered for assertions.
type Reply struct {
	Text      string   // concatenated text deltas (since the last discard)
	Reasoning string   // concatenated reasoning deltas (since the last discard)
	Announced []string // "CallID:Name" of each DeltaToolCall
	Entries   []transcript.Entry
	Usage     *usage.Usage
	Finish    string
	Discards  []string // reasons of DeltaDiscard deltas
	Deltas    int      // number of deltas received
	Err       error
}

// Collect drains p.Stream(ctx, req), applying discards as a consumer must.
func Collect(ctx context.Context, p provider.Provider, req provider.Request) Reply {
	var r Reply
	var text, reasoning strings.Builder
	for d, err := range p.Stream(ctx, req) {
		if err != nil {
			r.Err = err
			break
		}
		r.Deltas++
		switch d.Kind {
		case provider.DeltaText:
			text.WriteString(d.Text)
		case provider.DeltaReasoning:
			reasoning.WriteString(d.Text)
		case provider.DeltaToolCall:
			r.Announced = append(r.Announced, d.CallID+":"+d.Name)
		case provider.DeltaEntry:
			if d.Entry != nil {
				r.Entries = append(r.Entries, *d.Entry)
			}
		case provider.DeltaUsage:
			r.Usage = d.Usage
		case provider.DeltaFinish:
			r.Finish = d.FinishReason
		case provider.DeltaDiscard:
			r.Discards = append(r.Discards, d.Text)
			text.Reset()
			reasoning.Reset()
			r.Announced, r.Entries, r.Usage, r.Finish = nil, nil, nil, ""
		}
	}
	r.Text, r.Reasoning = text.String(), reasoning.String()
	return r
}
