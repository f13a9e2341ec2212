package e2e

import (
	"context"
	"database/sql"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// readerCommands only look at the database.
var readerCommands = [][]string{
	{"runs", "--all"},
	{"runs", "show", "reader-1"},
	{"sessions", "--all"},
	{"doctor"},
}

func seedRun(t *testing.T, e *env) {
	t.Helper()
	e.write("script.yaml", "turns:\n  - text: the answer\n")
	if r := e.run(nil, "run", "-m", "script:script.yaml", "--run-id", "reader-1", "go"); r.code != 0 {
		t.Fatalf("seed run: exit %d: %s", r.code, r.stderr)
	}
}

// TestReadersWhileAWriterHoldsTheLock: listings and show work while another process
// holds a write transaction (they never take the write lock).
func TestReadersWhileAWriterHoldsTheLock(t *testing.T) {
	e := newEnv(t)
	seedRun(t, e)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(e.home, "data", "lovia.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, "ROLLBACK")
	for _, args := range readerCommands {
		r := e.run(nil, args...)
		if args[0] == "doctor" {
			if strings.Contains(r.stdout+r.stderr, "locked") {
				t.Errorf("doctor waited on the lock: %s %s", r.stdout, r.stderr)
			}
			continue
		}
		if r.code != 0 || !strings.Contains(r.stdout, "reader-1") && args[0] == "runs" {
			t.Errorf("lovia %v with a writer holding the lock: exit %d\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
		}
	}
	if r := e.run(nil, "sessions", "--all"); r.code != 0 || strings.TrimSpace(r.stdout) == "" {
		t.Errorf("sessions: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
}

// TestReadersOnReadOnlyHome: the same commands work when LOVIA_HOME is read-only
// (a read-only bind mount in a private mount namespace, so root cannot cheat).
func TestReadersOnReadOnlyHome(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare (util-linux) is not installed")
	}
	e := newEnv(t)
	seedRun(t, e)
	data := filepath.Join(e.home, "data")
	probe := exec.Command("unshare", "-rm", "sh", "-c", `mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && ! touch "$1/x" 2>/dev/null`, "sh", data)
	if out, err := probe.CombinedOutput(); err != nil {
		t.Skipf("cannot make a read-only bind mount here: %v %s", err, out)
	}
	for _, args := range append(readerCommands[:3:3], []string{"sessions", "export", "--all"}) {
		if args[1] == "export" {
			continue
		}
		cmd := exec.Command("unshare", append([]string{"-rm", "sh", "-c", `mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"`, "sh", data, bin}, args...)...)
		cmd.Dir, cmd.Env = e.dir, e.vars
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("lovia %v on a read-only LOVIA_HOME: %v\n%s", args, err, out)
			continue
		}
		if args[0] == "runs" && !strings.Contains(string(out), "reader-1") {
			t.Errorf("lovia %v: %s", args, out)
		}
	}
}
