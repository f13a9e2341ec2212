package sqlite

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// Child processes: the test binary re-executes itself with helperEnv set to a mode;
// parameters travel in LOVIA_SQLITE_TEST_* variables.

func runHelper(mode string) int {
	ctx := context.Background()
	db, err := Open(ctx, os.Getenv("LOVIA_SQLITE_TEST_DB"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	defer db.Close()
	switch mode {
	case "writer":
		err = helperWriter(ctx, db)
	case "crasher":
		err = helperCrasher(ctx, db)
	case "holder":
		err = helperHolder(ctx, db)
	default:
		err = fmt.Errorf("unknown helper mode %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, mode+":", err)
		return 1
	}
	return 0
}

// helperWriter appends N one-entry batches to its own run and N/5 segments to a
// shared session, all while another writer does the same.
func helperWriter(ctx context.Context, db *DB) error {
	id := os.Getenv("LOVIA_SQLITE_TEST_ID")
	n, _ := strconv.Atoi(os.Getenv("LOVIA_SQLITE_TEST_N"))
	cp, ss := db.Checkpoints(), db.Sessions()
	run := "w-" + id
	for i := 0; i < n; i++ {
		h := running("a")
		h.Turns = i + 1
		if err := cp.Append(ctx, run, []transcript.Entry{transcript.AssistantText(strconv.Itoa(i))}, h); err != nil {
			return err
		}
		if i%5 == 0 {
			seg := []transcript.Entry{transcript.UserInput(fmt.Sprintf("%s-%d", id, i))}
			if err := ss.Append(ctx, "shared", fmt.Sprintf("%s-%d", run, i), seg, nil); err != nil {
				return err
			}
		}
	}
	h := running("a")
	h.Status, h.Turns = store.StatusCompleted, n
	return cp.Append(ctx, run, nil, h)
}

// helperCrasher appends checkpoint batches as fast as it can until it is killed.
// Every entry names its batch and its place in it ("b<batch>/<pos>/<size>") so the
// parent can tell a partial batch; the head counts entries (Turns) and batches
// (LastInputTokens) so the parent can check that head and entries agree.
func helperCrasher(ctx context.Context, db *DB) error {
	prefix := os.Getenv("LOVIA_SQLITE_TEST_ID")
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), uint64(time.Now().UnixNano())))
	cp, ss := db.Checkpoints(), db.Sessions()
	pad := strings.Repeat("lorem ipsum dolor sit amet ", 80)
	for r := 0; ; r++ {
		run := fmt.Sprintf("%s-r%d", prefix, r)
		total := 0
		nb := 1 + rng.IntN(30)
		for b := 0; b < nb; b++ {
			size := 1 + rng.IntN(6)
			batch := make([]transcript.Entry, size)
			for p := range batch {
				batch[p] = transcript.ToolResult(fmt.Sprintf("b%d/%d/%d", b, p, size), "t", strconv.Itoa(total+p)+" "+pad[:rng.IntN(len(pad))], false)
			}
			total += size
			h := running("a")
			h.SessionID = prefix
			h.Turns, h.LastInputTokens = total, b+1
			if err := cp.Append(ctx, run, batch, h); err != nil {
				return err
			}
			if r == 0 && b == 0 {
				fmt.Println("ready")
			}
		}
		h := running("a")
		h.SessionID = prefix
		h.Status, h.Turns, h.LastInputTokens = store.StatusCompleted, total, nb
		if err := cp.Append(ctx, run, nil, h); err != nil {
			return err
		}
		snap, err := cp.Load(ctx, run)
		if err != nil {
			return err
		}
		if err := ss.Append(ctx, prefix, run, snap.Entries, nil); err != nil {
			return err
		}
	}
}

// helperHolder claims a run and holds it until its stdin closes.
func helperHolder(ctx context.Context, db *DB) error {
	release, err := db.Claim(ctx, os.Getenv("LOVIA_SQLITE_TEST_ID"))
	if err != nil {
		return err
	}
	defer release()
	h := running("a")
	h.SessionID = "held-session"
	if err := db.Checkpoints().Append(ctx, os.Getenv("LOVIA_SQLITE_TEST_ID"), []transcript.Entry{transcript.UserInput("hi")}, h); err != nil {
		return err
	}
	fmt.Println("held")
	io.Copy(io.Discard, os.Stdin)
	return nil
}

