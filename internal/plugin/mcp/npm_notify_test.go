package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/tool"
)

// The reference server's long-running operation reports progress to the call, and
// a cancelled operation returns at once while the connection keeps working.
func TestReferenceServerProgressAndCancel(t *testing.T) {
	cfg := npmServer(t, "@modelcontextprotocol/server-everything")
	p, c := setup(t, Config{Servers: map[string]ServerConfig{"everything": cfg}})
	skipIfUnavailable(t, p, "everything")
	for _, tl := range c.Tools {
		if tl.Spec().Name == "everything__simulate-research-query" {
			t.Fatal("simulate-research-query requires task support and must not be offered")
		}
	}
	long := find(t, c, "everything__trigger-long-running-operation")

	rec := &progressRecorder{}
	ctx := tool.WithProgress(context.Background(), rec.report)
	res, err := long.Invoke(ctx, &tool.RunContext{}, json.RawMessage(`{"duration":1,"steps":4}`))
	if err != nil || res.IsError || !strings.Contains(res.Text, "Long running operation completed") {
		t.Fatalf("long-running = %+v, %v", res, err)
	}
	got := rec.reports()
	if len(got) == 0 {
		t.Fatal("no progress reported")
	}
	for i, pr := range got {
		if pr.Progress != float64(i+1) || pr.Total != 4 {
			t.Fatalf("reports %+v", got)
		}
	}

	// 600 steps over 600s: cancelled at the first step, the call returns cancelled.
	cctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cctx = tool.WithProgress(cctx, func(event.Progress) { cancel() })
	res, err = long.Invoke(cctx, &tool.RunContext{}, json.RawMessage(`{"duration":600,"steps":600}`))
	if err != nil || !res.IsError || !strings.Contains(res.Text, "was cancelled") {
		t.Fatalf("cancelled long-running = %+v, %v", res, err)
	}
	if res := run(t, c, "everything__echo", `{"message":"still here"}`); res.IsError || !strings.Contains(res.Text, "still here") {
		t.Fatalf("echo after cancel = %+v", res)
	}
	if _, _, deaths := p.servers["everything"].snapshot(); deaths != 0 {
		t.Fatalf("the connection was lost (%d deaths)", deaths)
	}
}
