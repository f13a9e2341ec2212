package compaction

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/lovia-dev/lovia/internal/transcript"
)

// stateVersion is bumped when State's JSON changes incompatibly; an unknown version is
// discarded (the view is re-planned from scratch, which is always safe).
const stateVersion = 1

// State is the policy's sticky memory: the decisions the stages made, never undone,
// plus the token calibration. It is small and JSON-safe; the loop stores it in the
// checkpoint head (Result.State → next Request.State), so it survives resume.
// Decisions are keyed by call_id (or by the covered-prefix fingerprint for the
// summary), never by position.
type State struct {
	Version int    `json:"v"`
	RunID   string `json:"run_id,omitempty"`
	// Offloaded maps a call_id to the archive reference of its full output ("" when no
	// archive was available: recall falls back to the transcript). The marker's preview
	// is re-derived from the transcript, so the state stays small.
	Offloaded map[string]string `json:"offloaded,omitempty"`
	// Cleared call_ids render as short markers (this wins over Offloaded).
	Cleared map[string]bool `json:"cleared,omitempty"`
	// Summary replaces the covered prefix of the body.
	Summary *Summary `json:"summary,omitempty"`

	// Ratio is the calibration EMA of reported/estimated tokens (0 = 1.0).
	Ratio float64 `json:"ratio,omitempty"`
	// LastRaw and LastTools are the raw estimate of the last view (body + system) and
	// of its tool schemas, waiting for the provider's report; LastReported is the last
	// report folded in (so a repeated report is not counted twice).
	LastRaw      int `json:"last_raw,omitempty"`
	LastTools    int `json:"last_tools,omitempty"`
	LastReported int `json:"last_reported,omitempty"`

	// SummaryFailures counts consecutive summarizer failures in this run (the circuit
	// breaker opens at SummaryConfig.MaxFailures).
	SummaryFailures int `json:"summary_failures,omitempty"`
	// Bursts counts passes that made new decisions.
	Bursts int `json:"bursts,omitempty"`
	// ViewBody is how many body entries the last view rendered. A process that starts
	// from this state (resume, or the next run seeded with it) re-renders that view
	// once to report an exact StablePrefix on its first call.
	ViewBody int `json:"view_body,omitempty"`

	// Encoded decision maps, kept until a decision changes: re-encoding a thousand
	// sorted keys every turn would dominate the cost of a calm turn.
	encOffloaded, encCleared []byte
}

// Summary is the running summary of the body's oldest entries.
type Summary struct {
	Text string `json:"text"`
	// Covered: body[:Covered] is replaced by the summary.
	Covered int `json:"covered"`
	// Fingerprint is the structural hash of body[:Covered] when it was summarized; a
	// different prefix (history trimmed or rewritten between runs) resets the summary.
	Fingerprint string `json:"fingerprint"`
}

// ParseState decodes a state from a checkpoint head. Empty input gives a fresh state;
// a state of another version is discarded rather than misread.
func ParseState(raw json.RawMessage) (*State, error) {
	s := &State{Version: stateVersion}
	if len(raw) == 0 || string(raw) == "null" {
		return s, nil
	}
	var in State
	if err := json.Unmarshal(raw, &in); err != nil {
		return s, fmt.Errorf("compaction state: %w", err)
	}
	if in.Version != stateVersion {
		return s, nil
	}
	if in.Ratio != 0 {
		in.Ratio = min(max(in.Ratio, minRatio), maxRatio)
	}
	return &in, nil
}

