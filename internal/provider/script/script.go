// Package script is the scripted provider (`script:PATH`): it replays canned model
// replies from a YAML file, so tests, demos and evals run with no network.
//
// File format:
//
//	context_window: 128000        # optional (default 128000)
//	turns:
//	  - text: "Let me look."
//	    reasoning: "thinking..."  # optional
//	    tool_calls:
//	      - name: read_file
//	        args: {path: main.go}  # YAML map -> JSON object (or raw_args: '{"x":1}')
//	        id: call_1             # optional
//	    delay: 200ms               # optional, before streaming
//	    usage: {input_tokens: 10, output_tokens: 5}  # optional (default: bytes/4)
//	  - error: {status: 429, message: slow down, retry_after: 1s}
//	  - text: "Done."
//
// Which item replays: the number n of assistant replies already in the request's view
// for the current run decides the reply (the n-th non-error item, 0-based). A reply is
// a maximal group of consecutive assistant_text / reasoning / tool_call entries; the
// current run's entries start at the first entry stamped with the last run id in the
// view (the run loop stamps a run's input) and run to the end (the whole view when no
// entry is stamped).
// Because compaction may summarize old replies out of a view, n never goes below the
// highest count this provider saw earlier for the same run. Error items stand before
// the reply they delay: each is served once per provider value (so "429, then text"
// is two items), then the reply follows. A resumed run therefore continues at the
// right turn, and a fresh process serves pending error items again. With
// `scope: session` the count covers the whole conversation instead, so a scripted chat
// continues across its runs.
package script

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"path/filepath"
	"sync"
	"time"

	"github.com/lovia-dev/lovia/internal/config/yamlfile"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/safefile"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

// Prefix is the registry prefix.
const Prefix = "script"

// DefaultContextWindow is reported when the file does not set one.
const DefaultContextWindow = 128_000

// chunk is the size of streamed text deltas.
const chunk = 16

// Script is a parsed script file.
type Script struct {
	ContextWindow int  `yaml:"context_window"`
	NativeSchema  bool `yaml:"native_schema"`
	// Scope is "run" (default: each run starts at the first turn) or "session" (turns
	// continue across the runs of a conversation, for scripted chats).
	Scope string `yaml:"scope"`
	Turns []Turn `yaml:"turns"`
}

// Turn is one scripted model reply (or one failed attempt, when Error is set).
type Turn struct {
	Text      string        `yaml:"text"`
	Reasoning string        `yaml:"reasoning"`
	ToolCalls []Call        `yaml:"tool_calls"`
	Error     *Failure      `yaml:"error"`
	Delay     time.Duration `yaml:"delay"`
	Usage     *Usage        `yaml:"usage"`
	// Finish overrides the finish reason ("length", ...).
	Finish string `yaml:"finish"`
}

// Call is one scripted tool call.
type Call struct {
	Name string         `yaml:"name"`
	Args map[string]any `yaml:"args"`
	// RawArgs is sent verbatim (for malformed-argument tests).
	RawArgs string `yaml:"raw_args"`
	ID      string `yaml:"id"`
}

// Failure is a scripted provider error.
type Failure struct {
	Status     int           `yaml:"status"`
	Message    string        `yaml:"message"`
	RetryAfter time.Duration `yaml:"retry_after"`
	// Overflow: the context window was exceeded.
	Overflow bool `yaml:"overflow"`
	// Cut: the connection drops after the item's text has streamed.
	Cut bool `yaml:"cut"`
}

// Usage overrides the estimated usage of a reply.
type Usage struct {
	InputTokens       int `yaml:"input_tokens"`
	OutputTokens      int `yaml:"output_tokens"`
	CachedInputTokens int `yaml:"cached_input_tokens"`
}

