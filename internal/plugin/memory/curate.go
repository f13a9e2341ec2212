package memory

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/textutil"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// Curation bounds: what the curation model reads and what it may propose. The model
// is untrusted, so its answer is only ever a list of suggestions a person keeps or not.
const (
	// MaxCurationInput bounds the transcript digest the curation model reads; the
	// tail of a long run is kept (it holds the conclusions).
	MaxCurationInput = 24_000
	// MaxProposals bounds how many facts one run may propose.
	MaxProposals = 5
	// maxProposalChars bounds one proposed fact (longer ones are dropped, not cut:
	// half a fact is a wrong fact).
	maxProposalChars = 500
	// maxDigestPart bounds one entry of the digest, so one huge tool output cannot
	// crowd out the conversation.
	maxDigestPart = 1_000
)

const curateSystem = `You curate a coding agent's long-term memory. Read the transcript of one finished run and propose at most %d durable facts worth remembering in future sessions about this project or the user: conventions, commands that work, decisions, preferences. Not: what was done in this run, secrets, anything temporary or already obvious from the code.
Answer with one fact per line, each starting with "- ", self-contained (it will be read without this conversation). If nothing is worth remembering, answer NONE.`

// CurationDigest renders a run's entries as bounded plain text for the curation
// model: inputs, answers, calls and (clipped) results, scrubbed of secrets.
func CurationDigest(entries []transcript.Entry, scrub func(string) string) string {
	var parts []string
	for _, e := range entries {
		var s string
		switch e.Type {
		case transcript.TypeInput:
			if e.Synthetic {
				continue
			}
			s = "USER: " + e.Text
		case transcript.TypeAssistantText:
			s = "ASSISTANT: " + e.Text
		case transcript.TypeToolCall:
			s = "CALL " + e.Name + " " + string(e.Args)
		case transcript.TypeToolResult:
			s = "RESULT: " + e.Text
		default:
			continue
		}
		if scrub != nil {
			s = scrub(s)
		}
		parts = append(parts, clip(s, maxDigestPart))
	}
	// Keep the tail: walk back until the budget is spent.
	total, start := 0, len(parts)
	for start > 0 {
		n := utf8.RuneCountInString(parts[start-1]) + 1
		if total+n > MaxCurationInput {
			break
		}
		total += n
		start--
	}
	out := strings.Join(parts[start:], "\n")
	if start > 0 {
		out = fmt.Sprintf("(%d earlier entries left out)\n", start) + out
	}
	return out
}

// ParseProposals reads the curation model's answer: "- fact" lines (also "* " and
// "1. "), at most MaxProposals, without duplicates, over-long facts or NONE. scrub
// (may be nil) runs on each fact, so a secret the model repeats is never shown or kept.
func ParseProposals(answer string, scrub func(string) string) []string {
	var out []string
	seen := map[string]bool{}
	for _, line := range strings.Split(answer, "\n") {
		l := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(l, "- "), strings.HasPrefix(l, "* "):
			l = l[2:]
		default:
			i := 0
			for i < len(l) && l[i] >= '0' && l[i] <= '9' {
				i++
			}
			if i == 0 || i+1 >= len(l) || (l[i] != '.' && l[i] != ')') {
				continue
			}
			l = l[i+1:]
		}
		l = textutil.OneLine(strings.TrimSpace(l))
		if scrub != nil {
			l = scrub(l)
		}
		if l == "" || strings.EqualFold(l, "none") || utf8.RuneCountInString(l) > maxProposalChars || seen[l] {
			continue
		}
		seen[l] = true
		out = append(out, l)
		if len(out) == MaxProposals {
			break
		}
	}
	return out
}

// Propose asks the curation model (prov, model name without its provider prefix)
// for facts worth remembering from a finished run. The answer is suggestions only.
func Propose(ctx context.Context, prov provider.Provider, model string, entries []transcript.Entry, scrub func(string) string) ([]string, error) {
	digest := CurationDigest(entries, scrub)
	if strings.TrimSpace(digest) == "" {
		return nil, nil
	}
	req := provider.Request{
		Model:           model,
		System:          fmt.Sprintf(curateSystem, MaxProposals),
		Entries:         []transcript.Entry{transcript.UserInput("<transcript>\n" + digest + "\n</transcript>")},
		MaxOutputTokens: 600,
		ToolChoice:      "none",
	}
	answer, err := provider.ReplyText(ctx, prov, req)
	if err != nil {
		return nil, fmt.Errorf("memory curation: %w", err)
	}
	return ParseProposals(answer, scrub), nil
}

// Keep saves facts a person accepted from a curation proposal into the project's
// archive. gate (may be nil) is the run's memory write gate: a write it refuses is
// not made; one it would ask about is made, since the person's pick was that answer.
func (p *Plugin) Keep(ctx context.Context, facts []string, sessionID, runID string, gate WriteGate) (int, error) {
	if p.cfg.Archive == nil {
		return 0, fmt.Errorf("no memory archive is configured")
	}
	kept := 0
	for _, f := range facts {
		f = strings.TrimSpace(f)
		if f == "" || utf8.RuneCountInString(f) > maxMemoryChars {
			continue
		}
		if gate != nil {
			if _, err := gate(ctx, Write{Scope: ProjectScope, What: "remember (project): " + clip(f, 200)}); err != nil {
				return kept, fmt.Errorf("memory write refused: %w", err)
			}
		}
		if _, err := p.cfg.Archive.Add(ctx, Item{Scope: p.project(), Content: f, Tags: "curated", SessionID: sessionID, RunID: runID}); err != nil {
			return kept, err
		}
		kept++
	}
	return kept, nil
}
