package provider

import (
	"bytes"
	"fmt"
	"sync"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/lovia-dev/lovia/internal/transcript"
)

// PieceCache lets an adapter pair and encode each entry of a conversation once and
// reuse the result on later requests. A run's views extend one another (the
// prefix is stable by design), so re-pairing and re-encoding the whole history
// every turn made a turn's cost grow with the run's length; with the cache a turn
// pairs and encodes only what is new, and copies the rest.
//
// For each of the last few conversations it served (several agents, or a
// summarizer, may share one adapter value) the cache keeps the previous request's
// entries (deep copies, so a caller reusing its buffers cannot make a stale piece
// look current), their PairedView and the pieces encoded from it. Nothing is
// trusted from Request.StablePrefix: the new entries are compared with the kept
// ones field by field. Requests run concurrently, each on its own conversation.
type PieceCache struct {
	mu sync.Mutex
	// slots hold the last conversations seen (several agents, or a summarizer,
	// may share one adapter value), most recently used last.
	slots []*pieceSlot
}

// pieceSlots bounds the conversations a cache keeps.
const pieceSlots = 4

// pieceSlot is one conversation's state.
type pieceSlot struct {
	busy bool               // a builder is using it
	raw  []transcript.Entry // previous request's entries (copies)
	view []transcript.Entry // PairedView(raw)
	orig []int              // and its indexes into raw
	// cuts are the points where PairedView(raw) = PairedView(raw[:k]) ++
	// PairedView(raw[k:]) whatever follows: every call before k answered after it
	// and before k, no assistant turn open at k.
	cuts []cut
	// resultIDs are the call ids of the tool results in raw[:cuts[len-1].raw].
	resultIDs map[string]struct{}
	pieces    []Piece
}

type cut struct{ raw, view int }

// Piece is one encoded part of a request (usually one message) made from
// view[Start:End]; Flags are the other inputs its encoding depended on.
type Piece struct {
	Start, End int
	Flags      uint64
	JSON       []byte
}

// PieceBuilder is one request's use of a PieceCache (Begin ... Done).
type PieceBuilder struct {
	c      *PieceCache
	s      *pieceSlot
	common int // leading view entries unchanged since the previous request
	old    []Piece
	hits   int
	miss   bool
	ok     bool
}

// Begin pairs entries (as PairedView does) for a new request; Done must follow.
// The view it returns belongs to the cache: use it only until Done.
func (c *PieceCache) Begin(entries []transcript.Entry) (*PieceBuilder, []transcript.Entry) {
	b, view, _ := c.BeginOrig(entries)
	return b, view
}

// BeginOrig is Begin also returning PairedView's second result (each view
// entry's index in entries, -1 for a synthetic one), owned by the cache too.
func (c *PieceCache) BeginOrig(entries []transcript.Entry) (*PieceBuilder, []transcript.Entry, []int) {
	s, m := c.take(entries)
	view, orig, common := s.begin(entries, m)
	return &PieceBuilder{c: c, s: s, common: common, old: s.pieces}, view, orig
}

// take picks the free slot holding the longest prefix of entries (a new or the
// least recently used one when none does) and marks it busy.
func (c *PieceCache) take(entries []transcript.Entry) (*pieceSlot, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	best, bestM := -1, 0
	for i, s := range c.slots {
		if s.busy {
			continue
		}
		m := 0
		for m < len(entries) && m < len(s.raw) && EqualEntries(&entries[m], &s.raw[m]) {
			m++
		}
		if best < 0 || m >= bestM {
			best, bestM = i, m
		}
	}
	var s *pieceSlot
	switch {
	case best >= 0 && (bestM > 0 || len(c.slots) >= pieceSlots):
		s = c.slots[best]
		if bestM == 0 { // the least recently used free slot
			for i, t := range c.slots {
				if !t.busy {
					best, s = i, t
					break
				}
			}
		}
		c.slots = append(c.slots[:best], c.slots[best+1:]...)
	default:
		s = &pieceSlot{}
	}
	s.busy = true
	c.slots = append(c.slots, s)
	return s, bestM
}