// Parse decodes and checks a script; path is used in error messages only.
func Parse(path string, data []byte) (*Script, error) {
	var s Script
	if err := yamlfile.Decode(path, data, &s); err != nil {
		return nil, err
	}
	if len(s.Turns) == 0 {
		return nil, errs.Newf(errs.KindConfig, "add a top-level `turns:` list with one item per model reply",
			"script %s has no turns", path)
	}
	for i, t := range s.Turns {
		if t.Error != nil && len(t.ToolCalls) > 0 {
			return nil, errs.Newf(errs.KindConfig, "put the error and the reply in two items",
				"script %s: turn %d has both error and tool_calls", path, i+1)
		}
		if t.Error != nil && t.Error.Status == 0 && !t.Error.Overflow && !t.Error.Cut {
			return nil, errs.Newf(errs.KindConfig, "use e.g. {status: 429}, {overflow: true} or {cut: true}",
				"script %s: turn %d has an empty error", path, i+1)
		}
		for j, c := range t.ToolCalls {
			if c.Name == "" {
				return nil, errs.Newf(errs.KindConfig, "give every tool call a name",
					"script %s: turn %d, tool call %d has no name", path, i+1, j+1)
			}
			if c.RawArgs != "" && c.Args != nil {
				return nil, errs.Newf(errs.KindConfig, "use either args or raw_args",
					"script %s: turn %d, tool call %d has both args and raw_args", path, i+1, j+1)
			}
			if _, err := c.argsJSON(); err != nil {
				return nil, errs.Wrap(errs.KindConfig, err,
					fmt.Sprintf("script %s: turn %d, tool call %d: args", path, i+1, j+1), "args must be a mapping of JSON-compatible values")
			}
		}
	}
	if s.Scope != "" && s.Scope != "run" && s.Scope != "session" {
		return nil, errs.Newf(errs.KindConfig, "use scope: run or scope: session", "script %s: unknown scope %q", path, s.Scope)
	}
	if s.ContextWindow <= 0 {
		s.ContextWindow = DefaultContextWindow
	}
	return &s, nil
}

func (c Call) argsJSON() (json.RawMessage, error) {
	if c.RawArgs != "" {
		return json.RawMessage(c.RawArgs), nil
	}
	if c.Args == nil {
		return json.RawMessage(`{}`), nil
	}
	b, err := json.Marshal(yamlfile.JSONable(c.Args))
	if err != nil {
		return nil, err
	}
	return b, nil
}

// Provider replays a Script. It is safe for concurrent use.
type Provider struct {
	path   string
	script *Script

	mu       sync.Mutex
	record   bool
	requests []provider.Request
	served   map[int]bool   // error items already served
	seen     map[string]int // highest reply count seen per run id
}

// New returns a provider replaying s; path names it in errors and Info. It records
// every request (see Requests).
func New(path string, s *Script) *Provider {
	return &Provider{path: path, script: s, record: true, served: map[int]bool{}, seen: map[string]int{}}
}

// SetRecording turns the request log on or off. Providers built by the registry
// (lovia run -m script:PATH) do not record: a long run would keep every view.
func (p *Provider) SetRecording(on bool) {
	p.mu.Lock()
	p.record = on
	if !on {
		p.requests = nil
	}
	p.mu.Unlock()
}

// Load reads and parses a script file.
func Load(path string) (*Provider, error) {
	data, err := safefile.ReadNamed(path, safefile.MaxScript)
	if err != nil {
		hint := errs.HintOf(err)
		if hint == "" {
			hint = "check the path after script: (relative paths resolve against the working directory)"
		}
		return nil, errs.Wrap(errs.KindConfig, err, "read script", hint)
	}
	s, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	return New(path, s), nil
}

// Factory is the registry factory: the model name is the script path.
func Factory(_ context.Context, model string, env provider.Env) (provider.Provider, error) {
	path := model
	if !filepath.IsAbs(path) && env.Dir != "" {
		path = filepath.Join(env.Dir, path)
	}
	p, err := Load(path)
	if err != nil {
		return nil, err
	}
	if w := env.ContextWindows[model]; w > 0 {
		p.script.ContextWindow = w
	}
	p.SetRecording(false)
	return p, nil
}

