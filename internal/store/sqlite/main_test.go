package sqlite

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// helperEnv selects a child-process mode when the test binary re-executes itself
// (see process_test.go).
const helperEnv = "LOVIA_SQLITE_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	os.Exit(m.Run())
}

func openTest(t testing.TB) *DB {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "lovia.db"))
}

func openAt(t testing.TB, path string) *DB {
	t.Helper()
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func running(agent string) store.Head {
	return store.Head{Status: store.StatusRunning, Agent: agent, EntryAgent: agent}
}

func toolPair(id, out string) []transcript.Entry {
	return []transcript.Entry{
		transcript.ToolCall(id, "read_file", json.RawMessage(`{"path":"main.go"}`)),
		transcript.ToolResult(id, "read_file", out, false),
	}
}

func texts(es []transcript.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = string(e.Type) + ":" + e.Text
	}
	return out
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}
