package provider

import (
	"bytes"
	"slices"
	"sync"
)

// HeadCache keeps the encoded head of recent requests: everything but the
// conversation (model, system text, tool definitions, output schema, limits). The
// head is the same on every turn of a run, but the clients' reflective encoders
// (and the schema maps they are given) made it cost more than all the new
// messages of a turn. An adapter's head must depend only on the Request fields
// compared here and on the adapter's own fixed configuration.
type HeadCache struct {
	mu    sync.Mutex
	slots []headSlot // most recently used last
}

// headSlots bounds the heads kept: agents, subagents and the summarizer may share
// one adapter value, each with its own tools.
const headSlots = 4

type headSlot struct {
	req  Request // Entries cleared; Tools and OutputSchema copied
	json []byte
}

// Head returns the encoded head of req, calling encode only when no kept head
// was made from the same inputs. The result is shared: callers must not modify it.
func (h *HeadCache) Head(req Request, encode func() ([]byte, error)) ([]byte, error) {
	h.mu.Lock()
	for i := len(h.slots) - 1; i >= 0; i-- {
		if sameHead(&h.slots[i].req, &req) {
			s := h.slots[i]
			h.slots = append(append(h.slots[:i], h.slots[i+1:]...), s)
			h.mu.Unlock()
			return s.json, nil
		}
	}
	h.mu.Unlock()
	js, err := encode()
	if err != nil {
		return nil, err
	}
	// Copies: a caller reusing its tool slice or schema buffers must not make a
	// stale head look current.
	key := Request{Model: req.Model, System: req.System, OutputSchema: bytes.Clone(req.OutputSchema), OutputName: req.OutputName,
		MaxOutputTokens: req.MaxOutputTokens, ToolChoice: req.ToolChoice, Tools: make([]ToolDef, len(req.Tools))}
	for i, t := range req.Tools {
		key.Tools[i] = ToolDef{Name: t.Name, Description: t.Description, Schema: bytes.Clone(t.Schema)}
	}
	h.mu.Lock()
	if len(h.slots) >= headSlots {
		h.slots = slices.Delete(h.slots, 0, 1)
	}
	h.slots = append(h.slots, headSlot{req: key, json: js})
	h.mu.Unlock()
	return js, nil
}

func sameHead(a, b *Request) bool {
	if a.Model != b.Model || a.System != b.System || a.OutputName != b.OutputName || a.MaxOutputTokens != b.MaxOutputTokens ||
		a.ToolChoice != b.ToolChoice || !bytes.Equal(a.OutputSchema, b.OutputSchema) || len(a.Tools) != len(b.Tools) {
		return false
	}
	for i := range a.Tools {
		x, y := &a.Tools[i], &b.Tools[i]
		if x.Name != y.Name || x.Description != y.Description || !bytes.Equal(x.Schema, y.Schema) {
			return false
		}
	}
	return true
}
