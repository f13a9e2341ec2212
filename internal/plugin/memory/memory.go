// Package memory is the built-in long-term memory plugin, built only on plugin seams:
// notes that are always in the prompt (a MEMORY.md per project and a global one,
// within a size budget) and a searchable archive in SQLite FTS5 across sessions, with
// the tools remember, search_memory and forget.
package memory

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"github.com/lovia-dev/lovia/internal/textutil"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	lerrs "github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/plugin"
	"github.com/lovia-dev/lovia/internal/safefile"
	"github.com/lovia-dev/lovia/internal/tool"
)

// DefaultMaxNotesChars is the prompt budget for both MEMORY.md files together.
const DefaultMaxNotesChars = 8000

// maxMemoryChars bounds one remembered item.
const maxMemoryChars = 4000

// Config configures the plugin.
type Config struct {
	// ProjectNotes and GlobalNotes are the MEMORY.md paths ("" disables that file).
	ProjectNotes string `yaml:"project_notes"`
	GlobalNotes  string `yaml:"global_notes"`
	// MaxNotesChars is the prompt budget for the notes (0 = 8000). Pinning refuses to
	// grow the notes past it.
	MaxNotesChars int `yaml:"max_notes_chars"`
	// Project keys the project's archive entries (e.g. the repository root path).
	Project string `yaml:"-"`
	// Archive is the cold tier (nil: remember/search/forget work on the notes only).
	Archive *Archive `yaml:"-"`
	// CheckWrite, when set, is asked before the model's writes to a notes file; an
	// error denies the write (the workspace policy decides, e.g. writes outside the
	// repository).
	CheckWrite func(ctx context.Context, rc *tool.RunContext, path string) error `yaml:"-"`
	// Warn, when set, shows the user a problem that does not stop the run (a notes
	// file refused because it is a link out of its directory, a FIFO, too large).
	Warn func(msg string) `yaml:"-"`
}

// DefaultConfig returns the standard notes locations: <root>/.lovia/MEMORY.md and
// <home>/.config/lovia/MEMORY.md.
func DefaultConfig(home, root string) Config {
	c := Config{Project: root}
	if root != "" {
		c.ProjectNotes = filepath.Join(root, ".lovia", "MEMORY.md")
	}
	if home != "" {
		c.GlobalNotes = filepath.Join(home, ".config", "lovia", "MEMORY.md")
	}
	return c
}

// Plugin is the memory plugin.
type Plugin struct {
	cfg    Config
	logger *slog.Logger
	mu     sync.Mutex // serializes notes file rewrites
}

// New returns the memory plugin. logger may be nil.
func New(cfg Config, logger *slog.Logger) *Plugin {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxNotesChars <= 0 {
		cfg.MaxNotesChars = DefaultMaxNotesChars
	}
	if cfg.Project == "" {
		cfg.Project = "default"
	}
	return &Plugin{cfg: cfg, logger: logger}
}

// warn tells the user (Config.Warn) and the log.
func (p *Plugin) warn(msg string) {
	p.logger.Warn(msg)
	if p.cfg.Warn != nil {
		p.cfg.Warn(msg)
	}
}

// Name implements plugin.Plugin.
func (*Plugin) Name() string { return "memory" }

func (p *Plugin) scopes() []string { return []string{GlobalScope, p.project()} }

func (p *Plugin) project() string { return "project:" + p.cfg.Project }

