package e2e

// Crash tests: the binary is killed with SIGKILL at many points of a scripted run and
// resumed until the run completes. What they assert, and why:
//
//   - Every run completes (lovia resume, or lovia run --run-id when the kill came
//     before the first checkpoint, so no run exists yet).
//   - A tool call whose RESULT was checkpointed never runs again: its side-effect
//     count, taken when the result is first seen in the database after a kill, is its
//     final count.
//   - A call may run once more only if a kill found its side effect on disk without a
//     checkpointed result (killed mid-call, or between the call and the result
//     write): final count <= 1 + such kills, and >= 1.
//   - A side effect never precedes the checkpoint of the reply that asked for it (the
//     call is in the database before the tool runs).
//   - The final transcript has every scripted reply once, in order, every call once
//     with exactly one result after it (no duplicates, no orphans); the session holds
//     the run once; PRAGMA integrity_check passes.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/store/sqlite"
	"github.com/lovia-dev/lovia/internal/transcript"
)

var (
	crashTexts  = []string{"turn-1", "turn-2", "turn-3", "turn-4", "done"}
	crashLabels = []string{"c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"}
	reLabel     = regexp.MustCompile(`\bc\d+\b`)
)

// killPlan says when to SIGKILL one attempt: at the nth event of type on (counted
// within the attempt) plus after, or — on empty — after a fixed delay from the start.
type killPlan struct {
	on    string
	nth   int
	after time.Duration
}

func (p killPlan) String() string {
	if p.on == "" {
		return fmt.Sprintf("at %v", p.after)
	}
	return fmt.Sprintf("%v after %s #%d", p.after, p.on, p.nth)
}

// crashRun is one run being killed and resumed.
type crashRun struct {
	t      *testing.T
	e      *env
	runID  string
	script string
	// frozen: a call's side-effect count when its result was first seen checkpointed.
	frozen map[string]int
	// inflight: kills that found a call's side effect without its checkpointed result.
	inflight map[string]int
	attempts int
	log      []string
}

