package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/plugin/plugintest"
	"github.com/lovia-dev/lovia/internal/plugin/web"
	"github.com/lovia-dev/lovia/internal/provider/script"
	"github.com/lovia-dev/lovia/internal/runtime"
	"github.com/lovia-dev/lovia/internal/tool"
)

func TestNetworkApprovalThroughTheLoop(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<title>T</title><h1>Hello</h1>")
	}))
	defer srv.Close()
	read := func() script.Turn {
		return plugintest.Calls(plugintest.Call("read_page", map[string]any{"url": srv.URL + "/a"}))
	}
	script3 := []script.Turn{read(), read(), plugintest.Say("done")}

	// Headless: denied, the server is never contacted.
	r := plugintest.Start(t, "read it", script3, plugintest.Options{}, web.New(web.Config{}, nil))
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if res := r.ToolResult(t, "read_page", 0); !res.IsError || !strings.Contains(res.Text, "denied") || hits.Load() != 0 {
		t.Fatalf("headless = %+v (hits %d)", res, hits.Load())
	}

	// Interactive: "allow for this session" on the first call; the second call does
	// not ask again.
	asks := 0
	r = plugintest.Start(t, "read it", script3, plugintest.Options{
		Runtime: func(o *runtime.Options) { o.Approvals = runtime.ApprovalInteractive },
		OnEvent: func(h *runtime.Handle, ev event.Event) {
			if ev.Type == event.ApprovalRequired {
				asks++
				if ev.Approval.Kind != "network" {
					t.Errorf("approval kind = %q", ev.Approval.Kind)
				}
				h.Approve(ev.CallID, tool.Decision{Allow: true, Session: true})
			}
		},
	}, web.New(web.Config{}, nil))
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if asks != 1 || hits.Load() != 2 {
		t.Fatalf("asks = %d, hits = %d; want 1 and 2", asks, hits.Load())
	}
	if res := r.ToolResult(t, "read_page", 1); res.IsError || !strings.Contains(res.Text, "# Hello") {
		t.Fatalf("second read = %+v", res)
	}
}