func helperCmd(t testing.TB, mode, dbPath, id string, extra ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "LOVIA_SQLITE_TEST_DB="+dbPath, "LOVIA_SQLITE_TEST_ID="+id)
	cmd.Env = append(cmd.Env, extra...)
	cmd.Stderr = &lockedBuffer{}
	return cmd
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitLine starts cmd and waits until it prints want on stdout.
func waitLine(t testing.TB, cmd *exec.Cmd, want string) {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(s)
		io.Copy(io.Discard, out)
	}()
	select {
	case got := <-line:
		if got != want {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child said %q, want %q; stderr: %s", got, want, cmd.Stderr)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child never said %q; stderr: %s", want, cmd.Stderr)
	}
}

func TestTwoProcessesWriteConcurrently(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	ctx := ctxT(t)
	path := filepath.Join(t.TempDir(), "lovia.db")
	openAt(t, path).Close() // create and migrate first, so the children race on data only
	const n = 150
	var cmds []*exec.Cmd
	for _, id := range []string{"A", "B"} {
		cmd := helperCmd(t, "writer", path, id, "LOVIA_SQLITE_TEST_N="+strconv.Itoa(n))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer failed: %v; stderr: %s", err, cmd.Stderr)
		}
	}
	db := openAt(t, path)
	if err := db.Check(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"A", "B"} {
		snap, err := db.Checkpoints().Load(ctx, "w-"+id)
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.Entries) != n || snap.Head.Status != store.StatusCompleted || snap.Head.Turns != n {
			t.Fatalf("run w-%s: %d entries, head %+v", id, len(snap.Entries), snap.Head)
		}
		for i, e := range snap.Entries {
			if e.Text != strconv.Itoa(i) {
				t.Fatalf("run w-%s entry %d = %q", id, i, e.Text)
			}
		}
	}
	hist, err := db.Sessions().Load(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	next := map[string]int{"A": 0, "B": 0}
	for _, e := range hist {
		id, num, _ := strings.Cut(e.Text, "-")
		if want := strconv.Itoa(next[id]); num != want {
			t.Fatalf("session segment %q out of order, want %s-%s", e.Text, id, want)
		}
		next[id] += 5
	}
	if next["A"] != n || next["B"] != n {
		t.Errorf("session segments lost: %v", next)
	}
}

// TestKillDuringCheckpointWrites SIGKILLs a child appending checkpoints at random
// moments, then checks that the database opens, passes integrity_check, and that
// every run holds whole batches only, agreeing with its head.
func TestKillDuringCheckpointWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	ctx := ctxT(t)
	path := filepath.Join(t.TempDir(), "lovia.db")
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	const iterations = 8
	for it := 0; it < iterations; it++ {
		cmd := helperCmd(t, "crasher", path, fmt.Sprintf("k%d", it))
		waitLine(t, cmd, "ready")
		time.Sleep(time.Duration(rng.IntN(120)) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		if s := cmd.Stderr.(*lockedBuffer).String(); s != "" {
			t.Fatalf("crasher reported an error before the kill: %s", s)
		}

		db, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("iteration %d: open after kill: %v", it, err)
		}
		if err := db.Check(ctx); err != nil {
			t.Fatalf("iteration %d: %v", it, err)
		}
		runs, err := db.Checkpoints().ListRuns(ctx, RunFilter{SessionID: fmt.Sprintf("k%d", it)})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) == 0 {
			t.Fatalf("iteration %d: no runs although the child reported a first checkpoint", it)
		}
		for _, ri := range runs {
			snap, err := db.Checkpoints().Load(ctx, ri.ID)
			if err != nil {
				t.Fatalf("load %s: %v", ri.ID, err)
			}
			verifyCrashRun(t, snap)
			switch snap.Head.Status {
			case store.StatusCompleted:
			case store.StatusInterrupted: // the killed run
				// A dead holder no longer blocks anyone: this process may take it.
				release, err := db.Claim(ctx, ri.ID)
				if err != nil {
					t.Fatalf("claim of a dead run: %v", err)
				}
				release()
			default:
				t.Errorf("run %s status %s after its process died", ri.ID, snap.Head.Status)
			}
		}
		// Session segments are whole too: each is a completed run's full entry list.
		hist, err := db.Sessions().Load(ctx, fmt.Sprintf("k%d", it))
		if err != nil {
			t.Fatal(err)
		}
		verifyCrashEntries(t, "session", hist, true)
		db.Close()
	}
}

