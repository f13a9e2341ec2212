package compaction

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// Summarizer folds newly covered entries into the running summary.
type Summarizer interface {
	Summarize(ctx context.Context, req SummaryRequest) (string, error)
}

// SummaryRequest is one incremental summary step.
type SummaryRequest struct {
	// Previous is the running summary so far ("" the first time).
	Previous string
	// Entries are the newly covered entries as the view showed them (offloaded and
	// cleared results as their markers).
	Entries []transcript.Entry
	// MaxTokens caps the new summary.
	MaxTokens int
}

// SummarizerFunc adapts a function to Summarizer.
type SummarizerFunc func(ctx context.Context, req SummaryRequest) (string, error)

func (f SummarizerFunc) Summarize(ctx context.Context, req SummaryRequest) (string, error) {
	return f(ctx, req)
}

var errEmptySummary = errors.New("the summarizer returned an empty summary")

// SummarySections are the headings every summary keeps, so an incremental update
// merges into a known structure instead of drifting into prose.
var SummarySections = []string{
	"## Goal",
	"## Constraints and preferences",
	"## Progress",
	"## Key decisions",
	"## Files and code",
	"## Errors and fixes",
	"## Open questions and next steps",
}

const summarySystemPrompt = `You maintain the running summary of a long conversation between a user and a coding agent, so the agent can continue the work after older messages are removed from its context.

Write the updated summary in Markdown with exactly these sections, in this order (write "None." under a section with nothing to say):
%s

Rules:
- Merge the previous summary with the new messages; keep every fact that is still relevant, drop what was superseded.
- Be specific: exact file paths, function names, commands, error messages, numbers, user requirements, decisions and their reasons.
- Tool results may appear as markers (cleared or offloaded); mention their call_id when the content might be needed again.
- Do not address the user, do not add a preamble, output only the summary.
- Stay under %d tokens.`

// LLMSummarizer asks a model for the summary.
type LLMSummarizer struct {
	Provider provider.Provider
	// Resolve, when Provider is nil, builds the provider for Model on first use
	// (runtime.Options.Resolve fits), so a front end can wire the summarizer before
	// any model is called; a failed resolution is retried on the next summary.
	Resolve func(ctx context.Context, model string) (provider.Provider, error)
	// Model is passed in the request (providers built for one model ignore it).
	Model string
	// MaxInputChars bounds the transcript text sent (default 400000, and never more
	// than the summarizing model's window allows); the oldest entries of an
	// oversized batch are shortened first.
	MaxInputChars int
	// MaxEntryChars bounds one entry's text in the transcript sent (default 4000).
	MaxEntryChars int

	mu sync.Mutex
}

// NewLLMSummarizer returns a summarizer calling p.
func NewLLMSummarizer(p provider.Provider, model string) *LLMSummarizer {
	return &LLMSummarizer{Provider: p, Model: model}
}

// provider returns the provider, resolving it on first use.
func (s *LLMSummarizer) provider(ctx context.Context) (provider.Provider, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Provider != nil {
		return s.Provider, nil
	}
	if s.Resolve == nil {
		return nil, errors.New("summarizer: no provider configured")
	}
	p, err := s.Resolve(ctx, s.Model)
	if err != nil {
		return nil, fmt.Errorf("summarizer: resolve %s: %w", s.Model, err)
	}
	s.Provider = p
	return p, nil
}

