// Package headless writes a `lovia run` to its output streams in one of three
// formats: text (the final answer on stdout, progress on stderr), json (one object at
// the end) and stream-json (one event per line as it happens).
package headless

import (
	"bufio"
	"encoding/json"
	"fmt"
	"github.com/lovia-dev/lovia/internal/textutil"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/termtext"
	"github.com/lovia-dev/lovia/internal/usage"
)

// Format is an output format name.
type Format string

const (
	Text       Format = "text"
	JSON       Format = "json"
	StreamJSON Format = "stream-json"
)

// Formats lists the valid formats.
var Formats = []Format{Text, JSON, StreamJSON}

// ParseFormat validates a --output value.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", errs.Newf(errs.KindUsage, "use --output text, json or stream-json", "unknown output format %q", s)
}

// Options tune a writer.
type Options struct {
	// Progress prints tool calls, denials and retries on stderr (text format); set it
	// when stderr is a terminal or with -v.
	Progress bool
	// Verbose adds compaction, handoff and turn details to the progress.
	Verbose bool
	// Quiet suppresses everything on stderr but errors (-q). Without Progress, the
	// text format still reports denied actions in one line at the end unless Quiet.
	Quiet bool
}

// Writer renders one run. Event is called for every event in order; Finish once at
// the end with the run's result.
type Writer interface {
	Event(ev event.Event) error
	Finish(res *runtime.Result, err error) error
}

// New returns the writer for format.
func New(format Format, stdout, stderr io.Writer, opts Options) Writer {
	return hinting{newWriter(format, stdout, stderr, opts)}
}

func newWriter(format Format, stdout, stderr io.Writer, opts Options) Writer {
	switch format {
	case JSON:
		// JSON keeps the text exact; C1 and bidi characters, which JSON leaves raw and
		// a terminal may act on, are written as \u escapes.
		return &jsonWriter{out: termtext.NewJSONWriter(stdout)}
	case StreamJSON:
		return newStreamWriter(termtext.NewJSONWriter(stdout))
	}
	return &textWriter{out: stdout, err: stderr, opts: opts}
}

// Summary is the --output json object.
type Summary struct {
	RunID            string          `json:"run_id"`
	SessionID        string          `json:"session_id"`
	Status           string          `json:"status"`
	Output           string          `json:"output"`
	StructuredOutput json.RawMessage `json:"structured_output,omitempty"`
	Usage            Usage           `json:"usage"`
	// CostUSD is the run's cost in USD at the prices its calls were made at; null
	// when a model of the run has no known price (docs/cost.md).
	CostUSD      *float64 `json:"cost_usd"`
	Turns        int      `json:"turns"`
	FinishReason string   `json:"finish_reason"`
	// Denied lists the tool calls denied because nobody could approve them
	// (--approve none); the model was told each time.
	Denied []Denial     `json:"denied,omitempty"`
	Error  *event.Error `json:"error,omitempty"`
}

// Denial is one denied tool call.
type Denial struct {
	CallID  string `json:"call_id"`
	Name    string `json:"name"`
	Summary string `json:"summary"`
}

// denial returns the denial an event reports, if any.
func denial(ev event.Event) (Denial, bool) {
	if ev.Type != event.ToolCallFailed || ev.Approval == nil || !strings.HasPrefix(ev.Approval.Decision, "denied") {
		return Denial{}, false
	}
	return Denial{CallID: ev.CallID, Name: ev.Name, Summary: ev.Approval.Summary}, true
}

// Usage is the token usage reported in the json summary.
type Usage struct {
	InputTokens       int `json:"input_tokens"`
	OutputTokens      int `json:"output_tokens"`
	CachedInputTokens int `json:"cached_input_tokens"`
	CacheWriteTokens  int `json:"cache_write_tokens,omitempty"`
}

func summaryUsage(u usage.Usage) Usage {
	return Usage{u.InputTokens, u.OutputTokens, u.CachedInputTokens, u.CacheWriteTokens}
}

