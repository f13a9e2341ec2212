package headless

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/event"
)

// The core returns kinds and data; the command line words the hint, in terms that
// work in a shell.
func TestShellHints(t *testing.T) {
	var out bytes.Buffer
	w := New(StreamJSON, &out, &out, Options{})
	ev := event.Event{Type: event.RunFailed, RunID: "run_1", Status: "failed",
		Error: &event.Error{Kind: string(errs.KindMaxTurns), Message: "max turns reached (2)"}}
	if err := w.Event(ev); err != nil {
		t.Fatal(err)
	}
	var got event.Event
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if h := got.Error.Hint; !strings.Contains(h, "--max-turns") || !strings.Contains(h, "lovia resume run_1") {
		t.Fatalf("max turns hint %q", h)
	}
	if ev.Error.Hint != "" {
		t.Fatal("the caller's event was changed")
	}
	err := WithHint(errs.New(errs.KindCancelled, "interrupted", ""), "run_2")
	if errs.HintOf(err) != "continue with `lovia resume run_2`" || errs.KindOf(err) != errs.KindCancelled || err.Error() != "interrupted" {
		t.Fatalf("cancel: %v / %q", err, errs.HintOf(err))
	}
	own := errs.New(errs.KindProvider, "down", "check the status page")
	if WithHint(own, "run_3") != own {
		t.Fatal("a hint of the core's own was replaced")
	}
}
