package mcp

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// What a server offers beyond tools (resources, resource templates, prompts) is
// listed when it starts, listed again when it says a list changed, and kept on disk
// beside the tool cache so completion and listing work before the server runs.

// Lists are a server's resources, resource templates and prompts.
type Lists struct {
	// HasResources and HasPrompts report the server advertises the capability.
	HasResources bool                    `json:"has_resources,omitempty"`
	HasPrompts   bool                    `json:"has_prompts,omitempty"`
	Resources    []*sdk.Resource         `json:"resources,omitempty"`
	Templates    []*sdk.ResourceTemplate `json:"templates,omitempty"`
	Prompts      []*sdk.Prompt           `json:"prompts,omitempty"`
}

// listState is one server's Lists and what lovia tells the server about itself.
type listState struct {
	// root is the workspace root, offered to the server as its one root ("" = none).
	root string

	mu     sync.Mutex
	loaded bool       // lists is set (from a connection or the disk cache)
	tried  bool       // the disk cache was read
	saveMu sync.Mutex // serializes writing the lists to disk
	// toolsVersion counts tool lists received by tools/list_changed.
	toolsVersion int
	lists        Lists
	changed      chan struct{} // closed and replaced at every change (tests wait on it)

	// relisting counts the current connection's list_changed being handled (settle.go);
	// each connection has its own, so a notification lost with a dead connection does
	// not hold up calls on the next.
	relisting *relisting
	// bg counts the list_changed goroutines, which close waits for: none writes the
	// cache after the plugin closed.
	bg sync.WaitGroup
}

// changes returns a channel closed at the next change of the server's lists or tools.
func (l *listState) changes() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed == nil {
		l.changed = make(chan struct{})
	}
	return l.changed
}

func (l *listState) notify() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed != nil {
		close(l.changed)
	}
	l.changed = make(chan struct{})
}

// listOptions advertises roots and handles the list_changed notifications.
func (s *server) listOptions(o *sdk.ClientOptions) {
	if s.offersRoot() {
		o.Capabilities.RootsV2 = &sdk.RootCapabilities{ListChanged: true}
	}
	// One counter per connection (start is serialized, and watch uses this one).
	rl := &relisting{}
	s.lists.mu.Lock()
	s.lists.relisting = rl
	s.lists.mu.Unlock()
	// List again from a goroutine of its own: a handler must not block the session.
	relist := func(session *sdk.ClientSession, tools, prompts, resources bool) {
		s.lists.bg.Add(1)
		go func() {
			defer s.lists.bg.Done()
			defer rl.done() // counted as read: settle.go
			s.relist(session, tools, prompts, resources)
		}()
	}
	o.ToolListChangedHandler = func(_ context.Context, r *sdk.ToolListChangedRequest) {
		relist(r.Session, true, false, false)
	}
	o.PromptListChangedHandler = func(_ context.Context, r *sdk.PromptListChangedRequest) {
		relist(r.Session, false, true, false)
	}
	o.ResourceListChangedHandler = func(_ context.Context, r *sdk.ResourceListChangedRequest) {
		relist(r.Session, false, false, true)
	}
}

// addRoots gives the client the workspace root (answered to roots/list). The root is
// fixed for the process, so roots/list_changed is never needed after connecting; the
// SDK sends it should a root be added to a connected client.
func (s *server) addRoots(c *sdk.Client) {
	if !s.offersRoot() {
		return
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(s.lists.root)}
	if !strings.HasPrefix(u.Path, "/") {
		u.Path = "/" + u.Path // Windows: file:///C:/repo
	}
	c.AddRoots(&sdk.Root{URI: u.String(), Name: filepath.Base(s.lists.root)})
}

// offersRoot reports the server gets the workspace root (roots: false opts out).
func (s *server) offersRoot() bool {
	return s.lists.root != "" && (s.cfg.Roots == nil || *s.cfg.Roots)
}

// relist refreshes a list after the server said it changed. It waits for a start in
// progress (which holds s.mu), so a notification sent while the server starts is
// applied to the connection it belongs to.
func (s *server) relist(session *sdk.ClientSession, tools, prompts, resources bool) {
	s.mu.Lock()
	c := s.cur
	s.mu.Unlock()
	if c == nil || c.session != session || !c.alive() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.startupTimeout())
	defer cancel()
	if tools {
		var list []*sdk.Tool
		for t, err := range session.Tools(ctx, nil) {
			if err != nil {
				s.logger.Debug("mcp tools not listed again", "err", err)
				return
			}
			list = append(list, t)
		}
		list, skipped := c.tasks.split(list) // tasks.go: task-only tools are not offered
		c.setTools(list, skipped)
		s.saveCache(list)
		s.lists.mu.Lock()
		s.lists.toolsVersion++
		s.lists.mu.Unlock()
		s.logger.Debug("mcp tool list changed", "tools", len(list))
	} else {
		s.fetchLists(ctx, session, prompts, resources)
	}
	s.lists.notify()
}

// setTools replaces the connection's tool list and the tools it leaves out
// (tools/list_changed).
func (c *conn) setTools(t []*sdk.Tool, skipped []SkippedTool) {
	c.toolsMu.Lock()
	defer c.toolsMu.Unlock()
	c.tools, c.skipped = t, skipped
}

// skippedList is the connection's current list of tools not offered.
func (c *conn) skippedList() []SkippedTool {
	c.toolsMu.Lock()
	defer c.toolsMu.Unlock()
	return c.skipped
}