// Summarize builds the json summary from the terminal event (so output and exit code
// agree), falling back to the result for anything the event lacks.
func Summarize(term *event.Event, res *runtime.Result, err error) Summary {
	var s Summary
	if res != nil {
		s = Summary{RunID: res.RunID, SessionID: res.SessionID, Status: string(res.Status), Output: res.Output,
			StructuredOutput: res.StructuredOutput, Turns: res.Turns, FinishReason: res.FinishReason,
			Usage: summaryUsage(res.Usage), CostUSD: res.Usage.CostPtr()}
	}
	if term != nil {
		s.RunID = term.RunID
		if term.SessionID != "" {
			s.SessionID = term.SessionID
		}
		s.Status = term.Status
		if term.FinalOutput != "" || s.Output == "" {
			s.Output = term.FinalOutput
		}
		if len(term.StructuredOutput) > 0 {
			s.StructuredOutput = term.StructuredOutput
		}
		if term.Turns > 0 {
			s.Turns = term.Turns
		}
		if term.FinishReason != "" {
			s.FinishReason = term.FinishReason
		}
		if term.Usage != nil {
			s.Usage, s.CostUSD = summaryUsage(*term.Usage), term.Usage.CostPtr()
		}
		s.Error = term.Error
	}
	if s.Error == nil && err != nil {
		s.Error = &event.Error{Kind: string(errs.KindOf(err)), Message: err.Error(), Hint: errs.HintOf(err)}
	}
	if s.Status == "" {
		s.Status = "failed"
		if err == nil {
			s.Status = "completed"
		}
	}
	return s
}

// ExitCode is the exit code a run ends with: derived from the terminal event when
// there is one (so the code always agrees with the last line of stream-json), else
// from err.
func ExitCode(term *event.Event, err error) int {
	if term != nil {
		if term.Type == event.RunCompleted {
			return 0
		}
		if term.Error != nil {
			return errs.ExitCode(&errs.Error{Kind: errs.Kind(term.Error.Kind)})
		}
		return 1
	}
	return errs.ExitCode(err)
}

type jsonWriter struct {
	out    io.Writer
	term   *event.Event
	denied []Denial
}

func (w *jsonWriter) Event(ev event.Event) error {
	if ev.Type.Terminal() {
		w.term = &ev
	}
	if d, ok := denial(ev); ok {
		w.denied = append(w.denied, d)
	}
	return nil
}

func (w *jsonWriter) Finish(res *runtime.Result, err error) error {
	enc := json.NewEncoder(w.out)
	enc.SetIndent("", "  ")
	s := Summarize(w.term, res, err)
	s.Denied = w.denied
	return enc.Encode(s)
}

// streamWriter writes one JSON line per event. Lines are buffered only while deltas
// stream (a 512 KiB reply is ~90k delta events; one write each cost more CPU than the
// rest of the pipeline): any other event flushes at once, and a delta never waits
// more than deltaFlush for the next write.
type streamWriter struct {
	mu    sync.Mutex
	buf   *bufio.Writer
	enc   *json.Encoder
	timer *time.Timer
	err   error
}

const deltaFlush = 20 * time.Millisecond

func newStreamWriter(out io.Writer) *streamWriter {
	w := &streamWriter{buf: bufio.NewWriterSize(out, 64<<10)}
	w.enc = json.NewEncoder(w.buf)
	return w
}

func (w *streamWriter) Event(ev event.Event) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if err := w.enc.Encode(ev); err != nil {
		w.err = err
		return err
	}
	if ev.Type == event.TextDelta || ev.Type == event.ReasoningDelta {
		if w.timer == nil {
			w.timer = time.AfterFunc(deltaFlush, w.timedFlush)
		}
		return nil
	}
	return w.flushLocked()
}

func (w *streamWriter) timedFlush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer = nil
	if w.err == nil {
		w.err = w.buf.Flush()
	}
}

func (w *streamWriter) flushLocked() error {
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	if err := w.buf.Flush(); err != nil {
		w.err = err
	}
	return w.err
}

