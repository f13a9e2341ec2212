package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// TestGateAskAndRewrite: a gate's Ask makes an allowed call need approval (denied
// when nobody can approve); its Args replace the call's arguments, validated again.
func TestGateAskAndRewrite(t *testing.T) {
	var got []string
	echo := tool.New("echo", "echo", func(_ context.Context, _ *tool.RunContext, a echoArgs) (string, error) {
		got = append(got, a.Text)
		return a.Text, nil
	})
	a := newAgent("a", echo)
	a.Plugins = []plugin.Plugin{plugin.Func{ID: "hooks", Fn: func(context.Context, *tool.RunContext) (*plugin.Contribution, error) {
		return &plugin.Contribution{ToolGates: []plugin.ToolGate{func(_ context.Context, _ *tool.RunContext, c transcript.Entry) (plugin.GateResult, error) {
			switch c.CallID {
			case "c1":
				return plugin.GateResult{Ask: true, Message: "touches prod"}, nil
			case "c2":
				return plugin.GateResult{Args: []byte(`{"text":"rewritten"}`)}, nil
			case "c3":
				return plugin.GateResult{Args: []byte(`{"text":5}`)}, nil
			}
			return plugin.GateResult{}, nil
		}}}, nil
	}}}
	p := newFake(calls(mkcall("c1", "echo", `{"text":"one"}`), mkcall("c2", "echo", `{"text":"two"}`), mkcall("c3", "echo", `{"text":"three"}`)), say("ok"))
	if _, err := Start(context.Background(), a, Text("x"), opts1(p)).Result(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "rewritten" {
		t.Fatalf("the tool ran with %v, want only the rewritten call", got)
	}
	v := shape(p.requests()[1].Entries)
	if !strings.Contains(v, "errorresult:c1:error: denied by user (a hook asked for confirmation)") || !strings.Contains(v, "errorresult:c3:error: a pre-tool hook rewrote the arguments") {
		t.Fatalf("view %s", v)
	}
}

// TestStopGate: a refused stop appends the reason and the run continues; active is
// set from the second stop on; the loop stops asking after maxStopBlocks refusals.
func TestStopGate(t *testing.T) {
	var actives []bool
	a := newAgent("a")
	a.Plugins = []plugin.Plugin{plugin.Func{ID: "hooks", Fn: func(context.Context, *tool.RunContext) (*plugin.Contribution, error) {
		return &plugin.Contribution{StopGates: []plugin.StopGate{func(_ context.Context, _ *tool.RunContext, final string, active bool) (plugin.StopResult, error) {
			actives = append(actives, active)
			return plugin.StopResult{Continue: true, Message: "run the tests (" + final + ")"}, nil
		}}}, nil
	}}}
	var replies []reply
	for i := 0; i <= maxStopBlocks; i++ {
		replies = append(replies, say("done "+string(rune('a'+i))))
	}
	p := newFake(replies...)
	res, err := Start(context.Background(), a, Text("x"), opts1(p)).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(actives) != maxStopBlocks || actives[0] || !actives[1] {
		t.Fatalf("gate asked %d times, actives %v", len(actives), actives)
	}
	if want := "done " + string(rune('a'+maxStopBlocks)); res.Output != want {
		t.Fatalf("final = %q, want %q", res.Output, want)
	}
	if v := shape(p.requests()[1].Entries); !strings.Contains(v, "Stop hook feedback: run the tests (done a)") {
		t.Fatalf("second request %s", v)
	}
}
