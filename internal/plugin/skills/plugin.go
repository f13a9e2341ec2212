package skills

import (
	"context"
	"errors"
	"fmt"
	"github.com/lovia-dev/lovia/internal/textutil"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/fsnotify/fsnotify"

	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/plugin/hooks"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// Tool names this plugin contributes.
const (
	LoadToolName = "load_skill"
	ReadToolName = "read_skill_file"
)

// Plugin is the skills plugin.
type Plugin struct {
	cfg    Config
	logger *slog.Logger
}

// New returns the skills plugin. logger may be nil.
func New(cfg Config, logger *slog.Logger) *Plugin {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Plugin{cfg: cfg, logger: logger}
}

// Name implements plugin.Plugin.
func (*Plugin) Name() string { return "skills" }

// catalog is one run's view of the skills: the set announced in the system prompt
// (initial) and the current set, rescanned after the watcher saw a change.
type catalog struct {
	cfg     Config
	logger  *slog.Logger
	initial map[string]Skill

	dirty atomic.Bool

	mu       sync.Mutex
	current  map[string]Skill
	problems []error

	// active is the loaded skill whose allowed-tools apply (lovia names); nil when
	// none restricts.
	activeMu sync.Mutex
	active   *activeSkill
}

type activeSkill struct {
	name  string
	tools []string
}

// activate makes s the active skill: its allowed-tools (if any) now bound the run's
// tools; a skill without them lifts an earlier one's bound.
func (c *catalog) activate(s Skill) {
	c.activeMu.Lock()
	defer c.activeMu.Unlock()
	if len(s.AllowedTools) == 0 {
		c.active = nil
		return
	}
	c.active = &activeSkill{name: s.Name, tools: hooks.LoviaTools(s.AllowedTools)}
}

// gate refuses the tools the active skill does not allow (the skills tools always
// pass, so another skill can be loaded).
func (c *catalog) gate(_ context.Context, _ *tool.RunContext, call transcript.Entry) (plugin.GateResult, error) {
	c.activeMu.Lock()
	a := c.active
	c.activeMu.Unlock()
	if a == nil || call.Name == LoadToolName || call.Name == ReadToolName {
		return plugin.GateResult{}, nil
	}
	for _, t := range a.tools {
		if t == call.Name {
			return plugin.GateResult{}, nil
		}
	}
	return plugin.GateResult{Block: true, Message: fmt.Sprintf("the active skill %s allows only these tools: %s", a.name, strings.Join(a.tools, ", "))}, nil
}

func index(list []Skill) map[string]Skill {
	m := make(map[string]Skill, len(list))
	for _, s := range list {
		m[s.Name] = s
	}
	return m
}

func (c *catalog) snapshot(ctx context.Context) (map[string]Skill, []error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dirty.Swap(false) {
		list, problems := List(ctx, c.cfg)
		for _, p := range problems {
			c.logger.Warn("skill not loaded", "err", p)
		}
		c.current, c.problems = index(list), problems
	}
	return c.current, c.problems
}

// Setup implements plugin.Plugin.
func (p *Plugin) Setup(ctx context.Context, _ *tool.RunContext) (*plugin.Contribution, error) {
	list, problems := List(ctx, p.cfg)
	for _, e := range problems {
		var w *Warning
		if errors.As(e, &w) {
			p.logger.Warn("skill loaded with a warning", "warning", e)
			if p.cfg.Warn != nil {
				p.cfg.Warn("skill: " + e.Error())
			}
			continue
		}
		p.logger.Warn("skill not loaded", "err", e)
		if p.cfg.Warn != nil {
			p.cfg.Warn("skill not loaded: " + e.Error())
		}
	}
	c := &catalog{cfg: p.cfg, logger: p.logger, initial: index(list), current: index(list), problems: problems}
	contrib := &plugin.Contribution{
		Tools:         []tool.Tool{loadTool(c), readTool(c)},
		Instructions:  instructions(list),
		ViewInjectors: []plugin.ViewInjector{c.changes},
		ToolGates:     []plugin.ToolGate{c.gate},
	}
	if !p.cfg.NoWatch {
		stop, err := c.watch()
		if err != nil {
			// Without a watcher the catalog is rescanned on every lookup instead.
			p.logger.Warn("skills: cannot watch directories; rescanning on each use", "err", err)
			contrib.ViewInjectors = []plugin.ViewInjector{func(ctx context.Context, rc *tool.RunContext) ([]transcript.Entry, error) {
				c.dirty.Store(true)
				return c.changes(ctx, rc)
			}}
		} else {
			contrib.Close = func(context.Context) error { return stop() }
		}
	}
	return contrib, nil
}

func instructions(list []Skill) string {
	var b strings.Builder
	b.WriteString("## Skills\nSkills are folders of expert instructions for specific tasks. When a task matches a skill's description, call load_skill with its name before you start and follow what it says; read_skill_file reads the other files it mentions.")
	if len(list) == 0 {
		b.WriteString("\nNo skills are installed right now.")
		return b.String()
	}
	b.WriteString(" Available skills:")
	for _, s := range list {
		if s.DisableModelInvocation {
			continue // the user's to invoke (/name), not the model's
		}
		fmt.Fprintf(&b, "\n- %s: %s", s.Name, textutil.OneLine(s.Description))
	}
	return b.String()
}

// watch starts an fsnotify watcher over every existing root and skill folder. Any
// event marks the catalog dirty; the rescan happens lazily at the next use.
func (c *catalog) watch() (stop func() error, err error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	watched := 0
	addTree := func(root string) {
		if err := w.Add(root); err != nil {
			return
		}
		watched++
		ents, err := os.ReadDir(root)
		if err != nil {
			return
		}
		for _, e := range ents {
			d := filepath.Join(root, e.Name())
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				_ = w.Add(d)
			}
		}
	}
	roots := map[string]bool{}
	// Roots that do not exist yet (a .claude/skills made after the start): the
	// nearest existing ancestor is watched, and each level as it appears.
	var pendingMu sync.Mutex
	pending := map[string]bool{}
	watchUp := func(root string) {
		for d := filepath.Dir(root); ; d = filepath.Dir(d) {
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				_ = w.Add(d)
				return
			}
			if filepath.Dir(d) == d {
				return
			}
		}
	}
	for _, d := range c.cfg.Dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			continue
		}
		roots[abs] = true
		if st, err := os.Stat(abs); err == nil && st.IsDir() {
			addTree(abs)
			continue
		}
		pending[abs] = true
		watchUp(abs)
	}
	// created handles a new directory on the way to a pending root.
	created := func(p string) {
		pendingMu.Lock()
		defer pendingMu.Unlock()
		for root := range pending {
			if p != root && !strings.HasPrefix(root, p+string(filepath.Separator)) {
				continue
			}
			if st, err := os.Stat(root); err == nil && st.IsDir() {
				delete(pending, root)
				addTree(root)
				continue
			}
			watchUp(root)
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				c.dirty.Store(true)
				if ev.Has(fsnotify.Create) {
					created(ev.Name)
				}
				// A new skill folder in a root: watch it too so edits inside are seen.
				if ev.Has(fsnotify.Create) && roots[filepath.Dir(ev.Name)] {
					if st, err := os.Stat(ev.Name); err == nil && st.IsDir() {
						_ = w.Add(ev.Name)
					}
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				// Overflow and friends: we may have missed changes, so rescan.
				c.dirty.Store(true)
				c.logger.Debug("skills watcher", "err", err)
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return func() error {
		var err error
		once.Do(func() {
			close(done)
			err = w.Close()
			wg.Wait()
		})
		return err
	}, nil
}

// changes is the view injector: when the skills on disk differ from those listed in
// the system prompt, it tells the model what was added, changed or removed (each turn,
// since injected entries are not kept).
func (c *catalog) changes(ctx context.Context, _ *tool.RunContext) ([]transcript.Entry, error) {
	cur, problems := c.snapshot(ctx)
	var added, changed, removed []string
	for name, s := range cur {
		old, ok := c.initial[name]
		switch {
		case !ok:
			added = append(added, fmt.Sprintf("- %s: %s", name, textutil.OneLine(s.Description)))
		case old.Description != s.Description || old.Body != s.Body:
			changed = append(changed, fmt.Sprintf("- %s: %s", name, textutil.OneLine(s.Description)))
		}
	}
	for name := range c.initial {
		if _, ok := cur[name]; !ok {
			removed = append(removed, "- "+name)
		}
	}
	if len(added)+len(changed)+len(removed) == 0 {
		return nil, nil
	}
	sort.Strings(added)
	sort.Strings(changed)
	sort.Strings(removed)
	var b strings.Builder
	b.WriteString("<system-reminder>\nThe installed skills changed since this conversation started.")
	if len(added) > 0 {
		b.WriteString("\nNew skills:\n" + strings.Join(added, "\n"))
	}
	if len(changed) > 0 {
		b.WriteString("\nUpdated skills (load them again before relying on them):\n" + strings.Join(changed, "\n"))
	}
	if len(removed) > 0 {
		b.WriteString("\nRemoved skills (no longer available):\n" + strings.Join(removed, "\n"))
	}
	if len(problems) > 0 {
		b.WriteString("\nSkills that failed to load:")
		for _, p := range problems {
			b.WriteString("\n- " + p.Error())
		}
	}
	b.WriteString("\n</system-reminder>")
	e := transcript.UserInput(b.String())
	e.Synthetic = true
	return []transcript.Entry{e}, nil
}

func (c *catalog) lookup(ctx context.Context, name string) (Skill, error) {
	cur, problems := c.snapshot(ctx)
	if s, ok := cur[strings.TrimSpace(name)]; ok {
		return s, nil
	}
	names := make([]string, 0, len(cur))
	for n := range cur {
		names = append(names, n)
	}
	sort.Strings(names)
	msg := fmt.Sprintf("no skill named %q", name)
	for _, p := range problems {
		var pe *ParseError
		if errors.As(p, &pe) && strings.Contains(pe.Path, string(filepath.Separator)+name+string(filepath.Separator)) {
			msg += "; its SKILL.md failed to load: " + p.Error()
		}
	}
	if len(names) > 0 {
		msg += "; available: " + strings.Join(names, ", ")
	}
	return Skill{}, errors.New(msg)
}

type loadArgs struct {
	Name string `json:"name" jsonschema:"description=The skill's name as listed"`
}

func loadTool(c *catalog) tool.Tool {
	return tool.NewResult(LoadToolName, "Load a skill: returns its full instructions (SKILL.md) and the list of its other files. Call it before working on a task that matches a skill's description.",
		func(ctx context.Context, _ *tool.RunContext, a loadArgs) (tool.Result, error) {
			s, err := c.lookup(ctx, a.Name)
			if err != nil {
				return tool.Result{Text: err.Error(), IsError: true}, nil
			}
			if s.DisableModelInvocation {
				return tool.Result{Text: fmt.Sprintf("skill %s is invoked by the user only (/%s); do not load it yourself", s.Name, s.Name), IsError: true}, nil
			}
			c.activate(s)
			var b strings.Builder
			fmt.Fprintf(&b, "# Skill: %s\n", s.Name)
			if s.fsys == nil {
				fmt.Fprintf(&b, "Folder: %s\n", s.Dir)
			}
			if len(s.AllowedTools) > 0 {
				fmt.Fprintf(&b, "Allowed tools while this skill is active: %s (other tools are refused until the run ends or another skill is loaded)\n", strings.Join(s.AllowedTools, ", "))
			}
			b.WriteString("\n" + strings.TrimSpace(s.Body) + "\n")
			files, _ := s.Files(0)
			if len(files) > 0 {
				b.WriteString("\nFiles in this skill (read them with read_skill_file):\n")
				for _, f := range files {
					b.WriteString("- " + f + "\n")
				}
			}
			return tool.Result{Text: b.String()}, nil
		})
}

type readArgs struct {
	Name string `json:"name" jsonschema:"description=The skill's name"`
	Path string `json:"path" jsonschema:"description=File path relative to the skill's folder (as listed by load_skill)"`
}

func readTool(c *catalog) tool.Tool {
	return tool.NewResult(ReadToolName, "Read one file of a skill (a reference, template or script it mentions). The path is relative to the skill's folder.",
		func(ctx context.Context, _ *tool.RunContext, a readArgs) (tool.Result, error) {
			s, err := c.lookup(ctx, a.Name)
			if err != nil {
				return tool.Result{Text: err.Error(), IsError: true}, nil
			}
			data, err := s.ReadFile(a.Path)
			if err != nil {
				if errors.Is(err, os.ErrNotExist) {
					files, _ := s.Files(0)
					return tool.Result{Text: fmt.Sprintf("skill %s has no file %q; its files: %s", s.Name, a.Path, strings.Join(files, ", ")), IsError: true}, nil
				}
				return tool.Result{Text: fmt.Sprintf("cannot read %q of skill %s: %v", a.Path, s.Name, err), IsError: true}, nil
			}
			if !utf8.Valid(data) || strings.ContainsRune(string(data), 0) {
				return tool.Result{Text: fmt.Sprintf("%s is a binary file (%d bytes); only text files can be read", a.Path, len(data)), IsError: true}, nil
			}
			return tool.Result{Text: string(data)}, nil
		})
}
