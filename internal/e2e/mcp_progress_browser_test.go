package e2e

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The serve chat page shows a running MCP call's progress on its tool card, and drops
// it when the call ends.
func TestMCPProgressInServeBrowser(t *testing.T) {
	ctx := headlessChrome(t)
	cfg := everythingAllowed(t)
	e := serveEnv(t)
	e.userConfig(cfg)
	e.write("script.yaml", "turns:\n  - tool_calls: [{name: "+longOp+", args: {duration: 8, steps: 4}}]\n  - text: the operation is done\n")
	sp := startServe(t, e, "-m", "script:script.yaml")

	poll := func(what, js string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(60*time.Second))); err != nil {
			page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#log').innerHTML`))
			t.Fatalf("%s: %v\npage log:\n%s\nserver:\n%s", what, err, page, sp.errb.String())
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(sp.url), chromedp.WaitVisible(chromedp.ID("prompt")),
		chromedp.SendKeys(chromedp.ID("prompt"), "run the long operation"), chromedp.Click(chromedp.ID("send"))); err != nil {
		t.Fatalf("send a prompt: %v\nserver:\n%s", err, sp.errb.String())
	}
	poll("progress on the running tool's card", `[...document.querySelectorAll('#log .tool.waiting .progress')].some(p => /^ [1-3]\/4$/.test(p.textContent) && p.querySelector('progress').max === 4)`)
	poll("the end of the run", `document.querySelector('#status').textContent === 'completed'`)
	poll("no progress left on the finished card", `document.querySelectorAll('#log .tool .progress').length === 0 && document.querySelectorAll('#log .tool.ok').length === 1`)
}
