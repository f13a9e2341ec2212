package mcp

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/plugin/plugintest"
	"github.com/lovia-dev/lovia/internal/provider/script"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/workspace"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newPlugin(t *testing.T, cfg Config) *Plugin {
	t.Helper()
	p, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// waitFor waits until cond holds, checking again at every list change of server
// (another list_changed may come first).
func waitFor(t *testing.T, p *Plugin, server string, cond func() bool) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		ch := p.Changes(server)
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-timeout:
			t.Fatal("the change was not seen")
		}
	}
}

func TestResourcesListReadAndTemplates(t *testing.T) {
	p := newPlugin(t, Config{Servers: map[string]ServerConfig{"ts": stdioCfg("-lists")}})
	c, err := p.For(policy(t, "coding", workspace.MCPRule{Server: "ts", Decision: "allow"})).Setup(ctxT(t), &tool.RunContext{})
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, c, "mcp_list_resources", `{}`)
	for _, want := range []string{"test://notes (notes) text/plain — Some notes", "template test://items/{id} (item)"} {
		if !strings.Contains(res.Text, want) {
			t.Fatalf("list lacks %q:\n%s", want, res.Text)
		}
	}
	if res := run(t, c, "mcp_read_resource", `{"server":"ts","uri":"test://notes"}`); res.IsError || !strings.Contains(res.Text, "the notes say hello") {
		t.Fatalf("read = %+v", res)
	}
	if res := run(t, c, "mcp_read_resource", `{"server":"ts","uri":"test://items/42"}`); !strings.Contains(res.Text, "item number 42") {
		t.Fatalf("template read = %+v", res)
	}
	if res := run(t, c, "mcp_read_resource", `{"server":"ts","uri":"test://pixel"}`); len(res.Attachments) != 1 || res.Attachments[0].MIME != "image/png" {
		t.Fatalf("image read = %+v", res)
	}
	if res := run(t, c, "mcp_read_resource", `{"server":"ts","uri":"test://nope"}`); !res.IsError || !strings.Contains(res.Text, "could not read test://nope") {
		t.Fatalf("unknown resource = %+v", res)
	}
}