func verifyCrashRun(t *testing.T, snap *store.Snapshot) {
	t.Helper()
	batches := verifyCrashEntries(t, snap.RunID, snap.Entries, false)
	if snap.Head.Turns != len(snap.Entries) || snap.Head.LastInputTokens != batches {
		t.Fatalf("run %s: head says %d entries in %d batches, stored %d in %d",
			snap.RunID, snap.Head.Turns, snap.Head.LastInputTokens, len(snap.Entries), batches)
	}
}

// verifyCrashEntries checks that entries are whole batches numbered from 0 (restarting
// at each run when multiRun) and returns the number of batches.
func verifyCrashEntries(t *testing.T, what string, entries []transcript.Entry, multiRun bool) int {
	t.Helper()
	batch, total := 0, 0
	for i := 0; i < len(entries); {
		var b, p, size int
		if _, err := fmt.Sscanf(entries[i].CallID, "b%d/%d/%d", &b, &p, &size); err != nil {
			t.Fatalf("%s entry %d: bad id %q", what, i, entries[i].CallID)
		}
		if multiRun && b == 0 && p == 0 {
			batch, total = 0, 0
		}
		if b != batch || p != 0 || i+size > len(entries) {
			t.Fatalf("%s: entry %d starts batch %d/%d (size %d), want batch %d; %d entries", what, i, b, p, size, batch, len(entries))
		}
		for q := 0; q < size; q++ {
			e := entries[i+q]
			if e.CallID != fmt.Sprintf("b%d/%d/%d", b, q, size) || !strings.HasPrefix(e.Text, strconv.Itoa(total+q)+" ") {
				t.Fatalf("%s: partial or reordered batch at entry %d: %q", what, i+q, e.CallID)
			}
		}
		i += size
		total += size
		batch++
	}
	return batch
}

// TestLivenessAcrossProcesses uses a real second process holding a run.
func TestLivenessAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	ctx := ctxT(t)
	path := filepath.Join(t.TempDir(), "lovia.db")
	db := openAt(t, path)
	cp := db.Checkpoints()
	cmd := helperCmd(t, "holder", path, "held-run")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	waitLine(t, cmd, "held")

	// While the holder lives: running, and nobody else may write or take the run.
	ri, err := cp.GetRun(ctx, "held-run")
	if err != nil {
		t.Fatal(err)
	}
	if ri.Status != store.StatusRunning || ri.Holder == nil || ri.Holder.PID != cmd.Process.Pid {
		t.Fatalf("held run: %+v", ri)
	}
	snap, _ := cp.Load(ctx, "held-run")
	if snap.Head.Status != store.StatusRunning || snap.Head.PID != cmd.Process.Pid {
		t.Errorf("Load of a held run: status %s pid %d", snap.Head.Status, snap.Head.PID)
	}
	for name, op := range map[string]func() error{
		"Claim":  func() error { _, err := db.Claim(ctx, "held-run"); return err },
		"Append": func() error { return cp.Append(ctx, "held-run", nil, running("a")) },
		"Delete": func() error { return cp.DeleteRun(ctx, "held-run") },
		"Reset":  func() error { return cp.Reset(ctx, "held-run") },
		"DeleteSession": func() error {
			return db.Sessions().DeleteSession(ctx, "held-session")
		},
	} {
		err := op()
		if errs.KindOf(err) != errs.KindRunConflict || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", cmd.Process.Pid)) {
			t.Errorf("%s of a held run: %v", name, err)
		}
	}

	// kill -9: the claim row stays, but the holder is dead.
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	stdin.Close()
	ri, _ = cp.GetRun(ctx, "held-run")
	if ri.Status != store.StatusInterrupted || ri.StoredStatus != store.StatusRunning || ri.Holder != nil {
		t.Fatalf("after kill -9: %+v", ri)
	}
	list, _ := cp.ListRuns(ctx, RunFilter{Status: store.StatusInterrupted})
	if len(list) != 1 || list[0].ID != "held-run" {
		t.Errorf("ListRuns(interrupted) = %+v", list)
	}
	if err := cp.Append(ctx, "held-run", []transcript.Entry{transcript.AssistantText("resumed")}, running("a")); err != nil {
		t.Fatalf("resume after the holder died: %v", err)
	}
	ri, _ = cp.GetRun(ctx, "held-run")
	if ri.Status != store.StatusRunning || ri.Holder == nil || ri.Holder.PID != os.Getpid() {
		t.Errorf("after takeover: %+v", ri)
	}
}
