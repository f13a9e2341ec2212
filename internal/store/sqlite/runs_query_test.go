package sqlite

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// TestListRunsByRepo: RunFilter.Repo keeps the runs of the sessions recorded in that
// repository, newest first, with the limit and status applied after the join.
func TestListRunsByRepo(t *testing.T) {
	ctx := ctxT(t)
	db := openTest(t)
	ss, cp := db.Sessions(), db.Checkpoints()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	db.now = func() time.Time { clock = clock.Add(time.Minute); return clock }
	add := func(session, repo, run string, status store.Status) {
		t.Helper()
		if err := cp.Append(ctx, run, nil, store.Head{Status: status, Agent: "a", SessionID: session}); err != nil {
			t.Fatal(err)
		}
		meta, _ := json.Marshal(SessionMeta{Cwd: repo, Repo: repo})
		if err := ss.Append(ctx, session, run, []transcript.Entry{transcript.UserInput("go")}, meta); err != nil {
			t.Fatal(err)
		}
	}
	add("s-p1", "/p", "p1", store.StatusCompleted)
	add("s-q1", "/q", "q1", store.StatusCompleted)
	add("s-p2", "/p", "p2", store.StatusFailed)
	add("s-q2", "/q", "q2", store.StatusCompleted)
	add("s-p1", "/p", "p3", store.StatusCompleted)
	// A run without a session belongs to no repository.
	if err := cp.Append(ctx, "lone", nil, store.Head{Status: store.StatusCompleted, Agent: "a"}); err != nil {
		t.Fatal(err)
	}
	ids := func(f RunFilter) string {
		t.Helper()
		runs, err := cp.ListRuns(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range runs {
			out = append(out, r.ID)
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct {
		f    RunFilter
		want string
	}{
		{RunFilter{Repo: "/p"}, "p3,p2,p1"},
		{RunFilter{Repo: "/q"}, "q2,q1"},
		{RunFilter{Repo: "/p", Limit: 2}, "p3,p2"},
		{RunFilter{Repo: "/p", Status: store.StatusCompleted, Limit: 1}, "p3"},
		{RunFilter{Repo: "/p", Status: store.StatusFailed}, "p2"},
		{RunFilter{Repo: "/nowhere"}, ""},
		{RunFilter{}, "lone,p3,q2,p2,q1,p1"},
	} {
		if got := ids(c.f); got != c.want {
			t.Errorf("%+v: %s, want %s", c.f, got, c.want)
		}
	}
}

// TestListRunsRunningAndFinished: running runs (kept out of the recency index so
// their checkpoints do not rewrite it) and finished ones list together by recency,
// also after a run changes status, with the limit and status filter applied.
func TestListRunsRunningAndFinished(t *testing.T) {
	ctx := ctxT(t)
	db := openTest(t)
	cp := db.Checkpoints()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	db.now = func() time.Time { clock = clock.Add(time.Minute); return clock }
	put := func(run string, status store.Status) {
		t.Helper()
		if err := cp.Append(ctx, run, []transcript.Entry{transcript.UserInput("go")}, store.Head{Status: status, Agent: "a"}); err != nil {
			t.Fatal(err)
		}
	}
	put("a", store.StatusRunning)
	put("b", store.StatusCompleted)
	put("c", store.StatusRunning)
	put("d", store.StatusFailed)
	put("a", store.StatusRunning) // a checkpoint of a running run makes it the newest
	put("e", store.StatusRunning)
	put("e", store.StatusCompleted) // e leaves running
	put("b", store.StatusRunning)   // b is resumed
	ids := func(f RunFilter) string {
		t.Helper()
		runs, err := cp.ListRuns(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range runs {
			out = append(out, r.ID+":"+string(r.StoredStatus))
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct {
		f    RunFilter
		want string
	}{
		{RunFilter{}, "b:running,e:completed,a:running,d:failed,c:running"},
		{RunFilter{Limit: 3}, "b:running,e:completed,a:running"},
		{RunFilter{Limit: 1}, "b:running"},
		{RunFilter{Status: store.StatusCompleted}, "e:completed"},
		{RunFilter{Status: store.StatusRunning, Limit: 2}, "b:running,a:running"},
	} {
		if got := ids(c.f); got != c.want {
			t.Errorf("%+v: %s, want %s", c.f, got, c.want)
		}
	}
	if ri, err := cp.GetRun(ctx, "e"); err != nil || ri.StoredStatus != store.StatusCompleted || ri.Entries != 2 {
		t.Errorf("GetRun(e) = %+v, %v", ri, err)
	}
	if err := db.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestIDsWithPrefix: the ids that start with a prefix, sorted; LIKE wildcards in the
// prefix are plain characters.
func TestIDsWithPrefix(t *testing.T) {
	ctx := ctxT(t)
	db := openTest(t)
	ss, cp := db.Sessions(), db.Checkpoints()
	for _, id := range []string{"run_abc1", "run_abc2", "run_abd", "run_%x", "xrun_abc"} {
		if err := cp.Append(ctx, id, nil, store.Head{Status: store.StatusCompleted, Agent: "a"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"s_01", "s_02", "s_1"} {
		if err := ss.EnsureSession(ctx, id, SessionMeta{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		prefix string
		want   []string
	}{
		{"run_ab", []string{"run_abc1", "run_abc2", "run_abd"}},
		{"run_abc2", []string{"run_abc2"}},
		{"run_%", []string{"run_%x"}},
		{"run__", nil},
		{"nope", nil},
	} {
		got, err := cp.RunIDsWithPrefix(ctx, c.prefix)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("runs %q: %v %v, want %v", c.prefix, got, err, c.want)
		}
	}
	if got, err := ss.SessionIDsWithPrefix(ctx, "s_0"); err != nil || !slices.Equal(got, []string{"s_01", "s_02"}) {
		t.Errorf("sessions s_0: %v %v", got, err)
	}
}
