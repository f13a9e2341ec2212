package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lovia-dev/lovia/internal/provider/providertest"
)

func elicitServe(t *testing.T, final string) (*serveProc, *providertest.Server) {
	t.Helper()
	srv := providertest.NewOpenAIServer(t,
		providertest.Turn{Calls: []providertest.Call{{ID: "c1", Name: "everything__trigger-elicitation-request", Args: `{}`}}},
		providertest.Turn{Text: final})
	e := serveEnv(t)
	e.vars = append(e.vars, "HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "NO_PROXY=127.0.0.1,localhost")
	for k, v := range srv.EnvVars() {
		e.vars = append(e.vars, k+"="+v)
	}
	e.userConfig(everythingConfig(t, ""))
	return startServe(t, e, "-m", "openai:gpt-test"), srv
}

// Over lovia serve's API: the form arrives as an approval of kind form with its
// schema; an answer that misses a required field is refused (400) and the form stays
// open; a valid one reaches the server.
func TestMCPElicitationServeAPI(t *testing.T) {
	sp, srv := elicitServe(t, "Thanks API.")
	st := sp.start("ask me", "")
	c := sp.stream(st.RunID, "")
	evs := c.until("approval_required")
	validate := loadSchema(t)
	for _, ev := range evs {
		if err := validate(ev.ev); err != nil {
			t.Errorf("event %s does not match the stream-json schema: %v", ev.raw, err)
		}
	}
	ask := last(evs)
	ap, _ := ask.ev["approval"].(map[string]any)
	form, _ := ap["form"].(map[string]any)
	if ap["kind"] != "form" || form == nil || form["properties"] == nil {
		t.Fatalf("approval = %s", ask.raw)
	}
	path := "/api/runs/" + st.RunID + "/approvals/" + callID(t, ask)
	code, body := sp.do("POST", path, map[string]any{"decision": "allow", "content": map[string]any{"check": true}})
	if code != http.StatusBadRequest || !strings.Contains(string(body), "required") {
		t.Fatalf("incomplete form: %d %s", code, body)
	}
	sp.must(http.StatusOK, "POST", path, map[string]any{"decision": "allow", "content": map[string]any{"name": "Grace Hopper", "integer": 9}}, nil)
	c.until("run_completed")
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "Name: Grace Hopper") || !strings.Contains(string(reqs[1].Body), "Favorite Integer: 9") {
		t.Fatalf("tool result: %s", reqs[len(reqs)-1].Body)
	}
}

func TestMCPElicitationServeAPIDecline(t *testing.T) {
	sp, srv := elicitServe(t, "Fine.")
	st := sp.start("ask me", "")
	c := sp.stream(st.RunID, "")
	ask := last(c.until("approval_required"))
	sp.must(http.StatusOK, "POST", "/api/runs/"+st.RunID+"/approvals/"+callID(t, ask), map[string]any{"decision": "cancel"}, nil)
	c.until("run_completed")
	if reqs := srv.Requests(); len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "User cancelled") {
		t.Fatalf("tool result: %s", reqs[len(reqs)-1].Body)
	}
}

// The chat page renders the form (one control per field, defaults filled in, the
// required mark), shows why an incomplete answer is refused, and sends a filled one.
func TestMCPElicitationServeBrowser(t *testing.T) {
	ctx := headlessChrome(t)
	sp, srv := elicitServe(t, "Thanks web.")
	run := func(what string, acts ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, acts...); err != nil {
			t.Fatalf("%s: %v\nserver:\n%s", what, err, sp.errb.String())
		}
	}
	poll := func(what, js string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(60*time.Second))); err != nil {
			t.Fatalf("%s: %v\nserver:\n%s", what, err, sp.errb.String())
		}
	}
	run("open the page", chromedp.Navigate(sp.url), chromedp.WaitVisible(chromedp.ID("prompt")))
	run("send a prompt", chromedp.SendKeys(chromedp.ID("prompt"), "ask me"), chromedp.Click(chromedp.ID("send")))
	poll("the form", `!!document.querySelector('#log .approval.form button[data-decision=accept]')`)
	type formInfo struct {
		Fields                   int
		NameLabel, Friend, First string
		Fish                     []string
		Integer                  string
	}
	fi, err := chromedp.Run(ctx, chromedp.Evaluate[formInfo](`(() => {
		const f = document.querySelector('#log .approval.form');
		return {
			Fields: f.querySelectorAll('.field').length,
			NameLabel: f.querySelector('.field[data-field=name] .label').textContent,
			Friend: f.querySelector('select[name=untitledSingleSelectEnum]').value,
			First: f.querySelector('input[name=firstLine]').value,
			Fish: [...f.querySelectorAll('input[name=titledMultipleSelectEnum]:checked')].map(c => c.value),
			Integer: f.querySelector('input[name=integer]').value,
		};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Fields != 13 || fi.NameLabel != "String *" || fi.Friend != "Monica" || fi.First != "It was a dark and stormy night." || len(fi.Fish) != 1 || fi.Fish[0] != "fish-1" || fi.Integer != "42" {
		t.Fatalf("form = %+v", fi)
	}
	run("accept without the required name", chromedp.Click(chromedp.CSS(`#log .approval.form button[data-decision=accept]`)))
	poll("the refusal", `(() => { const e = document.querySelector('#log .approval.form .notice.err'); return !!e && !e.hidden && e.textContent.includes('required'); })()`)
	run("fill the name", chromedp.SendKeys(chromedp.CSS(`#log .approval.form input[name=name]`), "Ada Web"))
	run("accept", chromedp.Click(chromedp.CSS(`#log .approval.form button[data-decision=accept]`)))
	poll("the final answer", `document.querySelector('#status').textContent === 'completed'`)
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "Name: Ada Web") || !strings.Contains(string(reqs[1].Body), "Favorite Integer: 42") {
		t.Fatalf("tool result: %s", reqs[len(reqs)-1].Body)
	}
}
