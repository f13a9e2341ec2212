package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browserScript: the reply streams, a command needs approval, and the final answer
// carries markup that must stay text (XSS from model output).
const browserScript = `turns:
  - text: "Let me create it."
    delay: 50ms
    tool_calls:
      - name: shell
        args: {command: "touch x.txt"}
  - text: "Made **x.txt**. <img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script> [click](javascript:document.title='pwned')\n\n` + "```go" + `\nfunc main() { fmt.Println(\"hi\") }\n` + "```" + `\n"
`

func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// headlessChrome returns a context for driving a headless Chromium (started at the
// first action, ended with the test, 90 s in all), or skips the test when Chromium
// is not installed. The flags keep it off this machine's closed network.
func headlessChrome(t *testing.T) context.Context {
	t.Helper()
	chrome := chromiumPath()
	if chrome == "" {
		t.Skip("chromium is not installed (.ci/run installs it with apt-get install chromium)")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chrome),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 900),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelA)
	ctx, cancelC := chromedp.NewContext(actx)
	t.Cleanup(cancelC)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancelT)
	return ctx
}

// TestServeBrowser drives the chat page in headless Chromium: open it with the
// token, send a prompt, see the streamed reply, reload while the run waits for an
// approval and see it continue, approve, and check the page's structure (and that
// model output never becomes markup).
func TestServeBrowser(t *testing.T) {
	ctx := headlessChrome(t)
	e := serveEnv(t)
	e.write("script.yaml", browserScript)
	sp := startServe(t, e, "-m", "script:script.yaml")

	run := func(what string, acts ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, acts...); err != nil {
			t.Fatalf("%s: %v\nserver:\n%s", what, err, sp.errb.String())
		}
	}
	// poll waits until the JavaScript expression is true.
	poll := func(what, js string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			t.Fatalf("%s: %v\nserver:\n%s", what, err, sp.errb.String())
		}
	}

	run("open the page with the token", chromedp.Navigate(sp.url), chromedp.WaitVisible(chromedp.ID("prompt")))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(loc, "token") {
		t.Errorf("the token stays in the address bar: %s", loc)
	}
	run("type a prompt", chromedp.SendKeys(chromedp.ID("prompt"), "create x.txt"), chromedp.Click(chromedp.ID("send")))
	poll("the streamed reply", `[...document.querySelectorAll('#log .msg.assistant')].some(m => m.textContent.includes('Let me create it.'))`)
	poll("the approval", `!!document.querySelector('#log .approval button[data-decision=allow]')`)

	if dir := os.Getenv("SERVE_SCREENSHOT_DIR"); dir != "" {
		if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
			_ = os.WriteFile(filepath.Join(dir, "serve-approval.png"), png, 0o644)
		}
	}
	// Reload mid-run (the run waits for the approval): the page finds the run again.
	run("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("prompt")))
	poll("the run after the reload", `document.querySelector('#status').textContent === 'running' && !!document.querySelector('#log .approval button[data-decision=allow]')`)
	run("approve", chromedp.Click(chromedp.CSS(`#log .approval button[data-decision=allow]`)))
	poll("the final answer", `document.querySelector('#status').textContent === 'completed'`)
	if _, err := os.Stat(filepath.Join(e.dir, "x.txt")); err != nil {
		t.Fatalf("the approved command did not run: %v", err)
	}

	// The page's structure, read from the DOM.
	type domInfo struct {
		Users, Assistants, ToolsOK, Approvals, Sessions int
		Strong, Title, Status, Code, Last               string
		Imgs, Scripts, JSLinks, Keyword                 int
	}
	dom, err := chromedp.Run(ctx, chromedp.Evaluate[domInfo](`(() => {
		const q = (s) => document.querySelectorAll(s);
		const last = [...q('#log .msg.assistant')].pop();
		return {
			Users: q('#log .msg.user').length,
			Assistants: q('#log .msg.assistant').length,
			ToolsOK: q('#log .tool.ok').length,
			Approvals: q('#log .approval').length,
			Sessions: q('#sessions li').length,
			Strong: last && last.querySelector('strong') ? last.querySelector('strong').textContent : '',
			Title: document.title,
			Status: document.querySelector('#status').textContent,
			Code: last && last.querySelector('pre code') ? last.querySelector('pre code').textContent : '',
			Last: last ? last.textContent : '',
			Imgs: q('#log img').length,
			Scripts: q('#log script').length,
			JSLinks: q('#log a[href^="javascript"]').length,
			Keyword: last ? last.querySelectorAll('pre code .tok-k').length : 0,
		};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(dom)
	t.Logf("DOM: %s", b)
	if dom.Users != 1 || dom.Assistants != 2 || dom.ToolsOK != 1 || dom.Approvals != 0 || dom.Sessions != 1 || dom.Status != "completed" {
		t.Errorf("page structure: %s", b)
	}
	if dom.Strong != "x.txt" || !strings.Contains(dom.Code, `fmt.Println("hi")`) || dom.Keyword == 0 {
		t.Errorf("markdown or code highlighting: %s", b)
	}
	if dom.Title != "lovia" || dom.Imgs != 0 || dom.Scripts != 0 || dom.JSLinks != 0 || !strings.Contains(dom.Last, "<img src=x") {
		t.Errorf("model output became markup: %s", b)
	}

	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(t.TempDir(), "serve.png")
	if dir := os.Getenv("SERVE_SCREENSHOT_DIR"); dir != "" {
		shot = filepath.Join(dir, "serve.png")
	}
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", shot)

	// Phone width: the sessions panel folds behind the menu button.
	run("phone width", chromedp.EmulateViewport(390, 800))
	poll("at phone width the side panel folds behind the menu button",
		`getComputedStyle(document.querySelector('#menu')).display !== 'none' && document.querySelector('#side').getBoundingClientRect().right <= 0`)
	if dir := os.Getenv("SERVE_SCREENSHOT_DIR"); dir != "" {
		png, _ = chromedp.Run(ctx, chromedp.FullScreenshot(100))
		_ = os.WriteFile(filepath.Join(dir, "serve-phone.png"), png, 0o644)
	}
	sp.stop(syscall.SIGTERM)
}