// readNotes reads a MEMORY.md: a regular file of at most 1 MiB that does not link
// out of its directory (.lovia, ~/.config/lovia). A link to ~/.ssh/id_rsa, a FIFO or
// /dev/zero is refused (the error names the file, the limit and the fix) and never
// read.
func readNotes(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := safefile.ReadBeneath(notesBase(path), path, safefile.MaxNotes)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		if h := lerrs.HintOf(err); h != "" {
			err = fmt.Errorf("%w (%s)", err, h)
		}
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// Notes returns the prompt section with both notes files within the budget (global
// first; the project notes get what is left, at least half).
// A notes file that cannot be read safely is left out, with a warning; the other
// still loads.
func (p *Plugin) Notes() (string, error) {
	global, err := readNotes(p.cfg.GlobalNotes)
	if err != nil {
		p.warn(fmt.Sprintf("memory notes left out: %v", err))
	}
	project, err := readNotes(p.cfg.ProjectNotes)
	if err != nil {
		p.warn(fmt.Sprintf("memory notes left out: %v", err))
	}
	budget := p.cfg.MaxNotesChars
	gLen, pLen := utf8.RuneCountInString(global), utf8.RuneCountInString(project)
	gKeep := min(gLen, budget-min(pLen, budget/2))
	global, project = fit(global, gKeep), fit(project, budget-gKeep)
	var b strings.Builder
	b.WriteString("## Memory\nNotes you (or the user) saved in earlier sessions. Trust them unless the code says otherwise. Save durable facts worth knowing next time (user preferences, project conventions, hard-won fixes) with remember; pin only what every future session needs. Look up older knowledge with search_memory; drop wrong or stale entries with forget.")
	if global != "" {
		fmt.Fprintf(&b, "\n\n### Global notes (%s)\n%s", p.cfg.GlobalNotes, global)
	}
	if project != "" {
		fmt.Fprintf(&b, "\n\n### Project notes (%s)\n%s", p.cfg.ProjectNotes, project)
	}
	return b.String(), nil
}

// fit caps s at n characters, announcing the cut (n <= 0 keeps nothing).
func fit(s string, n int) string {
	if s == "" || utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 0 {
		return "[notes omitted: over the memory budget]"
	}
	out, _ := tool.Truncate(s, n)
	return out
}

// Setup implements plugin.Plugin.
func (p *Plugin) Setup(_ context.Context, _ *tool.RunContext) (*plugin.Contribution, error) {
	notes, err := p.Notes()
	if err != nil {
		// An unreadable notes file must not stop the run.
		p.logger.Warn("memory notes unreadable", "err", err)
		notes = "## Memory\n(notes unreadable: " + err.Error() + ")"
	}
	return &plugin.Contribution{
		Instructions: notes,
		Tools:        []tool.Tool{p.rememberTool(), p.searchTool(), p.forgetTool()},
	}, nil
}

type rememberArgs struct {
	Content string `json:"content" jsonschema:"description=The fact to remember, self-contained (it will be read without this conversation)"`
	Scope   string `json:"scope,omitempty" jsonschema:"enum=project,enum=global,description=project (default): about this repository; global: about the user or all projects"`
	Pin     bool   `json:"pin,omitempty" jsonschema:"description=Also add it to MEMORY.md so it is in every future prompt (use sparingly)"`
	Tags    string `json:"tags,omitempty" jsonschema:"description=Optional space-separated keywords that help find it later"`
}

func (p *Plugin) notesPath(scope string) string {
	if scope == GlobalScope {
		return p.cfg.GlobalNotes
	}
	return p.cfg.ProjectNotes
}

func (p *Plugin) rememberTool() tool.Tool {
	return tool.NewResult("remember", "Save a durable fact for future sessions: into the searchable archive, and with pin=true also into the always-loaded MEMORY.md notes.",
		func(ctx context.Context, rc *tool.RunContext, a rememberArgs) (tool.Result, error) {
			content := strings.TrimSpace(a.Content)
			switch {
			case content == "":
				return tool.Result{Text: "nothing to remember: content is empty", IsError: true}, nil
			case utf8.RuneCountInString(content) > maxMemoryChars:
				return tool.Result{Text: fmt.Sprintf("content is %d characters; keep one memory under %d and split larger knowledge into several", utf8.RuneCountInString(content), maxMemoryChars), IsError: true}, nil
			}
			scope := p.project()
			if a.Scope == GlobalScope {
				scope = GlobalScope
			}
			var parts []string
			if a.Pin {
				path := p.notesPath(a.Scope)
				if err := p.pin(ctx, rc, path, content); err != nil {
					return tool.Result{Text: tool.ErrorText(err), IsError: true}, nil
				}
				parts = append(parts, "pinned to "+path)
			}
			if p.cfg.Archive != nil {
				it := Item{Scope: scope, Content: content, Tags: a.Tags, Pinned: a.Pin}
				if rc != nil {
					it.SessionID, it.RunID = rc.SessionID, rc.RunID
				}
				id, err := p.cfg.Archive.Add(ctx, it)
				if err != nil {
					return tool.Result{Text: tool.ErrorText(err), IsError: true}, nil
				}
				parts = append([]string{"saved as m" + strconv.FormatInt(id, 10)}, parts...)
			} else if !a.Pin {
				return tool.Result{Text: "no memory archive is configured; use pin=true to save it to MEMORY.md", IsError: true}, nil
			}
			return tool.Result{Text: "Remembered (" + strings.Join(parts, "; ") + ")."}, nil
		})
}

// pin appends "- content" to the notes file at path, within the budget.
func (p *Plugin) pin(ctx context.Context, rc *tool.RunContext, path, content string) error {
	if path == "" {
		return errors.New("no MEMORY.md is configured for that scope")
	}
	if p.cfg.CheckWrite != nil {
		if err := p.cfg.CheckWrite(ctx, rc, path); err != nil {
			return fmt.Errorf("writing %s is not allowed: %v", path, err)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	cur, err := readNotes(path)
	if err != nil {
		return err
	}
	line := "- " + textutil.OneLine(content)
	if strings.Contains("\n"+cur+"\n", "\n"+line+"\n") {
		return nil // already pinned
	}
	next := line
	if cur != "" {
		next = cur + "\n" + line
	}
	other := p.cfg.GlobalNotes
	if path == p.cfg.GlobalNotes {
		other = p.cfg.ProjectNotes
	}
	otherText, _ := readNotes(other)
	if total := utf8.RuneCountInString(next) + utf8.RuneCountInString(otherText); total > p.cfg.MaxNotesChars {
		return fmt.Errorf("MEMORY.md notes would be %d characters, over the %d budget: forget a stale note first, or save it unpinned", total, p.cfg.MaxNotesChars)
	}
	return writeAtomic(path, next+"\n")
}

// unpin removes the note lines equal to "- content"; it reports how many it removed.
func (p *Plugin) unpin(ctx context.Context, rc *tool.RunContext, path string, match func(line string) bool) (int, error) {
	if path == "" {
		return 0, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	cur, err := readNotes(path)
	if err != nil || cur == "" {
		return 0, err
	}
	var keep []string
	removed := 0
	for _, l := range strings.Split(cur, "\n") {
		if match(l) {
			removed++
			continue
		}
		keep = append(keep, l)
	}
	if removed == 0 {
		return 0, nil
	}
	if p.cfg.CheckWrite != nil {
		if err := p.cfg.CheckWrite(ctx, rc, path); err != nil {
			return 0, fmt.Errorf("writing %s is not allowed: %v", path, err)
		}
	}
	text := strings.TrimSpace(strings.Join(keep, "\n"))
	if text != "" {
		text += "\n"
	}
	return removed, writeAtomic(path, text)
}

// notesBase is the directory a notes file must stay beneath. A project's notes
// (<root>/.lovia/MEMORY.md) stay inside the project: .lovia is repository content
// and may be a link (to ~/.config/lovia, swapped in by a command after the write was
// judged). The user's own notes stay in their directory, which may be a link of the
// user's (a dotfiles checkout).
func notesBase(path string) string {
	dir := filepath.Dir(path)
	if filepath.Base(dir) == ".lovia" {
		return filepath.Dir(dir)
	}
	return dir
}

// writeAtomic replaces the notes file path with text: a temporary file beside it,
// renamed over it, both through an os.Root of notesBase(path), so no link on the way
// (one swapped in after the write was judged) carries the write out of it.
func writeAtomic(path, text string) error {
	base := notesBase(path)
	rel, err := filepath.Rel(base, path)
	if err != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("notes file %s is not inside %s", path, base)
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return err
	}
	r, err := os.OpenRoot(base)
	if err != nil {
		return err
	}
	defer r.Close()
	dir := filepath.Dir(rel)
	if err := r.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("notes directory %s: %w", filepath.Join(base, dir), err)
	}
	tmp := filepath.Join(dir, ".memory-"+rand.Text()[:12]+".tmp")
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		r.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		r.Remove(tmp)
		return err
	}
	if err := r.Rename(tmp, rel); err != nil {
		r.Remove(tmp)
		return err
	}
	return nil
}

type searchArgs struct {
	Query string `json:"query" jsonschema:"description=Words to look for"`
	Limit int    `json:"limit,omitempty" jsonschema:"description=Maximum results (default 10),minimum=1,maximum=50"`
}

func (p *Plugin) searchTool() tool.Tool {
	return tool.NewResult("search_memory", "Search memories saved in earlier sessions (this project's and global ones), best matches first.",
		func(ctx context.Context, _ *tool.RunContext, a searchArgs) (tool.Result, error) {
			if p.cfg.Archive == nil {
				return tool.Result{Text: "no memory archive is configured; only the MEMORY.md notes in your instructions exist", IsError: true}, nil
			}
			items, err := p.cfg.Archive.Search(ctx, a.Query, p.scopes(), min(max(a.Limit, 0), 50))
			if err != nil {
				return tool.Result{Text: tool.ErrorText(err), IsError: true}, nil
			}
			if len(items) == 0 {
				return tool.Result{Text: "No memories match " + strconv.Quote(a.Query) + "."}, nil
			}
			var b strings.Builder
			for _, it := range items {
				scope := "project"
				if it.Scope == GlobalScope {
					scope = "global"
				}
				pin := ""
				if it.Pinned {
					pin = ", pinned"
				}
				fmt.Fprintf(&b, "m%d (%s%s, %s): %s\n", it.ID, scope, pin, it.Created.Format(time.DateOnly), it.Content)
			}
			return tool.Result{Text: strings.TrimRight(b.String(), "\n")}, nil
		})
}

type forgetArgs struct {
	ID   string `json:"id,omitempty" jsonschema:"description=Archive id to delete, like m12 (from search_memory)"`
	Note string `json:"note,omitempty" jsonschema:"description=Exact text of a MEMORY.md note line to remove (without the leading '- ')"`
}

func (p *Plugin) forgetTool() tool.Tool {
	return tool.NewResult("forget", "Delete a wrong or stale memory: an archive entry by id (which also unpins it), or a MEMORY.md note by its text.",
		func(ctx context.Context, rc *tool.RunContext, a forgetArgs) (tool.Result, error) {
			var done []string
			if id := strings.TrimSpace(a.ID); id != "" {
				if p.cfg.Archive == nil {
					return tool.Result{Text: "no memory archive is configured", IsError: true}, nil
				}
				n, err := strconv.ParseInt(strings.TrimPrefix(strings.ToLower(id), "m"), 10, 64)
				if err != nil {
					return tool.Result{Text: fmt.Sprintf("%q is not a memory id; ids look like m12", id), IsError: true}, nil
				}
				it, ok, err := p.cfg.Archive.Get(ctx, n, p.scopes())
				if err != nil {
					return tool.Result{Text: tool.ErrorText(err), IsError: true}, nil
				}
				if !ok {
					return tool.Result{Text: fmt.Sprintf("no memory m%d here; find ids with search_memory", n), IsError: true}, nil
				}
				if it.Pinned {
					scope := "project"
					if it.Scope == GlobalScope {
						scope = GlobalScope
					}
					line := "- " + textutil.OneLine(it.Content)
					if _, err := p.unpin(ctx, rc, p.notesPath(scope), func(l string) bool { return strings.TrimSpace(l) == line }); err != nil {
						return tool.Result{Text: tool.ErrorText(err), IsError: true}, nil
					}
				}
				if err := p.cfg.Archive.Remove(ctx, n); err != nil {
					return tool.Result{Text: tool.ErrorText(err), IsError: true}, nil
				}
				done = append(done, fmt.Sprintf("deleted m%d", n))
			}
			if note := textutil.OneLine(strings.TrimPrefix(strings.TrimSpace(a.Note), "- ")); note != "" {
				total := 0
				for _, path := range []string{p.cfg.ProjectNotes, p.cfg.GlobalNotes} {
					n, err := p.unpin(ctx, rc, path, func(l string) bool {
						return textutil.OneLine(strings.TrimPrefix(strings.TrimSpace(l), "- ")) == note
					})
					if err != nil {
						return tool.Result{Text: tool.ErrorText(err), IsError: true}, nil
					}
					if n > 0 {
						done = append(done, fmt.Sprintf("removed the note from %s", path))
					}
					total += n
				}
				if total == 0 {
					return tool.Result{Text: "no MEMORY.md note has exactly that text; copy the line from your instructions", IsError: true}, nil
				}
			}
			if len(done) == 0 {
				return tool.Result{Text: "give id (from search_memory) or note (a MEMORY.md line)", IsError: true}, nil
			}
			return tool.Result{Text: "Forgotten: " + strings.Join(done, "; ") + "."}, nil
		})
}
