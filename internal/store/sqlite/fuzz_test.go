package sqlite

import (
	"context"
	"encoding/json"
	"reflect"
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

// FuzzFastDecodeMatchesStdlib: whenever the fast decoder accepts input, encoding/json
// decodes the same entries from it.
func FuzzFastDecodeMatchesStdlib(f *testing.F) {
	full, _ := json.Marshal([]transcript.Entry{{
		Type: transcript.TypeToolResult, RunID: "r", Agent: "a", Role: "user", Text: "line\n\t\"quoted\" \\ é 日本 \u2028 </script> & <b>",
		Signature: "sig", Encrypted: "enc", ProviderID: "p1", Provider: "anthropic", CallID: "c1", Name: "n",
		Args: json.RawMessage(`{"a":[1,2.5e3,"x\"y",true,null,{}]}`), IsError: true, Truncated: true, Synthetic: true,
	}, transcript.UserInput("plain"), transcript.ToolCall("c2", "t", nil)})
	for _, s := range []string{
		string(full), `[]`, ` [ ] `, `[{}]`, `[{"type":"input","text":"a\u0041\u00e9"}]`, `[{"type":"input","text":"\ud83d\ude00"}]`,
		`[{"Type":"input"}]`, `[{"type":"input","text":null}]`, `[{"type":"input","args":null}]`, `[{"type":"input","args":[1,}]`,
		`[{"type":"input","text":"a"},]`, `[{"type":"input","text":"\x80"}]`, `[{"type":"input","is_error":true,"is_error":false}]`,
		`[{"type":"input","args":  {"k" : "v"}  }]`, `[{"type":"input","args":12}]`, `[{"type":"input","args":-}]`,
		`[{"type":"input","attachments":[{"mime":"image/png","data":"AAE="}]}]`, `[{"type":"input"}] x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast []transcript.Entry
		if !fastDecodeEntries(data, &fast) {
			return
		}
		var std []transcript.Entry
		if err := json.Unmarshal(data, &std); err != nil {
			t.Fatalf("fast decoder accepted what encoding/json refuses (%v): %q", err, data)
		}
		if len(fast) != len(std) || (len(fast) > 0 && !reflect.DeepEqual(fast, std)) {
			t.Fatalf("fast %+v\nstd  %+v\ninput %q", fast, std, data)
		}
	})
}
