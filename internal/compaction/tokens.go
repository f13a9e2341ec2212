package compaction

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/lovia-dev/lovia/internal/transcript"
)

// Flat token costs for content whose size in bytes says little about its cost to the
// model (providers bill images by resolution, documents by their extracted text).
const (
	ImageTokens = 1600
	FileTokens  = 2000
	// entryOverhead covers the role/type framing every message carries on the wire.
	entryOverhead = 4
)

// EstimateEntry is the raw (uncalibrated) token estimate of one entry: UTF-8 bytes / 4
// of what is sent, so CJK text weighs ~0.75 tokens per character rather than 0.25,
// plus flat costs for attachments.
func EstimateEntry(e transcript.Entry) int {
	n := len(e.Text) + len(e.Args) + len(e.Name) + len(e.CallID) + len(e.Encrypted)
	t := n/4 + entryOverhead
	for _, a := range e.Attachments {
		if strings.HasPrefix(a.MIME, "image/") {
			t += ImageTokens
		} else {
			t += FileTokens
		}
	}
	return t
}

// EstimateText is the raw token estimate of a string (the system prompt).
func EstimateText(s string) int { return len(s) / 4 }

// EstimateTools counts the tool schemas as sent on the wire. They are a fixed payload
// counted apart from the calibrated body, so the calibration ratio only absorbs the
// tokenizer's error on conversation text.
func EstimateTools(tools []json.RawMessage) int {
	n := 0
	for _, t := range tools {
		n += len(t)/4 + entryOverhead
	}
	return n
}

// memoEntry remembers one body entry's estimate. Entries are immutable and the body is
// append-only, so index + identity is a valid key: string and slice equality in Go
// short-circuits on identical backing memory, which makes the check O(1) for the
// entries the loop passes again turn after turn (and correct, if slower, otherwise).
// Holding the strings also keeps their memory from being reused under a stale key.
type memoEntry struct {
	typ    transcript.Type
	text   string
	args   []byte
	callID string
	enc    int
	natt   int
	tokens int
}

func (m *memoEntry) matches(e *transcript.Entry) bool {
	return m.typ == e.Type && len(m.text) == len(e.Text) && m.natt == len(e.Attachments) &&
		m.enc == len(e.Encrypted) && m.callID == e.CallID && m.text == e.Text && bytes.Equal(m.args, e.Args)
}

// counter memoizes per-entry estimates for one session's body.
type counter struct {
	memo []memoEntry
	out  []int
}

// count returns the raw estimate of every body entry (the slice is reused by the next
// call) and the first index whose entry differs from the previous call's body.
func (c *counter) count(body []transcript.Entry) ([]int, int) {
	firstMiss := len(body)
	if cap(c.out) < len(body) {
		c.out = make([]int, len(body), len(body)+len(body)/2+16)
	}
	c.out = c.out[:len(body)]
	if len(c.memo) > len(body) {
		c.memo = c.memo[:len(body)]
	}
	for i := range body {
		e := &body[i]
		if i < len(c.memo) {
			if m := &c.memo[i]; m.matches(e) {
				c.out[i] = m.tokens
				continue
			}
		}
		firstMiss = min(firstMiss, i)
		m := memoEntry{typ: e.Type, text: e.Text, args: e.Args, callID: e.CallID,
			enc: len(e.Encrypted), natt: len(e.Attachments), tokens: EstimateEntry(*e)}
		if i < len(c.memo) {
			c.memo[i] = m
		} else {
			c.memo = append(c.memo, m)
		}
		c.out[i] = m.tokens
	}
	return c.out, firstMiss
}

// Calibration bounds (SPEC §6): the EMA ratio of reported to estimated tokens.
const (
	calibrationAlpha = 0.2
	minRatio         = 0.5
	maxRatio         = 2.5
)

// calibrate folds one observation (the provider's reported input tokens for the view
// we estimated at raw+tools) into the state's ratio. Tool schemas are subtracted first:
// they are counted on their wire shape and stay outside the multiplier.
func (s *State) calibrate(reported int) {
	if reported <= 0 || s.LastRaw <= 0 || reported == s.LastReported {
		return
	}
	observed := float64(reported-s.LastTools) / float64(s.LastRaw)
	observed = min(max(observed, minRatio), maxRatio)
	r := s.ratio()
	r = (1-calibrationAlpha)*r + calibrationAlpha*observed
	s.Ratio = min(max(r, minRatio), maxRatio)
	s.LastReported = reported
	s.LastRaw = 0
}

func (s *State) ratio() float64 {
	if s.Ratio <= 0 {
		return 1
	}
	return s.Ratio
}

// scaled applies the calibration ratio to a raw estimate.
func (s *State) scaled(raw int) int { return int(float64(raw)*s.ratio() + 0.5) }