func TestResourceReadDecidedByPolicy(t *testing.T) {
	p := newPlugin(t, Config{Servers: map[string]ServerConfig{"ts": stdioCfg("-lists")}})
	// coding asks for a model's read; a rule on the pseudo-tool allows it.
	c, err := p.For(policy(t, "coding")).Setup(ctxT(t), &tool.RunContext{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := find(t, c, "mcp_read_resource").Spec().Approval(context.Background(), nil, json.RawMessage(`{"server":"ts","uri":"test://notes"}`))
	if err != nil || a == nil || !strings.Contains(a.Summary, "read resource test://notes") || a.Rules[0] != "mcp:ts__:resources" {
		t.Fatalf("coding: approval %+v, %v", a, err)
	}
	allow := policy(t, "coding", workspace.MCPRule{Tool: "ts__:resources", Decision: "allow"})
	if a, err := resourceApproval(allow, "ts", "test://notes"); a != nil || err != nil {
		t.Fatalf("rule allow: %+v %v", a, err)
	}
	// A denial removes the tools and refuses the user's mentions too.
	deny := policy(t, "coding", workspace.MCPRule{Tool: "ts__:resources", Decision: "deny"})
	c2, err := p.For(deny).Setup(ctxT(t), &tool.RunContext{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range c2.Tools {
		if strings.HasPrefix(tl.Spec().Name, "mcp_") {
			t.Fatalf("%s offered though reading is denied", tl.Spec().Name)
		}
	}
	_, _, err = p.ExpandMentions(ctxT(t), deny, "see @ts:test://notes", "see @ts:test://notes", 1000)
	if err == nil || !strings.Contains(err.Error(), "reading resources of MCP server ts is not allowed") || !strings.Contains(errs.HintOf(err), `ts__:resources`) {
		t.Fatalf("denied mention: %v (hint %q)", err, errs.HintOf(err))
	}
	// readonly starts nothing for a mention.
	ro := policy(t, "readonly")
	if _, _, err := p.ExpandMentions(ctxT(t), ro, "@ts:test://notes", "@ts:test://notes", 1000); err == nil || !strings.Contains(errs.HintOf(err), "--policy coding") {
		t.Fatalf("readonly mention: %v", err)
	}
}

func TestMentions(t *testing.T) {
	p := newPlugin(t, Config{Servers: map[string]ServerConfig{"ts": stdioCfg("-lists")}})
	pol := policy(t, "coding")
	typed := "compare @ts:test://notes and @ts:test://items/7, mail @bob:later"
	out, notes, err := p.ExpandMentions(ctxT(t), pol, typed, typed, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{typed, "<mcp_resource server=\"ts\" uri=\"test://notes\">\nthe notes say hello\n</mcp_resource>", "item number 7"} {
		if !strings.Contains(out, want) {
			t.Fatalf("expanded prompt lacks %q:\n%s", want, out)
		}
	}
	if len(notes) != 2 {
		t.Fatalf("notes = %q", notes)
	}
	_, _, err = p.ExpandMentions(ctxT(t), pol, "@nope:demo://x", "@nope:demo://x", 1000)
	if err == nil || !strings.Contains(err.Error(), `no MCP server "nope" (configured: ts)`) || !strings.Contains(errs.HintOf(err), "lovia mcp add") {
		t.Fatalf("unknown server: %v", err)
	}
	_, _, err = p.ExpandMentions(ctxT(t), pol, "@ts:test://gone", "x", 1000)
	if err == nil || !strings.Contains(err.Error(), "could not read test://gone") || !strings.Contains(errs.HintOf(err), "lovia mcp resources ts") {
		t.Fatalf("unreadable: %v", err)
	}
}

func TestPromptArgs(t *testing.T) {
	decl := &sdk.Prompt{Name: "p", Arguments: []*sdk.PromptArgument{{Name: "city", Required: true}, {Name: "state"}}}
	cases := []struct {
		args string
		want map[string]string
		err  string
	}{
		{"city=Paris", map[string]string{"city": "Paris"}, ""},
		{"Paris", map[string]string{"city": "Paris"}, ""},
		{`"New York" NY`, map[string]string{"city": "New York", "state": "NY"}, ""},
		{"state=TX Austin", map[string]string{"city": "Austin", "state": "TX"}, ""},
		{"Paris Ile de France", map[string]string{"city": "Paris", "state": "Ile de France"}, ""},
		{"state=TX", nil, "missing required argument(s): city"},
		{"", nil, "missing required argument(s): city"},
	}
	for _, c := range cases {
		got, err := PromptArgs(decl, c.args)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%q: err %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil || len(got) != len(c.want) {
			t.Errorf("%q: %v %v", c.args, got, err)
			continue
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%q: %s=%q, want %q", c.args, k, got[k], v)
			}
		}
	}
}

func TestPrompts(t *testing.T) {
	p := newPlugin(t, Config{Servers: map[string]ServerConfig{"ts": stdioCfg("-lists")}})
	pol := policy(t, "coding")
	text, _, err := p.GetPrompt(ctxT(t), pol, "ts:greet", "Ada mood=cheerful")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "Say hello to Ada in a cheerful mood") || !strings.Contains(text, "the notes say hello") {
		t.Fatalf("prompt text:\n%s", text)
	}
	cmds := p.PromptCommands(pol)
	if len(cmds) != 1 || cmds[0].Name() != "ts:greet" || cmds[0].ArgsHint() != "who=… [mood=…]" {
		t.Fatalf("commands = %+v", cmds)
	}
	if _, _, err := p.GetPrompt(ctxT(t), pol, "ts:greet", ""); err == nil || !strings.Contains(err.Error(), "missing required argument(s): who") || !strings.Contains(errs.HintOf(err), "/ts:greet who=…") {
		t.Fatalf("missing arg: %v (hint %q)", err, errs.HintOf(err))
	}
	if _, _, err := p.GetPrompt(ctxT(t), pol, "ts:nope", ""); err == nil || !strings.Contains(errs.HintOf(err), "its prompts: greet") {
		t.Fatalf("unknown prompt: %v", err)
	}
	deny := policy(t, "coding", workspace.MCPRule{Tool: "ts__:prompts", Decision: "deny"})
	if _, _, err := p.GetPrompt(ctxT(t), deny, "ts:greet", "Ada"); err == nil || !strings.Contains(err.Error(), "getting prompts of MCP server ts is not allowed") {
		t.Fatalf("denied prompt: %v", err)
	}
	if len(p.PromptCommands(deny)) != 0 {
		t.Fatal("denied prompts listed")
	}
}

func TestRootsAnsweredWithWorkspaceRoot(t *testing.T) {
	root := t.TempDir()
	p := newPlugin(t, Config{Root: root, Servers: map[string]ServerConfig{"ts": stdioCfg("-lists")}})
	c, err := p.For(policy(t, "coding", workspace.MCPRule{Server: "ts", Decision: "allow"})).Setup(ctxT(t), &tool.RunContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res := run(t, c, "ts__roots", `{}`); res.IsError || !strings.Contains(res.Text, "file://"+root+" ") {
		t.Fatalf("roots = %+v (root %s)", res, root)
	}
	// roots: false offers none.
	no := false
	cfg := stdioCfg("-lists")
	cfg.Roots = &no
	p2 := newPlugin(t, Config{Root: root, Servers: map[string]ServerConfig{"ts": cfg}})
	c2, err := p2.For(policy(t, "coding", workspace.MCPRule{Server: "ts", Decision: "allow"})).Setup(ctxT(t), &tool.RunContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res := run(t, c2, "ts__roots", `{}`); strings.Contains(res.Text, "file://") {
		t.Fatalf("roots: false still offered the root: %+v", res)
	}
}

func TestListChangedRefreshesToolsPromptsResources(t *testing.T) {
	cache := t.TempDir()
	cfg := Config{CacheDir: cache, Servers: map[string]ServerConfig{"ts": stdioCfg("-lists")}}
	p := newPlugin(t, cfg)
	pol := policy(t, "coding", workspace.MCPRule{Server: "ts", Decision: "allow"})
	c, err := p.For(pol).Setup(ctxT(t), &tool.RunContext{})
	if err != nil {
		t.Fatal(err)
	}
	// The call returns once the list it changed is listed again.
	run(t, c, "ts__add_tool", `{"name":"fresh"}`)
	c2, err := p.For(pol).Setup(ctxT(t), &tool.RunContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res := run(t, c2, "ts__fresh", `{}`); res.Text != "fresh here" {
		t.Fatalf("new tool = %+v", res)
	}
	// The on-disk cache has it too: a later process offers it before starting.
	p2 := newPlugin(t, cfg)
	c3, err := p2.For(pol).Setup(ctxT(t), &tool.RunContext{})
	if err != nil {
		t.Fatal(err)
	}
	if cur, _, _ := p2.servers["ts"].snapshot(); cur != nil {
		t.Fatal("the cached lists should spare the start")
	}
	find(t, c3, "ts__fresh")

	run(t, c, "ts__add_prompt", `{"name":"later"}`)
	found := false
	for _, pc := range p.PromptCommands(pol) {
		found = found || pc.Name() == "ts:later"
	}
	if !found {
		t.Fatalf("new prompt not listed: %+v", p.PromptCommands(pol))
	}
	run(t, c, "ts__add_resource", `{"uri":"test://new","text":"brand new"}`)
	if l, _ := p.Offers("ts"); !strings.Contains(FormatResources("ts", l), "test://new") {
		t.Fatalf("new resource not listed:\n%s", FormatResources("ts", l))
	}
	data, err := os.ReadFile(p.servers["ts"].listsFile())
	if err != nil || !strings.Contains(string(data), "test://new") {
		t.Fatalf("lists cache: %s %v", data, err)
	}
}

func TestToolsChangedDuringARunAreAnnounced(t *testing.T) {
	p := newPlugin(t, Config{Servers: map[string]ServerConfig{"ts": stdioCfg("-lists")}})
	r := plugintest.Start(t, "add a tool", []script.Turn{
		plugintest.Calls(plugintest.Call("ts__add_tool", map[string]any{"name": "fresh"})),
		plugintest.Say("done"),
	}, plugintest.Options{}, p.For(policy(t, "coding", workspace.MCPRule{Server: "ts", Decision: "allow"})))
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if first := r.Request(t, 0); plugintest.HasTool(first, "ts__fresh") {
		t.Fatal("the tool exists before it was added")
	}
	last := r.Request(t, 1)
	if tail := last.Entries[len(last.Entries)-1]; !strings.Contains(tail.Text, "The MCP server(s) ts changed their tool list during this run") {
		t.Fatalf("no notice after the change: %+v", tail)
	}
}

func TestListChangedOverHTTP(t *testing.T) {
	url, _ := startHTTP(t, "-lists")
	p := newPlugin(t, Config{Servers: map[string]ServerConfig{"ts": {URL: url}}})
	pol := policy(t, "coding", workspace.MCPRule{Server: "ts", Decision: "allow"})
	c, err := p.For(pol).Setup(ctxT(t), &tool.RunContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res := run(t, c, "mcp_read_resource", `{"server":"ts","uri":"test://items/9"}`); !strings.Contains(res.Text, "item number 9") {
		t.Fatalf("read over HTTP = %+v", res)
	}
	run(t, c, "ts__add_tool", `{"name":"viahttp"}`)
	waitFor(t, p, "ts", func() bool {
		cur, _, _ := p.servers["ts"].snapshot()
		for _, tl := range cur.toolList() {
			if tl.Name == "viahttp" {
				return true
			}
		}
		return false
	})
	c2, err := p.For(pol).Setup(ctxT(t), &tool.RunContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res := run(t, c2, "ts__viahttp", `{}`); res.Text != "viahttp here" {
		t.Fatalf("new tool over HTTP = %+v", res)
	}
}