// begin brings the slot to entries, whose first m equal the kept ones, and
// returns the view, its indexes and how many leading view entries are unchanged.
func (c *pieceSlot) begin(entries []transcript.Entry, m int) ([]transcript.Entry, []int, int) {
	c.raw = c.raw[:m]
	for i := m; i < len(entries); i++ {
		c.raw = append(c.raw, cloneEntry(entries[i]))
	}
	// The last cut the unchanged entries still cover.
	n := len(c.cuts)
	for n > 0 && c.cuts[n-1].raw > m {
		n--
	}
	if n < len(c.cuts) {
		c.cuts = c.cuts[:n]
		c.resultIDs = resultIDs(c.raw[:c.lastCut().raw])
	}
	if c.resultIDs == nil {
		c.resultIDs = map[string]struct{}{}
	}
	k := c.lastCut()
	// A call after the cut reusing the id of a result before it pairs differently
	// in the whole view: then pair everything again.
	for i := k.raw; i < len(c.raw); i++ {
		if c.raw[i].Type == transcript.TypeToolCall {
			if _, dup := c.resultIDs[c.raw[i].CallID]; dup {
				c.cuts, c.resultIDs, k = nil, map[string]struct{}{}, cut{}
				break
			}
		}
	}
	c.view = c.view[:k.view]
	c.orig = c.orig[:k.view]
	sv, orig := PairedView(c.raw[k.raw:])
	c.view = append(c.view, sv...)
	for _, o := range orig {
		if o >= 0 {
			o += k.raw
		}
		c.orig = append(c.orig, o)
	}
	// New cuts inside the part just paired.
	// A cut follows the entries of the view emitted so far when they are exactly
	// the entries before it, every call among them is answered among them (the
	// view holds a paired result for each; orphan results become input), and no
	// assistant turn is open.
	emitted, maxOrig, open := 0, -1, 0
	for q, o := range orig {
		if o < 0 {
			break // a synthetic result: that call may still be answered later
		}
		emitted++
		maxOrig = max(maxOrig, o)
		switch sv[q].Type {
		case transcript.TypeToolCall:
			open++
		case transcript.TypeToolResult:
			open--
		}
		if open == 0 && emitted == maxOrig+1 && !isAssistantSide(c.raw[k.raw+maxOrig].Type) {
			end := k.raw + maxOrig + 1
			for i := c.lastCut().raw; i < end; i++ {
				if c.raw[i].Type == transcript.TypeToolResult {
					c.resultIDs[c.raw[i].CallID] = struct{}{}
				}
			}
			c.cuts = append(c.cuts, cut{raw: end, view: k.view + q + 1})
		}
	}
	return c.view, c.orig, k.view
}

func (c *pieceSlot) lastCut() cut {
	if len(c.cuts) == 0 {
		return cut{}
	}
	return c.cuts[len(c.cuts)-1]
}

func resultIDs(entries []transcript.Entry) map[string]struct{} {
	ids := map[string]struct{}{}
	for i := range entries {
		if entries[i].Type == transcript.TypeToolResult {
			ids[entries[i].CallID] = struct{}{}
		}
	}
	return ids
}

// Get returns the bytes encoded earlier for view[start:end] with flags, if they
// are still valid. Calls must come in increasing start order, each followed by
// Put when it misses.
func (b *PieceBuilder) Get(start, end int, flags uint64) ([]byte, bool) {
	if b.miss || end > b.common || b.hits >= len(b.old) {
		b.miss = true
		return nil, false
	}
	p := b.old[b.hits]
	if p.Start != start || p.End != end || p.Flags != flags {
		b.miss = true
		return nil, false
	}
	b.hits++
	return p.JSON, true
}

// Put records the bytes encoded for view[start:end] with flags.
func (b *PieceBuilder) Put(start, end int, flags uint64, js []byte) {
	b.miss = true
	if b.hits < len(b.old) {
		b.old = b.old[:b.hits] // the rest is stale; appending reuses the array
	}
	b.old = append(b.old, Piece{Start: start, End: end, Flags: flags, JSON: js})
	b.hits = len(b.old)
}

// Pieces are this request's pieces so far, in order.
func (b *PieceBuilder) Pieces() []Piece { return b.old[:b.hits] }

// OK marks the request as encoded; without it Done forgets the conversation.
func (b *PieceBuilder) OK() { b.ok = true }