func (w *streamWriter) Finish(*runtime.Result, error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

type textWriter struct {
	out, err io.Writer
	opts     Options
	term     *event.Event
	denied   []Denial
	// approvals remembers approval requests by call so a denial can name what was asked.
	approvals map[string]*event.Approval
	// shown is the last progress line printed per running call (see progressLine).
	shown map[string]shownProgress
}

type shownProgress struct {
	at   time.Time
	text string
}

// progressEvery is the least time between two progress lines of one call on stderr:
// the events come up to ten a second, a scrolling terminal needs far fewer.
const progressEvery = time.Second

// progressLine prints a running call's progress on stderr (never stdout): when it
// changed, at most once per progressEvery, and always when it reaches its total.
func (w *textWriter) progressLine(ev event.Event) {
	if ev.Progress == nil || !(w.opts.Progress || w.opts.Verbose) {
		return
	}
	text := ev.Progress.String()
	last, ok := w.shown[ev.CallID]
	done := ev.Progress.Total > 0 && ev.Progress.Progress >= ev.Progress.Total
	if ok && (last.text == text || (!done && ev.Time.Sub(last.at) < progressEvery)) {
		return
	}
	if w.shown == nil {
		w.shown = map[string]shownProgress{}
	}
	w.shown[ev.CallID] = shownProgress{at: ev.Time, text: text}
	w.progress("  ⋯ %s %s", ev.Name, textutil.Clip(termtext.String(text), 120))
}

// progress prints one line on stderr. The line quotes tool names, arguments, results
// and model text, so all of it is sanitized (termtext) before it reaches the terminal.
func (w *textWriter) progress(format string, args ...any) {
	if w.opts.Progress || w.opts.Verbose {
		io.WriteString(w.err, termtext.String(fmt.Sprintf(format, args...))+"\n")
	}
}

func (w *textWriter) Event(ev event.Event) error {
	switch ev.Type {
	case event.ToolCallStarted:
		w.progress("→ %s %s", ev.Name, textutil.Clip(termtext.String(string(ev.Args)), 120))
	case event.ToolCallProgress:
		w.progressLine(ev)
	case event.ApprovalRequired:
		if w.approvals == nil {
			w.approvals = map[string]*event.Approval{}
		}
		w.approvals[ev.CallID] = ev.Approval
	case event.ToolCallCompleted:
		delete(w.shown, ev.CallID)
		if w.opts.Verbose {
			w.progress("  ✓ %s (%d ms) %s", ev.Name, ev.DurationMS, textutil.Clip(termtext.String(ev.Output), 100))
		}
	case event.ToolCallFailed:
		delete(w.shown, ev.CallID)
		if d, ok := denial(ev); ok {
			w.denied = append(w.denied, d)
			what := ev.Approval.Summary
			if what == "" {
				what = ev.Name
			}
			w.progress("  ✗ denied: %s (%s; rerun with --approve all to allow)", textutil.Clip(termtext.String(what), 100), ev.Approval.Decision)
		} else {
			w.progress("  ✗ %s failed: %s", ev.Name, textutil.Clip(termtext.String(ev.Output), 160))
		}
	case event.HandoffOccurred:
		w.progress("⇄ handoff %s → %s", ev.From, ev.To)
	case event.OutputDiscarded:
		if w.opts.Verbose {
			w.progress("↻ retrying the model call (%s)", ev.Text)
		}
	case event.ContextCompacted:
		if w.opts.Verbose && ev.Compaction != nil {
			w.progress("⋯ context compacted %d → %d tokens (%s)", ev.Compaction.TokensBefore, ev.Compaction.TokensAfter, strings.Join(ev.Compaction.Stages, ", "))
		}
	case event.UserMessageInjected:
		w.progress("» %s", textutil.Clip(termtext.String(ev.Text), 120))
	case event.TurnStarted:
		if w.opts.Verbose {
			w.progress("— turn %d (%s)", ev.Turn, ev.Agent)
		}
	case event.RunCompleted, event.RunFailed:
		w.term = &ev
	}
	return nil
}

func (w *textWriter) Finish(res *runtime.Result, err error) error {
	s := Summarize(w.term, res, err)
	out := s.Output
	if len(s.StructuredOutput) > 0 {
		var v any
		if json.Unmarshal(s.StructuredOutput, &v) == nil {
			b, _ := json.MarshalIndent(v, "", "  ")
			out = string(b)
		}
	}
	if s.Status == "completed" && out != "" {
		// The answer is model text: sanitized like everything else shown to a person
		// (--output json keeps the original, escaped by JSON).
		if _, err := io.WriteString(w.out, strings.TrimRight(termtext.String(out), "\n")+"\n"); err != nil {
			return err
		}
	}
	if len(w.denied) > 0 && !w.opts.Progress && !w.opts.Verbose && !w.opts.Quiet {
		var what []string
		for _, d := range w.denied {
			what = append(what, textutil.Clip(termtext.String(d.Summary), 80))
		}
		fmt.Fprintf(w.err, "lovia: denied %d action(s) that needed approval (rerun with --approve all to allow): %s\n",
			len(w.denied), termtext.String(strings.Join(what, "; ")))
	}
	if w.opts.Verbose {
		cost := "cost unknown"
		if s.CostUSD != nil {
			cost = "$" + usage.FormatUSD(*s.CostUSD)
		}
		w.progress("· %s in %d turns, %d in / %d out tokens (%d cached), %s", s.Status, s.Turns,
			s.Usage.InputTokens, s.Usage.OutputTokens, s.Usage.CachedInputTokens, cost)
	}
	return nil
}