func newCrashRun(t *testing.T, runID string) *crashRun {
	e := newEnv(t)
	body, err := os.ReadFile(filepath.Join("testdata", "crash", "multi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	e.write("script.yaml", string(body))
	return &crashRun{t: t, e: e, runID: runID, script: "script:script.yaml", frozen: map[string]int{}, inflight: map[string]int{}}
}

func (c *crashRun) dbPath() string { return filepath.Join(c.e.home, "data", "lovia.db") }

func (c *crashRun) fail(format string, args ...any) {
	c.t.Helper()
	c.t.Fatalf("%s\nattempts:\n  %s", fmt.Sprintf(format, args...), strings.Join(c.log, "\n  "))
}

// attempt starts lovia on the run — `lovia run --run-id` when no checkpoint exists,
// else `lovia resume` with no flags (the run's own model, --approve and --output are
// restored) — and kills it per plan (nil: never). It reports whether the run ended on
// its own, with its exit code and events.
func (c *crashRun) attempt(plan *killPlan) (ended bool, code int, events []map[string]any, stderr string) {
	c.t.Helper()
	c.attempts++
	args := []string{"resume", c.runID}
	if !c.exists() {
		args = []string{"run", "--run-id", c.runID, "--approve", "all", "-m", c.script, "--output", "stream-json", "do the work"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = c.e.dir, c.e.vars
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.StdoutPipe()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	start := time.Now()
	var mu sync.Mutex
	killed := false
	kill := func() {
		mu.Lock()
		defer mu.Unlock()
		if !killed {
			killed = true
			_ = cmd.Process.Signal(syscall.SIGKILL)
		}
	}
	if plan != nil && plan.on == "" {
		timer := time.AfterFunc(plan.after, kill)
		defer timer.Stop()
	}
	seen := 0
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var v map[string]any
		if json.Unmarshal(sc.Bytes(), &v) != nil {
			continue // a line cut by the kill
		}
		events = append(events, v)
		if plan != nil && plan.on != "" && v["type"] == plan.on {
			if seen++; seen == plan.nth {
				if plan.after == 0 {
					kill()
				} else {
					time.AfterFunc(plan.after, kill)
				}
			}
		}
	}
	_ = cmd.Wait()
	code = cmd.ProcessState.ExitCode()
	mu.Lock()
	wasKilled := killed
	mu.Unlock()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	ended = !(wasKilled && ws.Signaled())
	what := "ended"
	if !ended {
		what = "killed"
	}
	c.log = append(c.log, fmt.Sprintf("%s (plan %v): %s after %v, exit %d, %d events", args[0], plan, what, time.Since(start).Round(time.Millisecond), code, len(events)))
	return ended, code, events, errb.String()
}

func (c *crashRun) openDB() *sqlite.DB {
	c.t.Helper()
	db, err := sqlite.Open(context.Background(), c.dbPath())
	if err != nil {
		c.fail("opening the database after a kill: %v", err)
	}
	return db
}

// exists reports whether the run has a checkpoint.
func (c *crashRun) exists() bool {
	if _, err := os.Stat(c.dbPath()); err != nil {
		return false
	}
	db := c.openDB()
	defer db.Close()
	_, err := db.Checkpoints().Load(context.Background(), c.runID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		c.fail("loading run %s: %v", c.runID, err)
	}
	return err == nil
}

// sideEffects counts side.log lines per call label.
func (c *crashRun) sideEffects() map[string]int {
	data, err := os.ReadFile(filepath.Join(c.e.dir, "side.log"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		c.t.Fatal(err)
	}
	n := map[string]int{}
	for _, l := range strings.Fields(string(data)) {
		n[l]++
	}
	return n
}

// inspect checks the database against the side effects after an attempt.
func (c *crashRun) inspect() {
	c.t.Helper()
	counts := c.sideEffects()
	if _, err := os.Stat(c.dbPath()); err != nil {
		if len(counts) > 0 {
			c.fail("side effects %v but no database", counts)
		}
		return
	}
	db := c.openDB()
	defer db.Close()
	if err := db.Check(context.Background()); err != nil {
		c.fail("integrity check after a kill: %v", err)
	}
	snap, err := db.Checkpoints().Load(context.Background(), c.runID)
	if errors.Is(err, store.ErrNotFound) {
		if len(counts) > 0 {
			c.fail("side effects %v but no checkpoint", counts)
		}
		return
	}
	if err != nil {
		c.fail("loading the checkpoint after a kill: %v", err)
	}
	called, answered := map[string]bool{}, map[string]bool{}
	label := map[string]string{}
	for _, en := range snap.Entries {
		switch en.Type {
		case transcript.TypeToolCall:
			l := reLabel.FindString(string(en.Args))
			label[en.CallID] = l
			called[l] = true
		case transcript.TypeToolResult:
			answered[label[en.CallID]] = true
		}
	}
	for l, n := range counts {
		if !called[l] {
			c.fail("call %s ran (%d times) before the reply asking for it was checkpointed", l, n)
		}
		if !answered[l] {
			c.inflight[l]++
		}
	}
	for l := range answered {
		if f, ok := c.frozen[l]; !ok {
			c.frozen[l] = counts[l]
		} else if counts[l] != f {
			c.fail("call %s ran again after its result was checkpointed: %d side effects, %d when the result was stored", l, counts[l], f)
		}
	}
}

// finish checks a completed run: side effects, transcript, session, integrity.
func (c *crashRun) finish() {
	c.t.Helper()
	counts := c.sideEffects()
	for _, l := range crashLabels {
		n := counts[l]
		if n < 1 || n > 1+c.inflight[l] {
			c.fail("call %s ran %d times; allowed 1..%d (%d kills found it in flight)", l, n, 1+c.inflight[l], c.inflight[l])
		}
		if f, ok := c.frozen[l]; ok && n != f {
			c.fail("call %s ran %d times, %d when its result was stored", l, n, f)
		}
	}
	r := c.e.run(nil, "runs", "show", c.runID, "--json")
	if r.code != 0 {
		c.fail("runs show: exit %d: %s", r.code, r.stderr)
	}
	var d struct {
		Status    string             `json:"status"`
		SessionID string             `json:"session_id"`
		Entries   []transcript.Entry `json:"entries"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		c.fail("runs show --json: %v", err)
	}
	if d.Status != "completed" {
		c.fail("status %s", d.Status)
	}
	if msg := checkTranscript(d.Entries, crashTexts, crashLabels); msg != "" {
		c.fail("final transcript: %s\n%s", msg, dumpEntries(d.Entries))
	}
	db := c.openDB()
	defer db.Close()
	ctx := context.Background()
	if err := db.Check(ctx); err != nil {
		c.fail("integrity: %v", err)
	}
	segs, err := db.Sessions().SessionRuns(ctx, d.SessionID)
	if err != nil || len(segs) != 1 || segs[0].RunID != c.runID || segs[0].Entries != len(d.Entries) {
		c.fail("session %s segments %+v (err %v), want one of run %s with %d entries", d.SessionID, segs, err, c.runID, len(d.Entries))
	}
	hist, err := db.Sessions().Load(ctx, d.SessionID)
	if err != nil {
		c.fail("session load: %v", err)
	}
	if msg := checkTranscript(hist, crashTexts, crashLabels); msg != "" {
		c.fail("session transcript: %s", msg)
	}
}

// checkTranscript returns what is wrong with entries ("" if nothing): one user input
// first, the assistant texts in order, each call (by label, in order) once with
// exactly one result after it, no result without a call, no synthetic entries.
func checkTranscript(entries []transcript.Entry, texts, labels []string) string {
	var gotTexts, gotLabels []string
	callAt := map[string]int{}
	results := map[string]int{}
	users := 0
	for i, en := range entries {
		if en.Synthetic {
			return fmt.Sprintf("entry %d is synthetic", i+1)
		}
		switch en.Type {
		case transcript.TypeInput:
			if en.IsUser() {
				users++
				if i != 0 {
					return fmt.Sprintf("user input at entry %d", i+1)
				}
			}
		case transcript.TypeAssistantText:
			gotTexts = append(gotTexts, en.Text)
		case transcript.TypeToolCall:
			if _, dup := callAt[en.CallID]; dup {
				return fmt.Sprintf("call %s appears twice", en.CallID)
			}
			callAt[en.CallID] = i
			gotLabels = append(gotLabels, reLabel.FindString(string(en.Args)))
		case transcript.TypeToolResult:
			at, ok := callAt[en.CallID]
			if !ok {
				return fmt.Sprintf("result %s (entry %d) has no call before it", en.CallID, i+1)
			}
			if at > i {
				return fmt.Sprintf("result %s before its call", en.CallID)
			}
			if en.IsError {
				return fmt.Sprintf("result %s is an error: %s", en.CallID, en.Text)
			}
			results[en.CallID]++
		}
	}
	if users != 1 {
		return fmt.Sprintf("%d user inputs, want 1", users)
	}
	if !slices.Equal(gotTexts, texts) {
		return fmt.Sprintf("assistant texts %q, want %q", gotTexts, texts)
	}
	if !slices.Equal(gotLabels, labels) {
		return fmt.Sprintf("calls %q, want %q", gotLabels, labels)
	}
	for id := range callAt {
		if results[id] != 1 {
			return fmt.Sprintf("call %s has %d results", id, results[id])
		}
	}
	return ""
}

func dumpEntries(entries []transcript.Entry) string {
	var b strings.Builder
	for i, en := range entries {
		fmt.Fprintf(&b, "  %d %s %s %s %.60q\n", i+1, en.Type, en.CallID, en.Args, en.Text)
	}
	return b.String()
}

// randomPlan draws a kill point of the given kind.
func randomPlan(rng *rand.Rand, kind string) killPlan {
	ms := func(n int) time.Duration { return time.Duration(rng.IntN(n+1)) * time.Millisecond }
	switch kind {
	case "model stream": // inside a model call (the script's delay) or its streaming
		return killPlan{on: "turn_started", nth: 1 + rng.IntN(3), after: ms(140)}
	case "tool running": // between a call's start and its result (sleeps of c3, c4)
		return killPlan{on: "tool_call_started", nth: 1 + rng.IntN(5), after: ms(320)}
	case "checkpoint write": // the reply or a result is being checkpointed
		on := "tool_call_completed"
		if rng.IntN(2) == 0 {
			on = "message_completed"
		}
		return killPlan{on: on, nth: 1 + rng.IntN(4), after: ms(3)}
	}
	return killPlan{after: ms(1600)} // anywhere, start-up included
}

func TestCrashResume(t *testing.T) {
	kinds := []string{"model stream", "tool running", "checkpoint write", "random"}
	scenarios, kills := 16, 3
	if testing.Short() {
		scenarios, kills = 4, 2
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("LOVIA_CRASH_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	t.Logf("seed %d (LOVIA_CRASH_SEED=%d reproduces the kill points)", seed, seed)
	var mu sync.Mutex
	totalKills, totalAttempts := 0, 0
	t.Cleanup(func() { t.Logf("%d scenarios, %d attempts, %d kills", scenarios, totalAttempts, totalKills) })
	for i := range scenarios {
		kind := kinds[i%len(kinds)]
		t.Run(fmt.Sprintf("%s/%d", kind, i), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			c := newCrashRun(t, fmt.Sprintf("crash-%d", i))
			killed := 0
			for range kills {
				p := randomPlan(rng, kind)
				ended, code, _, stderr := c.attempt(&p)
				c.inspect()
				if ended {
					if code != 0 {
						c.fail("attempt ended with exit %d: %s", code, stderr)
					}
					break
				}
				killed++
			}
			// Resume until completed; a resume that is killed by nobody must complete.
			ended, code, events, stderr := c.attempt(nil)
			c.inspect()
			if !ended || code != 0 {
				c.fail("final attempt: exit %d: %s", code, stderr)
			}
			if n := len(events); n == 0 || events[n-1]["type"] != "run_completed" {
				c.fail("final attempt did not end with run_completed (output format not restored?): %v", events)
			}
			c.finish()
			t.Logf("attempts:\n  %s\nin flight at a kill: %v", strings.Join(c.log, "\n  "), c.inflight)
			mu.Lock()
			totalKills += killed
			totalAttempts += c.attempts
			mu.Unlock()
		})
	}
}
