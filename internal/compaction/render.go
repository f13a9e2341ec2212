package compaction

import (
	"fmt"
	"unicode/utf8"

	"github.com/lovia-dev/lovia/internal/transcript"
)

// RenderOptions shape the markers a view shows.
type RenderOptions struct {
	// RecallTool: the agent has recall_tool_result, so markers say how to use it.
	RecallTool bool
	// PreviewChars kept by offload markers (0 = DefaultOffloadPreviewChars).
	PreviewChars int
}

// Render builds a view from the body and the sticky state: the summary (if any)
// replaces the covered prefix, cleared and offloaded results become markers that keep
// their call_id, name and error flag, everything else is the body entry itself. It is
// pure: the same body and state always give the same bytes, which is what keeps the
// provider's prompt cache warm between compaction bursts.
func Render(body []transcript.Entry, st *State, opt RenderOptions) []transcript.Entry {
	r := newRenderer(opt)
	return r.render(body, st, nil)
}

type markerKind uint8

const (
	markOffloaded markerKind = iota + 1
	markCleared
)

type markerKey struct {
	callID string
	kind   markerKind
	size   int // the entry's text length: guards against a call id reused by another entry
}

type marker struct {
	entry  transcript.Entry
	tokens int
}

// renderer caches markers: their text is a deterministic function of the entry and
// the decision, and rebuilding a thousand previews every turn would dominate the cost
// of a render.
type renderer struct {
	opt     RenderOptions
	markers map[markerKey]*marker
	sumKey  string
	sum     marker
}

func newRenderer(opt RenderOptions) *renderer {
	if opt.PreviewChars <= 0 {
		opt.PreviewChars = DefaultOffloadPreviewChars
	}
	return &renderer{opt: opt, markers: map[markerKey]*marker{}}
}

// setOptions resets the cache when the marker wording changes, and reports it.
func (r *renderer) setOptions(opt RenderOptions) bool {
	if opt.PreviewChars <= 0 {
		opt.PreviewChars = DefaultOffloadPreviewChars
	}
	if opt == r.opt {
		return false
	}
	r.opt = opt
	clear(r.markers)
	return true
}

// render appends the view to dst (which may be nil) and returns it.
func (r *renderer) render(body []transcript.Entry, st *State, dst []transcript.Entry) []transcript.Entry {
	dst, _ = r.renderCount(body, nil, st, 0, dst)
	return dst
}

// renderCount appends the view of body[from:] to dst and, when raw (the body's
// estimates) is given, also returns its raw token estimate: one pass for both on the
// hot path. from is 0 for a whole view (summary included) or an index at or past the
// summary's coverage to extend a view rendered earlier.
func (r *renderer) renderCount(body []transcript.Entry, raw []int, st *State, from int, dst []transcript.Entry) ([]transcript.Entry, int) {
	start, n := from, 0
	if from == 0 && st != nil && st.Summary != nil && st.Summary.Covered <= len(body) {
		start = st.Summary.Covered
		m := r.summary(st.Summary)
		dst = append(dst, m.entry)
		n += m.tokens
	}
	for i := start; i < len(body); i++ {
		if m := r.markerFor(&body[i], st); m != nil {
			dst = append(dst, m.entry)
			n += m.tokens
			continue
		}
		dst = append(dst, body[i])
		if raw != nil {
			n += raw[i]
		}
	}
	return dst, n
}

// markerFor returns the marker replacing e in the view, or nil when e renders as is.
func (r *renderer) markerFor(e *transcript.Entry, st *State) *marker {
	if e.Type != transcript.TypeToolResult || st == nil {
		return nil
	}
	var kind markerKind
	switch {
	case st.Cleared[e.CallID]:
		kind = markCleared
	case st.IsOffloaded(e.CallID):
		kind = markOffloaded
	default:
		return nil
	}
	k := markerKey{callID: e.CallID, kind: kind, size: len(e.Text)}
	if m, ok := r.markers[k]; ok {
		return m
	}
	m := &marker{entry: transcript.Entry{Type: transcript.TypeToolResult, RunID: e.RunID, Agent: e.Agent,
		CallID: e.CallID, Name: e.Name, IsError: e.IsError, Synthetic: true}}
	if kind == markCleared {
		m.entry.Text = r.clearedText(e)
	} else {
		m.entry.Text = r.offloadedText(e, st.Offloaded[e.CallID])
	}
	m.tokens = EstimateEntry(m.entry)
	r.markers[k] = m
	return m
}

func (r *renderer) clearedText(e *transcript.Entry) string {
	what := "tool result"
	if e.IsError {
		what = "tool error result"
	}
	s := fmt.Sprintf("[%s cleared from the context to save space (call_id %s, %d characters)", what, e.CallID, utf8.RuneCountInString(e.Text))
	if r.opt.RecallTool {
		return s + "; call " + RecallToolName + " with this call_id to see it again]"
	}
	return s + "]"
}

func (r *renderer) offloadedText(e *transcript.Entry, ref string) string {
	n := utf8.RuneCountInString(e.Text)
	preview := previewOf(e.Text, r.opt.PreviewChars)
	where := ""
	if ref != "" {
		where = "; the full output is saved at " + ref
	}
	how := ""
	if r.opt.RecallTool {
		how = "; call " + RecallToolName + " with this call_id to read it all"
	}
	return fmt.Sprintf("[tool output offloaded to save context: %d characters (call_id %s)%s. First %d characters:]\n%s\n[... %d more characters not shown%s]",
		n, e.CallID, where, utf8.RuneCountInString(preview), preview, n-utf8.RuneCountInString(preview), how)
}

// previewOf returns the first n characters of s, cut on a rune boundary.
func previewOf(s string, n int) string {
	i := 0
	for c := 0; c < n && i < len(s); c++ {
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return s[:i]
}

// summaryWrapper frames the running summary as background, not as a new request.
const summaryWrapper = "<context_summary>\nThe earlier part of this conversation (%s) was summarized to save context. It is background: continue the current task from where the conversation below leaves off.\n\n%s\n</context_summary>"

func (r *renderer) summary(s *Summary) *marker {
	key := s.Fingerprint + "\x00" + s.Text
	if r.sumKey != key {
		e := transcript.Entry{Type: transcript.TypeInput, Role: transcript.RoleUser,
			Text: fmt.Sprintf(summaryWrapper, plural(s.Covered, "entry", "entries"), s.Text), Synthetic: true}
		r.sum = marker{entry: e, tokens: EstimateEntry(e)}
		r.sumKey = key
	}
	return &r.sum
}

// entryTokens is the raw token estimate of body[i] as the view shows it.
func (r *renderer) entryTokens(body []transcript.Entry, raw []int, i int, st *State) int {
	if m := r.markerFor(&body[i], st); m != nil {
		return m.tokens
	}
	return raw[i]
}

// viewRaw is the raw token estimate of the whole rendered body.
func (r *renderer) viewRaw(body []transcript.Entry, raw []int, st *State) int {
	n, start := 0, 0
	if st.Summary != nil && st.Summary.Covered <= len(body) {
		start = st.Summary.Covered
		n += r.summary(st.Summary).tokens
	}
	for i := start; i < len(body); i++ {
		n += r.entryTokens(body, raw, i, st)
	}
	return n
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