// Done keeps this request's pieces for the next one and unlocks the cache.
func (b *PieceBuilder) Done() {
	b.c.mu.Lock()
	defer b.c.mu.Unlock()
	s := b.s
	s.busy = false
	if !b.ok {
		*s = pieceSlot{}
		return
	}
	s.pieces = b.old[:b.hits]
	// A slot taken while all were busy makes one too many: drop the oldest free.
	for i, t := range b.c.slots {
		if len(b.c.slots) <= pieceSlots {
			break
		}
		if !t.busy {
			b.c.slots = append(b.c.slots[:i], b.c.slots[i+1:]...)
			break
		}
	}
}

// cloneEntry copies everything of e a caller could later change in place.
func cloneEntry(e transcript.Entry) transcript.Entry {
	e = e.Clone()
	for i := range e.Attachments {
		e.Attachments[i].Data = bytes.Clone(e.Attachments[i].Data)
	}
	return e
}

// EqualEntries reports whether a and b are the same entry in every field (an
// empty and a nil Args or Data are the same: they encode alike).
func EqualEntries(a, b *transcript.Entry) bool {
	if sameText(a, b) && a.IsError == b.IsError && a.Truncated == b.Truncated && a.Synthetic == b.Synthetic &&
		len(a.Attachments) == 0 && len(b.Attachments) == 0 && bytes.Equal(a.Args, b.Args) {
		return true
	}
	if a.Type != b.Type || a.RunID != b.RunID || a.Agent != b.Agent || a.Role != b.Role || a.Text != b.Text ||
		a.Signature != b.Signature || a.Encrypted != b.Encrypted || a.ProviderID != b.ProviderID ||
		a.Provider != b.Provider || a.CallID != b.CallID || a.Name != b.Name || !bytes.Equal(a.Args, b.Args) ||
		a.IsError != b.IsError || a.Truncated != b.Truncated || a.Synthetic != b.Synthetic ||
		len(a.Attachments) != len(b.Attachments) {
		return false
	}
	for i := range a.Attachments {
		x, y := &a.Attachments[i], &b.Attachments[i]
		if x.MIME != y.MIME || x.Name != y.Name || x.URI != y.URI || !bytes.Equal(x.Data, y.Data) {
			return false
		}
	}
	return true
}

// sameText reports whether every string field of a and b shares its bytes: the
// common case (the cache's copies share strings with the transcript they came
// from), checked without comparing contents. False says nothing.
func sameText(a, b *transcript.Entry) bool {
	same := func(x, y string) bool {
		return len(x) == len(y) && (len(x) == 0 || unsafe.StringData(x) == unsafe.StringData(y))
	}
	return same(string(a.Type), string(b.Type)) && same(a.RunID, b.RunID) && same(a.Agent, b.Agent) &&
		same(a.Role, b.Role) && same(a.Text, b.Text) && same(a.Signature, b.Signature) &&
		same(a.Encrypted, b.Encrypted) && same(a.ProviderID, b.ProviderID) && same(a.Provider, b.Provider) &&
		same(a.CallID, b.CallID) && same(a.Name, b.Name)
}

// StreamBody is head, a JSON object holding key as an empty array (the client
// encoded the request without it), with the array filled by the pieces (empty
// ones skipped) and "stream":true as its first member: the clients set "stream"
// on the body they are handed (sjson), and a key they find first costs no scan of
// the whole history. One allocation, one copy of each piece.
func StreamBody(head []byte, key string, pieces []Piece) ([]byte, error) {
	r := gjson.GetBytes(head, key)
	if r.Raw != "[]" || r.Index <= 0 || len(head) < 2 || head[0] != '{' {
		return nil, fmt.Errorf("request body: no empty %q array to fill", key)
	}
	const lead = `{"stream":true,`
	size := len(lead) + len(head)
	for _, p := range pieces {
		size += len(p.JSON) + 1
	}
	out := make([]byte, 0, size)
	out = append(out, lead...)
	out = append(out, head[1:r.Index+1]...) // up to and with the '['
	first := true
	for _, p := range pieces {
		if len(p.JSON) == 0 {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, p.JSON...)
	}
	out = append(out, head[r.Index+1:]...) // from the ']'
	return out, nil
}
