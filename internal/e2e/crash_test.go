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
	// reSideEffect finds the labels (c1..c8: one digit) in side.log.
	reSideEffect = regexp.MustCompile(`c[1-8]`)
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = c.e.dir, c.e.vars
	// A hung lovia prints its goroutines (SIGQUIT) into stderr, which the failure shows.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	// A helper process that outlives lovia (and inherited a pipe) must not hang the
	// test: Wait gives up on the pipes shortly after lovia itself exits.
	cmd.WaitDelay = 3 * time.Second
	var errb bytes.Buffer
	cmd.Stderr = &errb
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
	seen := 0
	var evMu sync.Mutex
	var got []map[string]any
	// Events are parsed as lovia writes them (Write is called by one goroutine).
	cmd.Stdout = &lineWriter{fn: func(line []byte) {
		var v map[string]any
		if json.Unmarshal(line, &v) != nil {
			return // a line cut by the kill
		}
		evMu.Lock()
		got = append(got, v)
		evMu.Unlock()
		if plan != nil && plan.on != "" && v["type"] == plan.on {
			if seen++; seen == plan.nth {
				if plan.after == 0 {
					kill()
				} else {
					time.AfterFunc(plan.after, kill)
				}
			}
		}
	}}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	if plan != nil && plan.on == "" {
		timer := time.AfterFunc(plan.after, kill)
		defer timer.Stop()
	}
	_ = cmd.Wait()
	evMu.Lock()
	events = slices.Clone(got)
	evMu.Unlock()
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