// Register adds the script provider to r.
func Register(r *provider.Registry) { r.Register(Prefix, Factory) }

// Info describes the scripted model.
func (p *Provider) Info() provider.Info {
	return provider.Info{Provider: Prefix, Model: p.path, ContextWindow: p.script.ContextWindow, NativeSchema: p.script.NativeSchema}
}

// Requests returns copies of every request received while recording, in order (for
// tests).
func (p *Provider) Requests() []provider.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]provider.Request, len(p.requests))
	copy(out, p.requests)
	return out
}

// Script returns the parsed script.
func (p *Provider) Script() *Script { return p.script }

// pick chooses the item for req and records the request.
func (p *Provider) pick(req provider.Request) (int, int, error) {
	runID, n := RepliesInView(req.Entries)
	if p.script.Scope == "session" {
		runID, n = "", countReplies(req.Entries)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.record {
		req.Entries = append([]transcript.Entry(nil), req.Entries...)
		p.requests = append(p.requests, req)
	}
	n = max(n, p.seen[runID])
	p.seen[runID] = n
	// Find the n-th reply item; serve the first unserved error item before it.
	replies := 0
	for i, t := range p.script.Turns {
		if t.Error != nil {
			if !p.served[i] && replies == n {
				p.served[i] = true
				return i, n, nil
			}
			continue
		}
		if replies == n {
			return i, n, nil
		}
		replies++
	}
	return -1, n, errs.Newf(errs.KindProvider, "add a turn to the script",
		"script %s has %d turns; the run asked for turn %d — add a turn", p.path, replies, n+1)
}

// RepliesInView returns the current run id of a view and how many assistant replies of
// that run it holds (see the package comment). The current run starts at the first
// entry stamped with the last run id seen; unstamped entries after it (the loop stamps
// only a run's input) belong to it.
func RepliesInView(entries []transcript.Entry) (string, int) {
	runID := ""
	for i := len(entries) - 1; i >= 0; i-- {
		if e := &entries[i]; e.RunID != "" && !e.Synthetic {
			runID = e.RunID
			break
		}
	}
	start := 0
	if runID != "" {
		for i := range entries {
			if entries[i].RunID == runID {
				start = i
				break
			}
		}
	}
	n := 0
	inReply := false
	for i := start; i < len(entries); i++ {
		e := &entries[i]
		if e.RunID != "" && e.RunID != runID {
			inReply = false
			continue
		}
		switch e.Type {
		case transcript.TypeAssistantText, transcript.TypeReasoning, transcript.TypeToolCall:
			if !inReply {
				n++
			}
			inReply = true
		default:
			inReply = false
		}
	}
	return runID, n
}

// countReplies counts every assistant reply in entries (scope: session).
func countReplies(entries []transcript.Entry) int {
	n := 0
	inReply := false
	for i := range entries {
		switch entries[i].Type {
		case transcript.TypeAssistantText, transcript.TypeReasoning, transcript.TypeToolCall:
			if !inReply {
				n++
			}
			inReply = true
		default:
			inReply = false
		}
	}
	return n
}

// Stream replays the chosen item.
func (p *Provider) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Delta, error] {
	return func(yield func(provider.Delta, error) bool) {
		idx, n, err := p.pick(req)
		if err != nil {
			yield(provider.Delta{}, err)
			return
		}
		t := p.script.Turns[idx]
		if t.Delay > 0 {
			timer := time.NewTimer(t.Delay)
			select {
			case <-ctx.Done():
				timer.Stop()
				yield(provider.Delta{}, ctx.Err())
				return
			case <-timer.C:
			}
		}
		if err := ctx.Err(); err != nil {
			yield(provider.Delta{}, err)
			return
		}
		if f := t.Error; f != nil {
			if f.Cut {
				for piece := range pieces(t.Text) {
					if !yield(provider.Delta{Kind: provider.DeltaText, Text: piece}, nil) {
						return
					}
				}
			}
			yield(provider.Delta{}, p.failure(f))
			return
		}
		for piece := range pieces(t.Reasoning) {
			if !yield(provider.Delta{Kind: provider.DeltaReasoning, Text: piece}, nil) {
				return
			}
		}
		for piece := range pieces(t.Text) {
			if !yield(provider.Delta{Kind: provider.DeltaText, Text: piece}, nil) {
				return
			}
		}
		var entries []transcript.Entry
		if t.Reasoning != "" {
			e := transcript.Reasoning(t.Reasoning)
			entries = append(entries, e)
		}
		if t.Text != "" {
			entries = append(entries, transcript.AssistantText(t.Text))
		}
		runID, _ := RepliesInView(req.Entries)
		for j, c := range t.ToolCalls {
			id := c.ID
			if id == "" {
				id = callID(runID, n, j)
			}
			args, _ := c.argsJSON() // checked by Parse
			if !yield(provider.Delta{Kind: provider.DeltaToolCall, CallID: id, Name: c.Name}, nil) {
				return
			}
			entries = append(entries, transcript.ToolCall(id, c.Name, args))
		}
		if len(entries) == 0 {
			// An empty item is an empty answer; keep the reply countable.
			entries = append(entries, transcript.AssistantText(""))
		}
		for i := range entries {
			if !yield(provider.Delta{Kind: provider.DeltaEntry, Entry: &entries[i]}, nil) {
				return
			}
		}
		u := estimate(req, entries)
		if t.Usage != nil {
			u = usage.Usage{InputTokens: t.Usage.InputTokens, OutputTokens: t.Usage.OutputTokens, CachedInputTokens: t.Usage.CachedInputTokens}
		}
		u.Requests = 1
		if !yield(provider.Delta{Kind: provider.DeltaUsage, Usage: &u}, nil) {
			return
		}
		finish := t.Finish
		if finish == "" {
			finish = "stop"
			if len(t.ToolCalls) > 0 {
				finish = "tool_calls"
			}
		}
		yield(provider.Delta{Kind: provider.DeltaFinish, FinishReason: finish}, nil)
	}
}

