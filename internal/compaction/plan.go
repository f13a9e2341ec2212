package compaction

import (
	"context"
	"log/slog"
	"unicode/utf8"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// Stage names as reported in context_compacted events.
const (
	StageOffload   = "offload_tool_results"
	StageClear     = "clear_tool_results"
	StageSummarize = "summarize_history"
)

// planner runs the stages of one compaction pass. Stages only add decisions to the
// state; the view is rendered from the state afterwards.
type planner struct {
	cfg   Config
	st    *State
	r     *renderer
	body  []transcript.Entry
	raw   []int
	fixed int // raw tokens outside the body that scale with calibration (system prompt)
	tools int // tool schema tokens (not calibrated)

	target     int // calibrated tokens to get under (0 with force: every stage runs)
	keepRecent int
	anchor     bool // anchor the tail on the latest user message when affordable
	aggressive bool // overflow: oversized results lose their immunity
	force      bool

	store      ResultStore
	scope      string
	summarizer Summarizer
	log        *slog.Logger

	crossing []int // crossing[k] = calls before k whose results are at or after k
	tail     int   // first index of the protected tail

	info event.Compaction
}

// total is the calibrated size of the view as the state now renders it.
func (p *planner) total() int {
	return p.st.scaled(p.fixed+p.r.viewRaw(p.body, p.raw, p.st)) + p.tools
}

func (p *planner) under() bool { return !p.force && p.total() <= p.target }

// run executes the stages cheapest first until the view is under the target. It
// reports whether any new decision was made.
func (p *planner) run(ctx context.Context) bool {
	p.crossing = crossings(p.body)
	p.tail = p.tailStart()
	changed := false
	for _, s := range []struct {
		name string
		off  bool
		fn   func(context.Context) int
	}{
		{StageOffload, p.cfg.Offload.Disabled, p.offload},
		{StageClear, p.cfg.Clear.Disabled, p.clearResults},
		{StageSummarize, p.cfg.Summary.Disabled || p.summarizer == nil, p.summarize},
	} {
		if s.off || p.under() {
			continue
		}
		if n := s.fn(ctx); n > 0 {
			changed = true
			p.info.Stages = append(p.info.Stages, s.name)
		}
	}
	return changed
}

// crossings marks, for every cut point k, how many call/result pairs the cut would
// split (call before k, result at or after k). A cut is pair-safe where it is zero.
func crossings(body []transcript.Entry) []int {
	diff := make([]int, len(body)+2)
	calls := make(map[string]int, len(body)/2)
	for i := range body {
		e := &body[i]
		switch e.Type {
		case transcript.TypeToolCall:
			calls[e.CallID] = i
		case transcript.TypeToolResult:
			if c, ok := calls[e.CallID]; ok && c < i {
				diff[c+1]++
				diff[i+1]--
			}
		}
	}
	out := make([]int, len(body)+1)
	run := 0
	for k := 0; k <= len(body); k++ {
		run += diff[k]
		out[k] = run
	}
	return out
}

func isAssistant(t transcript.Type) bool {
	return t == transcript.TypeAssistantText || t == transcript.TypeReasoning || t == transcript.TypeToolCall
}

// safeCut reports whether the body may be split before index k: no call/result pair
// crosses it and it does not split one assistant message (reasoning, text and calls
// the provider sends as one message, e.g. a thinking block and its tool use).
func (p *planner) safeCut(k int) bool {
	if k <= 0 || k >= len(p.body) {
		return true
	}
	if p.crossing[k] != 0 {
		return false
	}
	return !(isAssistant(p.body[k].Type) && isAssistant(p.body[k-1].Type))
}

// tailStart computes the protected tail: about keepRecent tokens of the newest
// entries, stretched back to the latest user message when that costs at most twice
// the budget, and moved back to a safe cut so the tail never holds half a pair.
func (p *planner) tailStart() int {
	keep := int(float64(p.keepRecent) / p.st.ratio()) // in raw estimate units
	n := len(p.body)
	acc, i := 0, n
	for i > p.st.covered() {
		t := p.r.entryTokens(p.body, p.raw, i-1, p.st)
		if acc+t > keep {
			break
		}
		acc += t
		i--
	}
	if p.anchor {
		for u := i - 1; u >= p.st.covered(); u-- {
			acc += p.r.entryTokens(p.body, p.raw, u, p.st)
			if acc > 2*keep {
				break
			}
			if p.body[u].IsUser() {
				i = u
				break
			}
		}
	}
	for i > 0 && !p.safeCut(i) {
		i--
	}
	return i
}

// keepCutoff returns the index from which the body holds its last n tool results.
func keepCutoff(body []transcript.Entry, n int) int {
	if n <= 0 {
		return len(body)
	}
	for i := len(body) - 1; i >= 0; i-- {
		if body[i].Type == transcript.TypeToolResult {
			n--
			if n == 0 {
				return i
			}
		}
	}
	return 0
}

// immune reports whether body[i] is protected from the result stages: inside the tail
// or among the last keep results, unless the pass is aggressive and the result alone
// is bigger than the target (one giant output would make overflow recovery impossible).
func (p *planner) immune(i, keepFrom int) bool {
	if i < p.tail && i < keepFrom {
		return false
	}
	return !(p.aggressive && p.st.scaled(p.raw[i]) > p.target)
}

// offload replaces every huge result outside the protected region by a preview marker
// and archives its full output. All eligible results go in one burst: a burst costs
// the cache everything after the first changed entry, so fewer, larger bursts keep
// more of the prompt prefix warm.
func (p *planner) offload(ctx context.Context) int {
	keepFrom := keepCutoff(p.body, keepLast(p.cfg.Offload.KeepLast))
	n := 0
	for i := p.st.covered(); i < len(p.body); i++ {
		e := &p.body[i]
		if e.Type != transcript.TypeToolResult || p.st.IsOffloaded(e.CallID) || p.st.Cleared[e.CallID] {
			continue
		}
		// Cheap checks first; characters are counted only when the byte length
		// leaves it open (a rune is at most 4 bytes).
		if len(e.Text) < p.cfg.Offload.MinChars || p.immune(i, keepFrom) {
			continue
		}
		if len(e.Text) < 4*p.cfg.Offload.MinChars && utf8.RuneCountInString(e.Text) < p.cfg.Offload.MinChars {
			continue
		}
		ref := ""
		if p.store != nil {
			var err error
			if ref, err = p.store.Put(ctx, p.scope, e.CallID, e.Text); err != nil {
				// The transcript keeps the full output, so recall still works; only
				// the on-disk copy is missing.
				p.log.Warn("compaction: archiving a tool result failed", "call_id", e.CallID, "err", err)
				ref = ""
			}
		}
		p.st.offload(e.CallID, ref)
		n++
	}
	p.info.Offloaded += n
	return n
}

// clearResults replaces every older result outside the protected region by a short
// marker (all at once, for the same cache reason as offload).
func (p *planner) clearResults(context.Context) int {
	keepFrom := keepCutoff(p.body, keepLast(p.cfg.Clear.KeepLast))
	n := 0
	for i := p.st.covered(); i < len(p.body); i++ {
		e := &p.body[i]
		if e.Type != transcript.TypeToolResult || p.st.Cleared[e.CallID] || p.immune(i, keepFrom) {
			continue
		}
		p.st.clear(e.CallID)
		n++
	}
	p.info.Cleared += n
	return n
}

// summarize folds the entries between the current summary and the protected tail into
// the running summary. It is skipped when it would save less than MinSaving of the
// view, and after MaxFailures consecutive failures in the run.
func (p *planner) summarize(ctx context.Context) int {
	if p.st.SummaryFailures >= p.cfg.Summary.MaxFailures {
		return 0
	}
	from := p.st.covered()
	k := p.tail
	for k > from && !p.safeCut(k) {
		k--
	}
	if k <= from {
		return 0
	}
	var old, covered int
	if p.st.Summary != nil {
		old = p.r.summary(p.st.Summary).tokens
	}
	for i := from; i < k; i++ {
		covered += p.r.entryTokens(p.body, p.raw, i, p.st)
	}
	saving := old + covered - p.cfg.Summary.MaxTokens
	viewRaw := p.fixed + p.r.viewRaw(p.body, p.raw, p.st)
	if float64(saving) < p.cfg.Summary.MinSaving*float64(viewRaw) {
		return 0
	}
	prev := ""
	if p.st.Summary != nil {
		prev = p.st.Summary.Text
	}
	// The summarizer sees the entries as the view shows them (offloaded results as
	// previews), which bounds its input like the view's.
	entries := make([]transcript.Entry, 0, k-from)
	for i := from; i < k; i++ {
		if m := p.r.markerFor(&p.body[i], p.st); m != nil {
			entries = append(entries, m.entry)
		} else {
			entries = append(entries, p.body[i])
		}
	}
	text, err := p.summarizer.Summarize(ctx, SummaryRequest{Previous: prev, Entries: entries, MaxTokens: p.cfg.Summary.MaxTokens})
	if err == nil && text == "" {
		err = errEmptySummary
	}
	if err != nil && ctx.Err() != nil {
		return 0 // the run is being cancelled: not the summarizer's failure
	}
	if err != nil {
		p.st.SummaryFailures++
		p.log.Warn("compaction: summary failed", "err", err, "failures", p.st.SummaryFailures)
		return 0
	}
	p.st.SummaryFailures = 0
	p.st.Summary = &Summary{Text: text, Covered: k, Fingerprint: Fingerprint(p.body[:k])}
	p.info.Summarized += k - from
	return k - from
}
