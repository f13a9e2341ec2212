package sqlite

import (
	"context"
	"testing"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// FuzzDecodeEntries: any bytes in an entries row decode or fail, never panic.
func FuzzDecodeEntries(f *testing.F) {
	for _, s := range []string{
		`[]`, `[{"type":"input","role":"user","text":"hi"}]`,
		`[{"type":"tool_call","call_id":"c","name":"n","args":{"a":[1,2]}}]`,
		`[{"type":"tool_result","attachments":[{"mime":"image/png","data":"AAEC"}]}]`,
		`[{"type":"x"}]`, `{`, `null`, `[null]`, `[{"args":"not json"}]`, "\x00\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		es, err := decodeEntries(data)
		if err != nil {
			return
		}
		for _, e := range es {
			switch e.Type {
			case transcript.TypeInput, transcript.TypeAssistantText, transcript.TypeReasoning,
				transcript.TypeToolCall, transcript.TypeToolResult:
			default:
				t.Fatalf("accepted entry type %q", e.Type)
			}
		}
	})
}

// FuzzLoadDamagedRow stores arbitrary bytes as a checkpoint batch and a session
// segment and loads them through the public API: an error of kind store or a clean
// load, never a panic. Under -fuzz the coverage instrumentation of the transpiled
// SQLite makes this target very slow; FuzzDecodeEntries fuzzes the same parser fast.
func FuzzLoadDamagedRow(f *testing.F) {
	f.Add([]byte(`[{"type":"input","text":"ok"}]`))
	f.Add([]byte(`[{"type":"input","text":`))
	f.Add([]byte{0xde, 0xad, 0xbe, 0xef})
	db := openTest(f)
	ctx := context.Background()
	if err := db.Checkpoints().Append(ctx, "r", []transcript.Entry{transcript.UserInput("x")}, running("a")); err != nil {
		f.Fatal(err)
	}
	if err := db.Sessions().Append(ctx, "s", "r", []transcript.Entry{transcript.UserInput("x")}, nil); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := db.sql.ExecContext(ctx, `UPDATE run_batches SET entries = ?`, data); err != nil {
			t.Fatal(err)
		}
		if _, err := db.sql.ExecContext(ctx, `UPDATE session_runs SET entries = ?`, data); err != nil {
			t.Fatal(err)
		}
		if snap, err := db.Checkpoints().Load(ctx, "r"); err != nil {
			if errs.KindOf(err) != errs.KindStore {
				t.Fatalf("Load: kind %s: %v", errs.KindOf(err), err)
			}
		} else if len(snap.Entries) != 1 {
			// The head says one entry: any other count must have been refused.
			t.Fatalf("Load accepted %d entries against a head of 1", len(snap.Entries))
		}
		if _, err := db.Sessions().Load(ctx, "s"); err != nil && errs.KindOf(err) != errs.KindStore {
			t.Fatalf("session Load: kind %s: %v", errs.KindOf(err), err)
		}
	})
}