// Summarize implements Summarizer.
func (s *LLMSummarizer) Summarize(ctx context.Context, req SummaryRequest) (string, error) {
	prov, err := s.provider(ctx)
	if err != nil {
		return "", err
	}
	maxTok := req.MaxTokens
	if maxTok <= 0 {
		maxTok = DefaultSummaryMaxTokens
	}
	sys := fmt.Sprintf(summarySystemPrompt, strings.Join(SummarySections, "\n"), maxTok)
	var b strings.Builder
	if req.Previous != "" {
		b.WriteString("<previous_summary>\n")
		b.WriteString(req.Previous)
		b.WriteString("\n</previous_summary>\n\n")
	}
	b.WriteString("<new_messages>\n")
	maxIn := s.maxInput()
	if w := prov.Info().ContextWindow; w > 0 {
		// Leave room for the reply and the prompt; 3 characters per token is a
		// conservative rate for code and logs.
		maxIn = min(maxIn, max(4000, (w-maxTok*5/4-len(sys)/3-len(req.Previous)/3-1000)*3))
	}
	b.WriteString(FormatEntries(req.Entries, s.maxEntry(), maxIn))
	b.WriteString("</new_messages>\n\nWrite the updated summary now.")
	preq := provider.Request{
		Model:           s.Model,
		System:          sys,
		Entries:         []transcript.Entry{transcript.UserInput(b.String())},
		MaxOutputTokens: maxTok + maxTok/4,
		ToolChoice:      "none",
	}
	out, err := provider.ReplyText(ctx, prov, preq)
	if err != nil {
		return "", fmt.Errorf("summarizer: %w", err)
	}
	out = strings.TrimSpace(out)
	if out == "" {
		return "", errEmptySummary
	}
	return out, nil
}

func (s *LLMSummarizer) maxEntry() int {
	if s.MaxEntryChars > 0 {
		return s.MaxEntryChars
	}
	return 4000
}

func (s *LLMSummarizer) maxInput() int {
	if s.MaxInputChars > 0 {
		return s.MaxInputChars
	}
	return 400000
}

// FormatEntries renders entries as plain text for a summarizer: one block per entry,
// each entry's text capped at maxEntry characters (head and tail kept) and the whole at
// maxTotal, dropping the middle of the oldest entries first.
func FormatEntries(entries []transcript.Entry, maxEntry, maxTotal int) string {
	blocks := make([]string, 0, len(entries))
	total := 0
	for _, e := range entries {
		if e.Type == transcript.TypeReasoning && e.Text == "" {
			continue // opaque (encrypted) reasoning says nothing to a summarizer
		}
		var head string
		body := e.Text
		switch e.Type {
		case transcript.TypeInput:
			head = "USER"
			if e.IsSystem() {
				head = "SYSTEM"
			}
		case transcript.TypeAssistantText:
			head = "ASSISTANT"
		case transcript.TypeReasoning:
			head = "ASSISTANT (thinking)"
		case transcript.TypeToolCall:
			head = fmt.Sprintf("TOOL CALL %s [call_id %s]", e.Name, e.CallID)
			body = string(e.Args)
		case transcript.TypeToolResult:
			head = fmt.Sprintf("TOOL RESULT %s [call_id %s]", e.Name, e.CallID)
			if e.IsError {
				head += " (error)"
			}
		default:
			head = strings.ToUpper(string(e.Type))
		}
		for _, a := range e.Attachments {
			body += fmt.Sprintf("\n[attachment %s %s]", a.MIME, a.Name)
		}
		b := head + ":\n" + clip(body, maxEntry) + "\n\n"
		blocks = append(blocks, b)
		total += len(b)
	}
	// Over the total: shrink the oldest blocks to a short clip first; the newest
	// entries matter most for "where are we now".
	for i := 0; i < len(blocks) && total > maxTotal; i++ {
		short := clip(blocks[i], 200) + "\n\n"
		total -= len(blocks[i]) - len(short)
		blocks[i] = short
	}
	// Still over: drop the oldest blocks altogether, saying so.
	drop := 0
	for drop < len(blocks)-1 && total > maxTotal {
		total -= len(blocks[drop])
		drop++
	}
	if drop > 0 {
		return fmt.Sprintf("[%d older entries omitted]\n\n", drop) + strings.Join(blocks[drop:], "")
	}
	return strings.Join(blocks, "")
}

// clip keeps the head and tail of s within max characters.
func clip(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	head := max * 2 / 3
	tail := max - head
	return string(r[:head]) + fmt.Sprintf("\n[... %d characters omitted ...]\n", len(r)-head-tail) + string(r[len(r)-tail:])
}