func (p *Provider) failure(f *Failure) error {
	switch {
	case f.Cut:
		return &provider.HTTPError{Provider: Prefix, Transport: io.ErrUnexpectedEOF}
	case f.Overflow:
		msg := f.Message
		if msg == "" {
			msg = "context window exceeded"
		}
		st := f.Status
		if st == 0 {
			st = 400
		}
		return &provider.HTTPError{Provider: Prefix, Status: st, Message: msg, Overflow: true}
	}
	return &provider.HTTPError{Provider: Prefix, Status: f.Status, Message: f.Message, RetryAfter: f.RetryAfter}
}

// callID is deterministic per run and reply, and distinct across runs of a session.
func callID(runID string, reply, j int) string {
	if runID == "" {
		return fmt.Sprintf("call_%d_%d", reply+1, j+1)
	}
	short := runID
	if len(short) > 8 {
		short = short[len(short)-8:]
	}
	return fmt.Sprintf("call_%s_%d_%d", short, reply+1, j+1)
}

// pieces splits s into chunk-sized deltas (on rune boundaries).
func pieces(s string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for len(s) > 0 {
			n := min(chunk, len(s))
			for n < len(s) && !utf8Start(s[n]) {
				n++
			}
			if !yield(s[:n]) {
				return
			}
			s = s[n:]
		}
	}
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// estimate is bytes/4 of what was sent and what came back.
func estimate(req provider.Request, reply []transcript.Entry) usage.Usage {
	in := len(req.System)
	for i := range req.Entries {
		e := &req.Entries[i]
		in += len(e.Text) + len(e.Args) + len(e.Name)
	}
	for _, t := range req.Tools {
		in += len(t.Name) + len(t.Description) + len(t.Schema)
	}
	out := 0
	for _, e := range reply {
		out += len(e.Text) + len(e.Args) + len(e.Name)
	}
	return usage.Usage{InputTokens: (in + 3) / 4, OutputTokens: (out + 3) / 4}
}
