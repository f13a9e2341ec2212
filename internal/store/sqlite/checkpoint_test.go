package sqlite

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

func TestCheckpointAppendLoad(t *testing.T) {
	ctx := ctxT(t)
	db := openTest(t)
	cp := db.Checkpoints()

	u1 := usage.Usage{InputTokens: 100, OutputTokens: 20}
	h := running("coder")
	h.SessionID, h.Usage, h.Turns = "s1", u1, 1
	h.Settings = json.RawMessage(`{"model":"anthropic:claude-sonnet-4","preset":"default","flags":{"max_turns":20,"budget_tokens":5000}}`)
	h.ContextState = json.RawMessage(`{"cleared":["c0"]}`)
	steps := []struct {
		entries []transcript.Entry
		head    store.Head
	}{
		{[]transcript.Entry{transcript.SystemInput("sys"), transcript.UserInput("hi")}, h},
		{toolPair("c1", "package main")[:1], h},
		{nil, h}, // head-only append
		{toolPair("c1", "package main")[1:], h},
		{[]transcript.Entry{{Type: transcript.TypeAssistantText, Text: "marker", Synthetic: true}, transcript.AssistantText("done")}, h},
	}
	for i, s := range steps {
		s.head.Turns = i + 1
		if err := cp.Append(ctx, "run-1", s.entries, s.head); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	snap, err := cp.Load(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	want := "input:sys|input:hi|tool_call:|tool_result:package main|assistant_text:done"
	if got := strings.Join(texts(snap.Entries), "|"); got != want {
		t.Errorf("entries = %s, want %s (synthetic dropped)", got, want)
	}
	if snap.RunID != "run-1" || snap.Head.Turns != 5 || snap.Head.Usage != u1 || snap.Head.Agent != "coder" ||
		snap.Head.SessionID != "s1" || string(snap.Head.ContextState) != `{"cleared":["c0"]}` {
		t.Errorf("head = %+v", snap.Head)
	}
	if snap.Head.Status != store.StatusRunning { // held by this very process
		t.Errorf("status %s", snap.Head.Status)
	}
	if snap.Head.PID == 0 || snap.Head.StartedAt.IsZero() || snap.Head.UpdatedAt.IsZero() {
		t.Errorf("pid/times not filled: %+v", snap.Head)
	}
	if got := string(snap.Entries[2].Args); got != `{"path":"main.go"}` {
		t.Errorf("tool call args = %s", got)
	}
	started := snap.Head.StartedAt

	// Completing releases the claim and keeps the start time.
	done := h
	done.Status, done.Turns = store.StatusCompleted, 6
	done.Result = &store.RunRecord{Output: "done", FinishReason: "stop", FinalAgent: "coder"}
	if err := cp.Append(ctx, "run-1", nil, done); err != nil {
		t.Fatal(err)
	}
	snap, _ = cp.Load(ctx, "run-1")
	if snap.Head.Status != store.StatusCompleted || snap.Head.Result.Output != "done" || len(snap.Entries) != 5 {
		t.Errorf("completed snapshot: %+v", snap.Head)
	}
	if !snap.Head.StartedAt.Equal(started) {
		t.Errorf("started_at changed: %v -> %v", started, snap.Head.StartedAt)
	}
	if h, _ := db.HolderOf(ctx, "run-1"); h != nil {
		t.Errorf("completed run still held by %v", h)
	}

	ri, err := cp.GetRun(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if ri.Model != "anthropic:claude-sonnet-4" || ri.Entries != 5 || ri.Turns != 6 || ri.Status != store.StatusCompleted ||
		ri.Usage != u1 || ri.SessionID != "s1" || ri.Agent != "coder" {
		t.Errorf("run info = %+v", ri)
	}
}

func TestCheckpointErrors(t *testing.T) {
	ctx := ctxT(t)
	db := openTest(t)
	cp := db.Checkpoints()
	_, err := cp.Load(ctx, "nope")
	if !errors.Is(err, store.ErrNotFound) || errs.KindOf(err) != errs.KindNotFound {
		t.Errorf("Load unknown: %v (kind %s)", err, errs.KindOf(err))
	}
	if _, err := cp.GetRun(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetRun unknown: %v", err)
	}
	if err := cp.DeleteRun(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("DeleteRun unknown: %v", err)
	}
	tests := []struct {
		name string
		id   string
		head store.Head
	}{
		{"empty id", "", running("a")},
		{"empty status", "r", store.Head{Agent: "a"}},
		{"bad status", "r", store.Head{Status: "paused"}},
		{"settings not JSON", "r", store.Head{Status: store.StatusRunning, Settings: json.RawMessage(`{"model":`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := cp.Append(ctx, tt.id, nil, tt.head); err == nil {
				t.Error("no error")
			}
		})
	}
	if _, err := cp.Load(ctx, "r"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a refused append left a run behind: %v", err)
	}
}

func TestCheckpointDamagedRowsGiveErrors(t *testing.T) {
	ctx := ctxT(t)
	tests := []struct {
		name, sql string
	}{
		{"entries not JSON", `UPDATE run_batches SET entries = '{{{' WHERE seq = 1`},
		{"entries wrong shape", `UPDATE run_batches SET entries = '{"type":"input"}' WHERE seq = 1`},
		{"unknown entry type", `UPDATE run_batches SET entries = '[{"type":"bogus"}]' WHERE seq = 1`},
		{"missing batch", `DELETE FROM run_batches WHERE seq = 1`},
		{"head count off", `UPDATE runs SET n_entries = n_entries + 1`},
		{"head count huge", `UPDATE runs SET n_entries = 1000000000000`},
		{"head count negative", `UPDATE runs SET n_entries = -5`},
		{"batch numbering gap", `UPDATE run_batches SET seq = 7 WHERE seq = 2`},
		{"batch offsets swapped", `UPDATE run_batches SET first_entry = 4 - first_entry WHERE seq IN (0, 2)`},
		{"head not JSON", `UPDATE runs SET head = 'nope'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openTest(t)
			cp := db.Checkpoints()
			for i := 0; i < 3; i++ {
				if err := cp.Append(ctx, "r", toolPair("c", "x"), running("a")); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := db.sql.ExecContext(ctx, tt.sql); err != nil {
				t.Fatal(err)
			}
			_, err := cp.Load(ctx, "r")
			if errs.KindOf(err) != errs.KindStore || !strings.Contains(err.Error(), "checkpoint of run r") || errs.HintOf(err) == "" {
				t.Errorf("Load: %v (kind %s, hint %q)", err, errs.KindOf(err), errs.HintOf(err))
			}
		})
	}
}

func TestListAndDeleteRuns(t *testing.T) {
	ctx := ctxT(t)
	db := openTest(t)
	cp := db.Checkpoints()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	db.now = func() time.Time { clock = clock.Add(time.Second); return clock }
	add := func(id, session string, status store.Status) {
		t.Helper()
		h := running("a")
		h.SessionID = session
		if err := cp.Append(ctx, id, []transcript.Entry{transcript.UserInput(id)}, h); err != nil {
			t.Fatal(err)
		}
		if status != store.StatusRunning {
			h.Status = status
			if err := cp.Append(ctx, id, nil, h); err != nil {
				t.Fatal(err)
			}
		}
	}
	add("r1", "s1", store.StatusCompleted)
	add("r2", "s1", store.StatusFailed)
	add("r3", "s2", store.StatusRunning)
	add("r4", "s2", store.StatusInterrupted)
	// r5: left running by a process that is gone (a pid that cannot exist).
	add("r5", "s2", store.StatusRunning)
	if _, err := db.sql.ExecContext(ctx, `UPDATE run_claims SET pid = 999999999 WHERE run_id = 'r5'`); err != nil {
		t.Fatal(err)
	}
	// r6: running, claimed by a live process whose pid was reused (start time differs).
	add("r6", "s2", store.StatusRunning)
	if _, err := db.sql.ExecContext(ctx, `UPDATE run_claims SET start_time = '1' WHERE run_id = 'r6'`); err != nil {
		t.Fatal(err)
	}

	ids := func(rs []RunInfo) string {
		var s []string
		for _, r := range rs {
			s = append(s, r.ID+"="+string(r.Status))
		}
		return strings.Join(s, ",")
	}
	tests := []struct {
		name string
		f    RunFilter
		want string
	}{
		{"all, newest first", RunFilter{}, "r6=interrupted,r5=interrupted,r4=interrupted,r3=running,r2=failed,r1=completed"},
		{"by session", RunFilter{SessionID: "s1"}, "r2=failed,r1=completed"},
		{"limit", RunFilter{Limit: 2}, "r6=interrupted,r5=interrupted"},
		{"effective status", RunFilter{Status: store.StatusInterrupted}, "r6=interrupted,r5=interrupted,r4=interrupted"},
		{"status and limit", RunFilter{Status: store.StatusRunning, Limit: 1}, "r3=running"},
		{"unknown session", RunFilter{SessionID: "zz"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := cp.ListRuns(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if ids(got) != tt.want {
				t.Errorf("ListRuns(%+v) = %s, want %s", tt.f, ids(got), tt.want)
			}
		})
	}
	// Load agrees with the listing.
	snap, _ := cp.Load(ctx, "r5")
	if snap.Head.Status != store.StatusInterrupted {
		t.Errorf("Load(r5) status %s", snap.Head.Status)
	}

	if err := cp.DeleteRun(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	if _, err := cp.Load(ctx, "r1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleted run still loads: %v", err)
	}
	var n int
	db.sql.QueryRowContext(ctx, `SELECT COUNT(*) FROM run_batches WHERE run_id = 'r1'`).Scan(&n)
	if n != 0 {
		t.Errorf("%d batches of a deleted run remain", n)
	}
	// Restart (the runtime's IfRunExists "restart" calls Reset): the same id starts afresh.
	if err := cp.Reset(ctx, "r3"); err != nil {
		t.Fatal(err)
	}
	if err := cp.Reset(ctx, "never-existed"); err != nil {
		t.Errorf("Reset of an unknown run: %v", err)
	}
	if err := cp.Append(ctx, "r3", []transcript.Entry{transcript.UserInput("again")}, running("a")); err != nil {
		t.Fatal(err)
	}
	snap, _ = cp.Load(ctx, "r3")
	if len(snap.Entries) != 1 || snap.Entries[0].Text != "again" {
		t.Errorf("restarted run: %v", texts(snap.Entries))
	}
	if err := db.Check(ctx); err != nil {
		t.Error(err)
	}
}

func TestClaimInProcess(t *testing.T) {
	ctx := ctxT(t)
	db := openTest(t)
	release, err := db.Claim(ctx, "new-run")
	if err != nil {
		t.Fatal(err)
	}
	h, err := db.HolderOf(ctx, "new-run")
	if err != nil || h == nil || h.PID != db.self.PID {
		t.Fatalf("HolderOf = %v, %v", h, err)
	}
	// The same process may write and claim again.
	if err := db.Checkpoints().Append(ctx, "new-run", nil, running("a")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Claim(ctx, "new-run"); err != nil {
		t.Fatal(err)
	}
	release()
	if h, _ := db.HolderOf(ctx, "new-run"); h != nil {
		t.Errorf("released run still held by %v", h)
	}
	// Released while its head still says running: others see it interrupted.
	if ri, _ := db.Checkpoints().GetRun(ctx, "new-run"); ri.Status != store.StatusInterrupted {
		t.Errorf("status after release = %s", ri.Status)
	}
}

func TestEffectiveStatus(t *testing.T) {
	tests := []struct {
		stored store.Status
		live   bool
		want   store.Status
	}{
		{store.StatusRunning, true, store.StatusRunning},
		{store.StatusRunning, false, store.StatusInterrupted},
		{store.StatusCompleted, false, store.StatusCompleted},
		{store.StatusFailed, true, store.StatusFailed},
		{store.StatusInterrupted, false, store.StatusInterrupted},
	}
	for _, tt := range tests {
		if got := EffectiveStatus(tt.stored, tt.live); got != tt.want {
			t.Errorf("EffectiveStatus(%s, %v) = %s, want %s", tt.stored, tt.live, got, tt.want)
		}
	}
}

func TestSecretsNeverStored(t *testing.T) {
	ctx := ctxT(t)
	db := openTest(t)
	h := running("a")
	h.Settings = json.RawMessage(`{"model":"openai:gpt-4.1","api_key":"sk-live-123","max_tokens":4096,` +
		`"provider":{"headers":{"Authorization":"Bearer abc","X-Api-Key":"k2"},"github_token":"ghp_x","budget_tokens":9},` +
		`"env":["PATH=/bin","Bearer zzz"]}`)
	if err := db.Checkpoints().Append(ctx, "r", nil, h); err != nil {
		t.Fatal(err)
	}
	if err := db.Sessions().Append(ctx, "s", "r", nil, json.RawMessage(`{"cwd":"/w","password":"hunter2","nested":{"accessToken":"t0k"}}`)); err != nil {
		t.Fatal(err)
	}
	// Look at the raw rows, not through the API.
	var dump strings.Builder
	for _, q := range []string{`SELECT head FROM runs`, `SELECT meta FROM sessions`} {
		var s string
		if err := db.sql.QueryRowContext(ctx, q).Scan(&s); err != nil {
			t.Fatal(err)
		}
		dump.WriteString(s)
	}
	for _, secret := range []string{"sk-live-123", "Bearer abc", "k2", "ghp_x", "Bearer zzz", "hunter2", "t0k"} {
		if strings.Contains(dump.String(), secret) {
			t.Errorf("secret %q stored: %s", secret, dump.String())
		}
	}
	for _, kept := range []string{`"max_tokens":4096`, `"budget_tokens":9`, `"model":"openai:gpt-4.1"`, `PATH=/bin`, `"cwd":"/w"`} {
		if !strings.Contains(dump.String(), kept) {
			t.Errorf("%s lost: %s", kept, dump.String())
		}
	}
}

// TestSecretsRedactedAtEveryCheckpoint: the remembered redaction of the last
// settings is used only for the same bytes, also when the caller reuses its buffer.
func TestSecretsRedactedAtEveryCheckpoint(t *testing.T) {
	ctx := ctxT(t)
	db := openTest(t)
	cp := db.Checkpoints()
	buf := []byte(`{"api_key":"sk-one"}`)
	head := func() string {
		t.Helper()
		var s string
		if err := db.sql.QueryRowContext(ctx, `SELECT head FROM runs WHERE run_id = 'r'`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for i, settings := range []string{`{"api_key":"sk-one"}`, `{"api_key":"sk-one"}`, `{"model":"m"}`, `{"api_key":"sk-two"}`, `{"api_key":"sk-two"}`} {
		buf = append(buf[:0], settings...) // the same backing array every time
		h := running("a")
		h.Settings = buf
		if err := cp.Append(ctx, "r", nil, h); err != nil {
			t.Fatal(err)
		}
		got := head()
		if strings.Contains(got, "sk-") {
			t.Errorf("checkpoint %d stored a secret: %s", i, got)
		}
		if settings == `{"model":"m"}` && !strings.Contains(got, `"settings":{"model":"m"}`) {
			t.Errorf("checkpoint %d lost the settings: %s", i, got)
		}
	}
}

func TestRedactJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a":1}`, `{"a":1}`}, // unchanged bytes when nothing is secret
		{`{"apiKey":"x","n":1.50}`, `{"apiKey":"[REDACTED]","n":1.50}`},
		{`{"token":""}`, `{"token":""}`},
		{`{"refresh_token":null}`, `{"refresh_token":null}`},
		{`{"OPENAI_API_KEY":{"v":"x"}}`, `{"OPENAI_API_KEY":"[REDACTED]"}`},
		{`[{"client_secret":"s"}]`, `[{"client_secret":"[REDACTED]"}]`},
		{`{"input_tokens":5,"tokenizer":"x"}`, `{"input_tokens":5,"tokenizer":"x"}`},
		{``, ``},
	}
	for _, tt := range tests {
		got, err := redactJSON(json.RawMessage(tt.in))
		if err != nil {
			t.Errorf("redactJSON(%s): %v", tt.in, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("redactJSON(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
	for _, bad := range []string{`{`, `{"a":1} x`, `nope`} {
		if _, err := redactJSON(json.RawMessage(bad)); err == nil {
			t.Errorf("redactJSON(%s): no error", bad)
		}
	}
}

func TestClaimFromAnotherHost(t *testing.T) {
	ctx := ctxT(t)
	db := openTest(t)
	cp := db.Checkpoints()
	if err := cp.Append(ctx, "r", []transcript.Entry{transcript.UserInput("x")}, running("a")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.sql.ExecContext(ctx, `UPDATE run_claims SET host = 'other-box', pid = 1`); err != nil {
		t.Fatal(err)
	}
	// Unknowable: assumed alive.
	if ri, _ := cp.GetRun(ctx, "r"); ri.Status != store.StatusRunning || ri.Holder == nil || ri.Holder.Host != "other-box" {
		t.Fatalf("run held on another host: %+v", ri)
	}
	err := cp.Append(ctx, "r", nil, running("a"))
	if errs.KindOf(err) != errs.KindRunConflict || !strings.Contains(errs.HintOf(err), "other-box") {
		t.Fatalf("append: %v (hint %q)", err, errs.HintOf(err))
	}
	if broke, err := db.BreakClaim(ctx, "r"); !broke || err != nil {
		t.Fatalf("BreakClaim = %v, %v", broke, err)
	}
	if ri, _ := cp.GetRun(ctx, "r"); ri.Status != store.StatusInterrupted {
		t.Errorf("after BreakClaim: %s", ri.Status)
	}
	if err := cp.Append(ctx, "r", nil, running("a")); err != nil {
		t.Errorf("append after BreakClaim: %v", err)
	}
	if broke, _ := db.BreakClaim(ctx, "nothing"); broke {
		t.Error("BreakClaim of an unclaimed run reported a claim")
	}
}

// TestAppendHeldRun: the checkpoints of a run this process holds, with its start
// time in the head as the runtime writes it, keep batches in order, follow a change
// of session or status, and still refuse a run another process took over.
func TestAppendHeldRun(t *testing.T) {
	ctx := ctxT(t)
	db := openTest(t)
	cp := db.Checkpoints()
	h := running("a")
	h.StartedAt = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h.SessionID = "s1"
	for i, batch := range [][]transcript.Entry{
		{transcript.UserInput("go")},
		nil, // a head-only checkpoint
		{transcript.AssistantText("one"), transcript.AssistantText("two")},
		{transcript.AssistantText("three")},
	} {
		h.Turns = i
		if err := cp.Append(ctx, "r", batch, h); err != nil {
			t.Fatal(err)
		}
	}
	h.SessionID = "s2" // the session is known late
	if err := cp.Append(ctx, "r", []transcript.Entry{transcript.AssistantText("four")}, h); err != nil {
		t.Fatal(err)
	}
	snap, err := cp.Load(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(texts(snap.Entries), "|"); got != "input:go|assistant_text:one|assistant_text:two|assistant_text:three|assistant_text:four" {
		t.Errorf("entries = %s", got)
	}
	if snap.Head.Turns != 3 || snap.Head.SessionID != "s2" || !snap.Head.StartedAt.Equal(h.StartedAt) {
		t.Errorf("head = %+v", snap.Head)
	}
	if runs, _ := cp.ListRuns(ctx, RunFilter{SessionID: "s2"}); len(runs) != 1 {
		t.Errorf("runs of session s2: %+v", runs)
	}

	// Another process took the run over (its claim replaced ours).
	if _, err := db.sql.ExecContext(ctx, `UPDATE run_claims SET host = 'other-box', pid = 1`); err != nil {
		t.Fatal(err)
	}
	err = cp.Append(ctx, "r", []transcript.Entry{transcript.AssistantText("lost")}, h)
	if errs.KindOf(err) != errs.KindRunConflict {
		t.Fatalf("append to a run held elsewhere: %v", err)
	}
	if ri, _ := cp.GetRun(ctx, "r"); ri.Entries != 5 {
		t.Errorf("a refused append changed the run: %+v", ri)
	}
	if _, err := db.BreakClaim(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	h.Status = store.StatusCompleted
	if err := cp.Append(ctx, "r", nil, h); err != nil {
		t.Fatal(err)
	}
	if ri, _ := cp.GetRun(ctx, "r"); ri.StoredStatus != store.StatusCompleted || ri.Holder != nil || ri.Entries != 5 {
		t.Errorf("completed run: %+v", ri)
	}
	if err := db.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestDecodeEntriesRoundTrip: the entries lovia stores load back unchanged.
func TestDecodeEntriesRoundTrip(t *testing.T) {
	tests := [][]transcript.Entry{
		{transcript.SystemInput("You are <lovia> & friends"), transcript.UserInput("fix \"it\"\n\tplease é 日本 😀")},
		{transcript.AssistantText("ok"), transcript.ToolCall("call_1", "bash", json.RawMessage(`{"command":"go test ./...","timeout":120}`))},
		{transcript.ToolResult("call_1", "bash", "PASS\nok  \tpkg\t0.1s\n\x00\x1f", true)},
		{{Type: transcript.TypeReasoning, Text: "think", Signature: "c2lnbmF0dXJl", Provider: "anthropic", ProviderID: "rs_1", Encrypted: "gAAAA=="}},
		{{Type: transcript.TypeToolResult, CallID: "c", Name: "read", Text: string([]byte{0xff, 'a'}), Truncated: true, RunID: "r", Agent: "coder"}},
	}
	for i, es := range tests {
		data, err := json.Marshal(es)
		if err != nil {
			t.Fatal(err)
		}
		var std []transcript.Entry
		json.Unmarshal(data, &std)
		got, err := decodeEntries(data)
		if err != nil || !reflect.DeepEqual(got, std) {
			t.Errorf("case %d: decoded %+v (%v), encoding/json %+v", i, got, err, std)
		}
	}
	// Attachments load too.
	withImage := []transcript.Entry{{Type: transcript.TypeInput, Role: "user", Text: "see",
		Attachments: []transcript.Attachment{{MIME: "image/png", Data: []byte{1, 2, 3}}}}}
	data, _ := json.Marshal(withImage)
	got, err := decodeEntries(data)
	if err != nil || !reflect.DeepEqual(got, withImage) {
		t.Errorf("attachments: %+v, %v", got, err)
	}
}