// toolList is the connection's current tool list.
func (c *conn) toolList() []*sdk.Tool {
	c.toolsMu.Lock()
	defer c.toolsMu.Unlock()
	return c.tools
}

// fetchLists lists prompts and/or resources (with templates) of a connected server,
// as far as it advertises them, and records them. A failed listing keeps the old
// list: these lists are a convenience, never a reason to fail the server.
func (s *server) fetchLists(ctx context.Context, session *sdk.ClientSession, prompts, resources bool) {
	caps := &sdk.ServerCapabilities{}
	if ir := session.InitializeResult(); ir != nil && ir.Capabilities != nil {
		caps = ir.Capabilities
	}
	hasPrompts, hasResources := caps.Prompts != nil, caps.Resources != nil
	// Listed without the lock; only what was listed is replaced, so two refreshes of
	// different lists at once keep both.
	var pl []*sdk.Prompt
	var rl []*sdk.Resource
	var tl []*sdk.ResourceTemplate
	var perr, rerr, terr error
	if hasPrompts && prompts {
		if pl, perr = collect(session.Prompts(ctx, nil)); perr != nil {
			s.logger.Debug("mcp prompts not listed", "err", perr)
		}
	}
	if hasResources && resources {
		if rl, rerr = collect(session.Resources(ctx, nil)); rerr != nil {
			s.logger.Debug("mcp resources not listed", "err", rerr)
		}
		if tl, terr = collect(session.ResourceTemplates(ctx, nil)); terr != nil {
			s.logger.Debug("mcp resource templates not listed", "err", terr)
		}
	}
	s.lists.mu.Lock()
	l := &s.lists.lists
	l.HasPrompts, l.HasResources = hasPrompts, hasResources
	switch {
	case !hasPrompts:
		l.Prompts = nil
	case prompts && perr == nil:
		l.Prompts = pl
	}
	switch {
	case !hasResources:
		l.Resources, l.Templates = nil, nil
	case resources:
		if rerr == nil {
			l.Resources = rl
		}
		if terr == nil {
			l.Templates = tl
		}
	}
	s.lists.loaded = true
	s.lists.mu.Unlock()
	// The latest lists are written last: the snapshot is taken under saveMu.
	s.lists.saveMu.Lock()
	defer s.lists.saveMu.Unlock()
	s.saveLists(s.offers())
}

// maxListed bounds one list of a server (a server is not trusted to be reasonable).
const maxListed = 10_000

func collect[T any](seq iter.Seq2[T, error]) ([]T, error) {
	var out []T
	for v, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if len(out) == maxListed {
			break
		}
	}
	return out, nil
}

// offers returns the server's lists: the connection's, else the disk cache's.
func (s *server) offers() Lists {
	s.lists.mu.Lock()
	defer s.lists.mu.Unlock()
	s.readCacheLocked()
	return s.lists.lists
}

// readCacheLocked reads the disk cache once, unless a connection listed already
// (s.lists.mu held).
func (s *server) readCacheLocked() {
	if !s.lists.loaded && !s.lists.tried {
		s.lists.tried = true
		s.lists.lists, s.lists.loaded = s.loadLists()
	}
}

func (s *server) listsFile() string {
	if s.cacheFile == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(s.cacheFile), "lists", filepath.Base(s.cacheFile))
}

func (s *server) loadLists() (Lists, bool) {
	var l Lists
	name := s.listsFile()
	if name == "" {
		return l, false
	}
	f, err := os.Open(name)
	if err != nil {
		return l, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCacheBytes+1))
	if err != nil || len(data) > maxCacheBytes || json.Unmarshal(data, &l) != nil {
		return Lists{}, false
	}
	return l, true
}

// saveLists records the lists for the next process (best effort, 0600).
func (s *server) saveLists(l Lists) {
	name := s.listsFile()
	if name == "" {
		return
	}
	data, err := json.Marshal(l)
	if err != nil || len(data) > maxCacheBytes {
		return
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), ".lists-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), name) != nil {
		_ = os.Remove(tmp.Name())
	}
}

// listsCached reports that the lists of an earlier start are on disk (or in memory).
func (s *server) listsCached() bool {
	s.lists.mu.Lock()
	defer s.lists.mu.Unlock()
	s.readCacheLocked()
	return s.lists.loaded
}

func (s *server) toolsVersion() int {
	s.lists.mu.Lock()
	defer s.lists.mu.Unlock()
	return s.lists.toolsVersion
}

// toolsChanged tells the model, for the rest of a run, which servers changed their
// tools during it: a run's tools are fixed at its start, so the new list is offered
// from the next run (the next message in chat).
func (p *Plugin) toolsChanged(servers []string) plugin.ViewInjector {
	at := map[string]int{}
	for _, name := range servers {
		at[name] = p.servers[name].toolsVersion()
	}
	return func(context.Context, *tool.RunContext) ([]transcript.Entry, error) {
		var changed []string
		for _, name := range servers {
			if p.servers[name].toolsVersion() > at[name] {
				changed = append(changed, name)
			}
		}
		if len(changed) == 0 {
			return nil, nil
		}
		e := transcript.UserInput("<system-reminder>\nThe MCP server(s) " + strings.Join(changed, ", ") + " changed their tool list during this run. The tools offered now stay as they are until the run ends; new tools are offered from the next run (the user's next message).\n</system-reminder>")
		e.Synthetic = true
		return []transcript.Entry{e}, nil
	}
}