// Marshal encodes s. Maps are encoded with sorted keys, so equal states give equal
// bytes; the result decodes with json.Unmarshal / ParseState.
func (s *State) Marshal() json.RawMessage {
	head := *s
	head.Offloaded, head.Cleared = nil, nil
	b, err := json.Marshal(&head)
	if err != nil { // cannot happen: plain strings, numbers and maps
		panic(err)
	}
	if len(s.Offloaded) == 0 && len(s.Cleared) == 0 {
		return b
	}
	if len(s.Offloaded) > 0 && s.encOffloaded == nil {
		s.encOffloaded, _ = json.Marshal(s.Offloaded)
	}
	if len(s.Cleared) > 0 && s.encCleared == nil {
		s.encCleared, _ = json.Marshal(s.Cleared)
	}
	out := make([]byte, 0, len(b)+len(s.encOffloaded)+len(s.encCleared)+32)
	out = append(out, b[:len(b)-1]...) // without the closing brace
	if len(s.Offloaded) > 0 {
		out = append(append(out, `,"offloaded":`...), s.encOffloaded...)
	}
	if len(s.Cleared) > 0 {
		out = append(append(out, `,"cleared":`...), s.encCleared...)
	}
	return append(out, '}')
}

// clone copies s deeply enough that mutating the copy's decisions leaves s intact.
func (s *State) clone() *State {
	c := *s
	c.Offloaded = maps.Clone(s.Offloaded)
	c.Cleared = maps.Clone(s.Cleared)
	if s.Summary != nil {
		sum := *s.Summary
		c.Summary = &sum
	}
	return &c
}

// IsOffloaded and IsCleared report a call's decision.
func (s *State) IsOffloaded(callID string) bool { _, ok := s.Offloaded[callID]; return ok }
func (s *State) IsCleared(callID string) bool   { return s.Cleared[callID] }

func (s *State) offload(callID, ref string) {
	if s.Offloaded == nil {
		s.Offloaded = map[string]string{}
	}
	s.Offloaded[callID] = ref
	s.encOffloaded = nil
}

func (s *State) clear(callID string) {
	if s.Cleared == nil {
		s.Cleared = map[string]bool{}
	}
	s.Cleared[callID] = true
	s.encCleared = nil
}

// covered is how many leading body entries the summary replaces.
func (s *State) covered() int {
	if s.Summary == nil {
		return 0
	}
	return s.Summary.Covered
}

// Fingerprint is a structural hash of entries: kinds, roles, ids, names, sizes and the
// ends of each text. It detects a prefix that was trimmed or rewritten without hashing
// every byte of every tool output each turn.
func Fingerprint(entries []transcript.Entry) string {
	// Inline FNV-1a: the hash runs every call over the covered prefix, and the
	// hash.Hash interface would allocate for each string written.
	h := uint64(fnvOffset)
	for i := range entries {
		e := &entries[i]
		h = fnvString(h, string(e.Type))
		h = fnvString(h, e.Role)
		h = fnvString(h, e.CallID)
		h = fnvString(h, e.Name)
		h = fnvUint(h, uint64(len(e.Text)))
		// A little content too: equal-shaped entries (the same question asked twice)
		// would otherwise hash alike when the prefix shifts by whole exchanges.
		h = fnvString(h, e.Text[:min(len(e.Text), 32)])
		h = fnvString(h, e.Text[max(0, len(e.Text)-32):])
		h = fnvUint(h, uint64(len(e.Args))<<16^uint64(len(e.Attachments)))
	}
	return fmt.Sprintf("%016x", h)
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	h ^= 0xff // separator, so ("ab","c") and ("a","bc") differ
	return h * fnvPrime
}

func fnvUint(h, v uint64) uint64 {
	for range 8 {
		h ^= v & 0xff
		h *= fnvPrime
		v >>= 8
	}
	return h
}

// validate drops decisions that no longer fit body: a summary whose covered prefix is
// not the body's prefix any more. Call_id-keyed decisions stay (a call id that is not
// in the body simply never renders).
func (s *State) validate(body []transcript.Entry) (reset bool) {
	if s.Summary == nil {
		return false
	}
	if s.Summary.Covered > len(body) || s.Summary.Covered <= 0 || Fingerprint(body[:s.Summary.Covered]) != s.Summary.Fingerprint {
		s.Summary = nil
		return true
	}
	return false
}