// lineWriter calls fn with each complete line written to it.
type lineWriter struct {
	buf []byte
	fn  func([]byte)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.fn(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
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
	// Labels are counted wherever they stand, not per line: the shell's echo writes
	// its word and the newline separately, so a kill between the two leaves "c1"
	// without its newline and the re-run's "c1" joins it ("c1c1": two executions).
	n := map[string]int{}
	for _, l := range reSideEffect.FindAllString(string(data), -1) {
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

// TestConcurrentWriters runs several lovia processes on one database at once, each
// its own run and session with many checkpoints: nothing is lost.
func TestConcurrentWriters(t *testing.T) {
	procs, turns := 4, 10
	if testing.Short() {
		procs, turns = 2, 4
	}
	base := newEnv(t)
	var script strings.Builder
	script.WriteString("turns:\n")
	var texts, labels []string
	for i := 1; i <= turns; i++ {
		fmt.Fprintf(&script, "  - text: \"t%d\"\n    delay: 30ms\n    tool_calls:\n", i)
		for j := 1; j <= 2; j++ {
			fmt.Fprintf(&script, "      - {name: shell, args: {command: \"echo c%d >> side.log\"}}\n", i*10+j)
			labels = append(labels, fmt.Sprintf("c%d", i*10+j))
		}
		texts = append(texts, fmt.Sprintf("t%d", i))
	}
	script.WriteString("  - text: finished\n")
	texts = append(texts, "finished")

	var wg sync.WaitGroup
	results := make([]result, procs)
	envs := make([]*env, procs)
	for p := range procs {
		e := &env{t: t, dir: filepath.Join(base.dir, fmt.Sprint(p)), home: base.home, vars: base.vars}
		e.write("script.yaml", script.String())
		envs[p] = e
	}
	for p := range procs {
		wg.Go(func() {
			results[p] = envs[p].run(nil, "run", "--run-id", fmt.Sprintf("conc-%d", p), "--approve", "all",
				"-m", "script:script.yaml", "--output", "json", "go")
		})
	}
	wg.Wait()
	db, err := sqlite.Open(context.Background(), filepath.Join(base.home, "data", "lovia.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if err := db.Check(ctx); err != nil {
		t.Fatal(err)
	}
	sessions := map[string]bool{}
	for p, r := range results {
		if r.code != 0 {
			t.Fatalf("process %d: exit %d: %s", p, r.code, r.stderr)
		}
		id := fmt.Sprintf("conc-%d", p)
		snap, err := db.Checkpoints().Load(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if snap.Head.Status != store.StatusCompleted {
			t.Errorf("%s: status %s", id, snap.Head.Status)
		}
		if msg := checkTranscript(snap.Entries, texts, labels); msg != "" {
			t.Errorf("%s: %s", id, msg)
		}
		hist, err := db.Sessions().Load(ctx, snap.Head.SessionID)
		if err != nil || len(hist) != len(snap.Entries) {
			t.Errorf("%s: session %s has %d entries (err %v), run has %d", id, snap.Head.SessionID, len(hist), err, len(snap.Entries))
		}
		sessions[snap.Head.SessionID] = true
		side, _ := os.ReadFile(filepath.Join(envs[p].dir, "side.log"))
		if got := strings.Fields(string(side)); !slices.Equal(got, labels) {
			t.Errorf("%s: side effects %v, want %v", id, got, labels)
		}
	}
	if len(sessions) != procs {
		t.Errorf("%d distinct sessions, want %d", len(sessions), procs)
	}
	r := base.run(nil, "runs", "--all", "--json", "--status", "completed")
	var runs []struct {
		ID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &runs); err != nil || len(runs) != procs {
		t.Errorf("runs --all: %d runs (err %v): %s", len(runs), err, r.stdout)
	}
}

// TestBadDatabaseFile: a file that is not lovia's database gives a clear error and a
// usable exit code from every command, never a panic, and is left untouched.
func TestBadDatabaseFile(t *testing.T) {
	lovia := func(t *testing.T) []byte {
		// A real lovia database, cut in half.
		e := newEnv(t)
		e.write("s.yaml", "turns:\n  - text: ok\n")
		if r := e.run(nil, "run", "-m", "script:s.yaml", "hi"); r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		data, err := os.ReadFile(filepath.Join(e.home, "data", "lovia.db"))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	foreign := func(t *testing.T) []byte {
		// Another program's SQLite database: build it with sqlite itself.
		p := filepath.Join(t.TempDir(), "other.db")
		if out, err := exec.Command("sqlite3", p, "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes(body) VALUES ('x');").CombinedOutput(); err != nil {
			t.Skipf("sqlite3 not available: %v %s", err, out)
		}
		data, _ := os.ReadFile(p)
		return data
	}
	tests := []struct {
		name string
		data func(*testing.T) []byte
		want string
	}{
		{"text file", func(*testing.T) []byte { return []byte("these are my notes\n") }, "not a lovia database"},
		{"random bytes", func(*testing.T) []byte {
			b := make([]byte, 8192)
			for i := range b {
				b[i] = byte(i*7 + i/13)
			}
			return b
		}, "not a lovia database"},
		{"truncated lovia database", func(t *testing.T) []byte {
			d := lovia(t)
			if len(d) < 8192 {
				t.Skip("database too small to truncate meaningfully")
			}
			return d[:len(d)/2]
		}, "lovia.db"},
		{"foreign sqlite database", foreign, "lovia.db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := tt.data(t)
			e := newEnv(t)
			e.write("s.yaml", "turns:\n  - text: ok\n")
			dbPath := filepath.Join(e.home, "data", "lovia.db")
			os.MkdirAll(filepath.Dir(dbPath), 0o700)
			if err := os.WriteFile(dbPath, data, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				{"run", "-m", "script:s.yaml", "hi"},
				{"resume", "run_0123456789abcdef"},
				{"runs"},
				{"runs", "show", "run_0123456789abcdef"},
				{"sessions"},
				{"sessions", "export", "ses_0123456789abcdef"},
			} {
				r := e.run(nil, args...)
				if r.code == 0 || strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine ") {
					t.Errorf("%v: exit %d, stderr:\n%s", args, r.code, r.stderr)
					continue
				}
				if r.code != 1 && r.code != 2 {
					t.Errorf("%v: exit %d, want 1 or 2", args, r.code)
				}
				if !strings.Contains(r.stderr, tt.want) || !strings.Contains(r.stderr, "hint:") {
					t.Errorf("%v: stderr %q lacks %q and a hint", args, r.stderr, tt.want)
				}
			}
			if after, _ := os.ReadFile(dbPath); !bytes.Equal(after, data) {
				t.Errorf("the file was modified")
			}
		})
	}
}

// startStream starts lovia with stream-json output and returns the command and a
// channel of its events (closed at EOF).
func (e *env) startStream(args ...string) (*exec.Cmd, <-chan map[string]any, *bytes.Buffer) {
	e.t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = e.dir, e.vars
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ch := make(chan map[string]any, 64)
	go func() {
		defer close(ch)
		dec := json.NewDecoder(out)
		for {
			var v map[string]any
			if dec.Decode(&v) != nil {
				return
			}
			ch <- v
		}
	}()
	return cmd, ch, &errb
}

func waitEvent(t *testing.T, ch <-chan map[string]any, typ string) map[string]any {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case v, ok := <-ch:
			if !ok {
				t.Fatalf("no %s event before the end of the output", typ)
			}
			if v["type"] == typ {
				return v
			}
		case <-timeout:
			t.Fatalf("timed out waiting for %s", typ)
		}
	}
}

// TestResumeRestoresSettings: lovia resume with no flags continues with the run's
// model, --approve, --output and limits; a typed flag overrides and says so; a
// completed run replays without calling the model.
func TestResumeRestoresSettings(t *testing.T) {
	e := newEnv(t)
	e.write("s.yaml", `turns:
  - text: "working"
    tool_calls:
      - {name: shell, args: {command: "echo c1 >> side.log"}}
  - text: "done"
    delay: 3s
`)
	cmd, events, stderr := e.startStream("run", "--run-id", "job-1", "--approve", "all", "--max-turns", "7",
		"-m", "script:s.yaml", "--output", "stream-json", "go")
	waitEvent(t, events, "tool_call_completed")
	waitEvent(t, events, "turn_started")
	cmd.Process.Signal(syscall.SIGINT)
	for range events {
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 || !strings.Contains(stderr.String(), "lovia resume job-1") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}

	r := e.run(nil, "runs", "--json")
	if !strings.Contains(r.stdout, `"status": "interrupted"`) {
		t.Errorf("runs: %s", r.stdout)
	}

	// No LOVIA_MODEL and no config: only the restored settings can name the model.
	r = e.run(nil, "resume", "job-1", "--max-turns", "9", "--output", "json")
	if r.code != 0 {
		t.Fatalf("resume: exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"--max-turns overrides the run's 7", "--output overrides the run's stream-json"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q lacks %q", r.stderr, want)
		}
	}
	var out struct {
		Status, Output string
		Turns          int
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Status != "completed" || out.Output != "done" || out.Turns < 2 {
		t.Errorf("resume output %+v (err %v): %s", out, err, r.stdout)
	}
	if side, _ := os.ReadFile(filepath.Join(e.dir, "side.log")); string(side) != "c1\n" {
		t.Errorf("side effects %q: the checkpointed call ran again", side)
	}

	// A completed run replays: a model call would now fail. The output format is the
	// one the last resume recorded (json).
	e.write("s.yaml", "turns:\n  - error: {status: 500, message: the model must not be called}\n")
	r = e.run(nil, "resume", "job-1", "-m", "script:other.yaml")
	if r.code != 0 || !strings.Contains(r.stdout, `"output": "done"`) {
		t.Errorf("replay: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "--model overrides the run's script:s.yaml") {
		t.Errorf("stderr %q lacks the --model notice", r.stderr)
	}
	if r = e.run(nil, "resume", "job-1", "--output", "text"); r.code != 0 || r.stdout != "done\n" {
		t.Errorf("replay as text: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestResumeErrors(t *testing.T) {
	e := newEnv(t)
	r := e.run(nil, "resume", "run_doesnotexist")
	if r.code != 2 || !strings.Contains(r.stderr, `no run "run_doesnotexist"`) || !strings.Contains(r.stderr, "lovia runs") {
		t.Errorf("unknown id: exit %d stderr %q", r.code, r.stderr)
	}
	if r = e.run(nil, "resume"); r.code != 2 || !strings.Contains(r.stderr, "one run id") {
		t.Errorf("no id: exit %d stderr %q", r.code, r.stderr)
	}

	// A run held by a live process is refused; once that process is killed -9 the
	// run shows as interrupted and resumes.
	e.write("s.yaml", "turns:\n  - text: \"slow\"\n    delay: 2s\n")
	cmd, events, _ := e.startStream("run", "--run-id", "held", "-m", "script:s.yaml", "--output", "stream-json", "go")
	waitEvent(t, events, "turn_started")
	r = e.run(nil, "resume", "held")
	if r.code != 2 || !strings.Contains(r.stderr, "another lovia process") || !strings.Contains(r.stderr, "hint:") {
		t.Errorf("held run: exit %d stderr %q", r.code, r.stderr)
	}
	if r = e.run(nil, "runs", "show", "held"); !strings.Contains(r.stdout, "running") {
		t.Errorf("runs show while running: %s", r.stdout)
	}
	cmd.Process.Kill()
	cmd.Wait()
	r = e.run(nil, "runs")
	if !regexp.MustCompile(`held\tinterrupted\t`).MatchString(r.stdout) {
		t.Errorf("after kill -9, runs: %q", r.stdout)
	}
	// The run's --output stream-json is restored.
	if r = e.run(nil, "resume", "held"); r.code != 0 || !strings.Contains(r.stdout, `"final_output":"slow"`) {
		t.Errorf("resume after kill: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestSessionsCommands: -c and -s continue sessions; sessions list/show/export/rm.
func TestSessionsCommands(t *testing.T) {
	e := newEnv(t)
	e.write("s.yaml", "turns:\n  - text: \"answer with `code` and a ```fence```\"\n")
	if r := e.run(nil, "run", "-c", "-m", "script:s.yaml", "x"); r.code != 2 || !strings.Contains(r.stderr, "no session to continue") {
		t.Errorf("-c without a session: exit %d %q", r.code, r.stderr)
	}
	for i, args := range [][]string{{"first"}, {"-c", "second"}} {
		if r := e.run(nil, append([]string{"run", "-m", "script:s.yaml"}, args...)...); r.code != 0 {
			t.Fatalf("run %d: exit %d: %s", i, r.code, r.stderr)
		}
	}
	r := e.run(nil, "sessions", "--json")
	var list []struct {
		ID   string `json:"session_id"`
		Runs int    `json:"runs"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 1 || list[0].Runs != 2 {
		t.Fatalf("sessions after run + run -c: %v %s", err, r.stdout)
	}
	id := list[0].ID
	if r = e.run(nil, "run", "-s", id, "-m", "script:s.yaml", "third"); r.code != 0 {
		t.Fatalf("run -s: %d %s", r.code, r.stderr)
	}
	r = e.run(nil, "sessions", "show", id)
	for _, want := range []string{"> first", "> second", "> third", "3 runs", "answer with"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("sessions show lacks %q:\n%s", want, r.stdout)
		}
	}
	r = e.run(nil, "sessions", "export", id)
	users := 0
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var en transcript.Entry
		if err := json.Unmarshal([]byte(line), &en); err != nil {
			t.Fatalf("export line %q: %v", line, err)
		}
		if en.IsUser() {
			users++
		}
	}
	if users != 3 {
		t.Errorf("export has %d user inputs, want 3", users)
	}
	if r = e.run(nil, "sessions", "export", id, "--format", "md", "-o", "conv.md"); r.code != 0 {
		t.Fatalf("export md: %d %s", r.code, r.stderr)
	}
	md, _ := os.ReadFile(filepath.Join(e.dir, "conv.md"))
	if c := strings.Count(string(md), "## User"); c != 3 || !strings.Contains(string(md), "## Assistant") {
		t.Errorf("markdown export (%d user headings):\n%s", c, md)
	}
	if r = e.run(nil, "sessions", "rm", id); r.code != 2 || !strings.Contains(r.stderr, "--yes") {
		t.Errorf("rm without --yes and no terminal: exit %d %q", r.code, r.stderr)
	}
	if r = e.run(nil, "sessions", "rm", id, "--yes"); r.code != 0 {
		t.Errorf("rm --yes: %d %s", r.code, r.stderr)
	}
	if r = e.run(nil, "sessions", "show", id); r.code != 2 || !strings.Contains(r.stderr, "hint:") {
		t.Errorf("show after rm: exit %d %q", r.code, r.stderr)
	}
	if r = e.run(nil, "runs", "--json"); strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("runs of the deleted session remain: %s", r.stdout)
	}
}

// TestResumeSignals: SIGINT / SIGTERM during `lovia resume` leave the run
// interrupted, name the resume command, exit 130 / 143; the run then completes.
func TestResumeSignals(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			e := newEnv(t)
			e.write("s.yaml", "turns:\n  - text: \"slow\"\n    delay: 1500ms\n")
			cmd, events, _ := e.startStream("run", "--run-id", "sig", "-m", "script:s.yaml", "--output", "stream-json", "go")
			waitEvent(t, events, "turn_started")
			cmd.Process.Kill()
			cmd.Wait()

			cmd, events, stderr := e.startStream("resume", "sig")
			waitEvent(t, events, "turn_started")
			cmd.Process.Signal(tc.sig)
			last := waitEvent(t, events, "run_failed")
			cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != tc.code || last["status"] != "interrupted" {
				t.Fatalf("exit %d, last event %v", code, last)
			}
			if !strings.Contains(stderr.String(), "interrupted — continue with: lovia resume sig") {
				t.Errorf("stderr %q", stderr.String())
			}
			r := e.run(nil, "runs", "show", "sig", "--json")
			if !strings.Contains(r.stdout, `"status": "interrupted"`) || !strings.Contains(r.stdout, `"stored_status": "interrupted"`) {
				t.Errorf("runs show: %s", r.stdout)
			}
			if r = e.run(nil, "resume", "sig", "--output", "text"); r.code != 0 || r.stdout != "slow\n" {
				t.Errorf("final resume: exit %d %q %s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// TestConcurrentResumes: two `lovia resume` of the same crashed run started at once:
// one runs it, the other is refused (or, if it came late, replays the result); the
// call left without a result re-runs once, not twice.
func TestConcurrentResumes(t *testing.T) {
	e := newEnv(t)
	e.write("s.yaml", `turns:
  - text: "working"
    tool_calls:
      - {name: shell, args: {command: "echo a >> side.log; sleep 1"}}
  - text: "done"
`)
	cmd, events, _ := e.startStream("run", "--run-id", "twice", "--approve", "all", "-m", "script:s.yaml", "--output", "stream-json", "go")
	waitEvent(t, events, "tool_call_started")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, _ := os.ReadFile(filepath.Join(e.dir, "side.log")); len(b) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()

	var wg sync.WaitGroup
	rs := make([]result, 2)
	for i := range rs {
		wg.Go(func() { rs[i] = e.run(nil, "resume", "twice", "--output", "text") })
	}
	wg.Wait()
	ok, refused := 0, 0
	for _, r := range rs {
		switch {
		case r.code == 0 && r.stdout == "done\n":
			ok++
		case r.code == 2 && strings.Contains(r.stderr, "another lovia process"):
			refused++
		default:
			t.Errorf("resume: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
		}
	}
	if ok < 1 || ok+refused != 2 {
		t.Errorf("%d completed, %d refused", ok, refused)
	}
	if side, _ := os.ReadFile(filepath.Join(e.dir, "side.log")); string(side) != "a\na\n" {
		t.Errorf("side effects %q: the interrupted call must re-run exactly once", side)
	}
}
