// Package commands reads custom slash commands: Markdown prompt files in
// .lovia/commands and .claude/commands (the project's) and ~/.config/lovia/commands
// and ~/.claude/commands (the user's), in Claude Code's format: optional front matter
// (description, argument-hint, model, allowed-tools), a body where $ARGUMENTS and
// $1…$9 take the command's arguments, and @path includes of repository files.
//
// A command is only a prompt: it runs nothing by itself (Claude Code's !`command`
// lines are left as text), and its allowed-tools only narrow the tools of the run it
// starts, never approve anything. So project commands need no folder trust.
package commands

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml"

	"github.com/lovia-dev/lovia/internal/safefile"
)

// MaxFileBytes bounds one command file and one @path include.
const MaxFileBytes = 256 << 10

// maxIncludes bounds the @path includes of one invocation.
const maxIncludes = 20

// Command is one slash command.
type Command struct {
	// Name is what follows the slash: the file name without .md; in a subfolder
	// "sub:name".
	Name         string   `json:"name"`
	Description  string   `json:"description,omitempty"`
	ArgumentHint string   `json:"argument_hint,omitempty"`
	Model        string   `json:"model,omitempty"`
	AllowedTools []string `json:"allowed_tools,omitempty"`
	Body         string   `json:"-"`
	Path         string   `json:"path"`
	// Scope is "project", "user" or "skill".
	Scope string `json:"scope"`
}

// Dir is one folder of command files.
type Dir struct {
	Path  string
	Scope string // "project" or "user"
	// Within is the tree the files must stay in (the repository for project
	// folders; "" for the user's own, which may be links).
	Within string
	// Prefix is put before each command's name (Codex's prompts are /prompts:name).
	Prefix string
}

// Dirs are the command folders, lowest precedence first: the user's (Claude Code's,
// then lovia's), then the project's (Claude Code's, then lovia's). A later command
// with the same name replaces an earlier one.
func Dirs(home, userDir, root string) []Dir {
	var out []Dir
	if home != "" {
		out = append(out, Dir{Path: filepath.Join(home, ".codex", "prompts"), Scope: "user", Prefix: "prompts:"},
			Dir{Path: filepath.Join(home, ".claude", "commands"), Scope: "user"})
	}
	if userDir != "" {
		out = append(out, Dir{Path: filepath.Join(userDir, "commands"), Scope: "user"})
	}
	if root != "" {
		out = append(out, Dir{Path: filepath.Join(root, ".claude", "commands"), Scope: "project", Within: root},
			Dir{Path: filepath.Join(root, ".lovia", "commands"), Scope: "project", Within: root})
	}
	return out
}

// Load reads every command of dirs, sorted by name. Problems (unreadable files, bad
// front matter) are returned alongside; the other commands still load.
func Load(dirs []Dir) ([]Command, []error) {
	byName := map[string]Command{}
	var problems []error
	for _, d := range dirs {
		_ = filepath.WalkDir(d.Path, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					problems = append(problems, err)
				}
				return nil
			}
			if e.IsDir() {
				if p != d.Path && strings.HasPrefix(e.Name(), ".") {
					return fs.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(e.Name(), ".md") {
				return nil
			}
			var data []byte
			if d.Within != "" {
				data, err = safefile.ReadBeneath(d.Within, p, MaxFileBytes)
			} else {
				data, err = safefile.ReadNamed(p, MaxFileBytes)
			}
			if err != nil {
				problems = append(problems, fmt.Errorf("command %s left out: %w", p, err))
				return nil
			}
			rel, _ := filepath.Rel(d.Path, p)
			name := strings.TrimSuffix(filepath.ToSlash(rel), ".md")
			name = d.Prefix + strings.ReplaceAll(name, "/", ":")
			c, err := Parse(p, name, data)
			if err != nil {
				problems = append(problems, err)
				return nil
			}
			c.Scope = d.Scope
			byName[c.Name] = c
			return nil
		})
	}
	out := make([]Command, 0, len(byName))
	for _, c := range byName {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, problems
}

// Parse reads one command file.
func Parse(path, name string, data []byte) (Command, error) {
	if !utf8.Valid(data) {
		return Command{}, fmt.Errorf("command %s: not UTF-8 text", path)
	}
	text := strings.ReplaceAll(strings.TrimPrefix(string(data), "\ufeff"), "\r\n", "\n")
	c := Command{Name: name, Path: path}
	header, body, ok := frontMatter(text)
	if ok {
		var raw map[string]any
		if err := yaml.Unmarshal([]byte(header), &raw); err != nil {
			return Command{}, fmt.Errorf("command %s: invalid front matter: %w", path, err)
		}
		c.Description = str(raw["description"])
		c.ArgumentHint = str(raw["argument-hint"])
		c.Model = str(raw["model"])
		c.AllowedTools = ToolList(raw["allowed-tools"])
		text = body
	}
	c.Body = strings.TrimSpace(text)
	if c.Description == "" {
		// As Claude Code: the first line of the prompt describes it.
		first, _, _ := strings.Cut(c.Body, "\n")
		c.Description = strings.TrimSpace(strings.TrimLeft(first, "# "))
		if utf8.RuneCountInString(c.Description) > 80 {
			c.Description = string([]rune(c.Description)[:79]) + "…"
		}
	}
	return c, nil
}

func str(v any) string {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x)
	case nil:
		return ""
	}
	return strings.TrimSpace(fmt.Sprint(v))
}

// frontMatter splits "---\nheader\n---\nbody".
func frontMatter(text string) (header, body string, ok bool) {
	if !strings.HasPrefix(text, "---\n") {
		return "", text, false
	}
	rest := text[4:]
	for off := 0; off < len(rest); {
		end := strings.IndexByte(rest[off:], '\n')
		line := rest[off:]
		next := len(rest)
		if end >= 0 {
			line, next = rest[off:off+end], off+end+1
		}
		if strings.TrimRight(line, " \t") == "---" {
			return rest[:off], rest[next:], true
		}
		off = next
	}
	return "", text, false
}

// ToolList reads allowed-tools as Claude Code and the skills spec write it: a YAML
// list, or one string separated by commas or spaces ("Read, Grep", "Read Grep",
// "Bash(git add:*), Bash(git status:*)"); parentheses keep their spaces.
func ToolList(v any) []string {
	switch x := v.(type) {
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, ToolList(e)...)
		}
		return out
	case string:
		sep := func(r rune) bool { return r == ',' }
		if !strings.Contains(x, ",") {
			sep = func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' }
		}
		var out []string
		depth, start := 0, 0
		flush := func(end int) {
			if t := strings.TrimSpace(x[start:end]); t != "" {
				out = append(out, t)
			}
		}
		for i, r := range x {
			switch {
			case r == '(':
				depth++
			case r == ')' && depth > 0:
				depth--
			case depth == 0 && sep(r):
				flush(i)
				start = i + len(string(r))
			}
		}
		flush(len(x))
		return out
	}
	return nil
}

// Split parses "/name args" (ok=false when text is not a slash command).
func Split(text string) (name, args string, ok bool) {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "/") {
		return "", "", false
	}
	first, rest, _ := strings.Cut(t, " ")
	name = first[1:]
	if name == "" || strings.Contains(name, "/") {
		return "", "", false // a path such as /etc/hosts
	}
	return name, strings.TrimSpace(rest), true
}

var posRE = regexp.MustCompile(`\$(ARGUMENTS|[1-9])`)

// Expand fills the command's body with args: $ARGUMENTS is all of them, $1…$9 the
// words (quotes group); when the body names none, the arguments are appended, as
// Claude Code does. @path includes of files under root are attached (read beneath
// root: a link out of it is refused; denied, when set, says why the workspace policy
// denies reading a path), with notes for those left out.
func (c Command) Expand(args, root string, denied func(abs string) string) (string, []string) {
	words := splitArgs(args)
	used := false
	out := posRE.ReplaceAllStringFunc(c.Body, func(m string) string {
		used = true
		if m == "$ARGUMENTS" {
			return args
		}
		i := int(m[1] - '1')
		if i < len(words) {
			return words[i]
		}
		return ""
	})
	if !used && args != "" {
		out += "\n\nARGUMENTS: " + args
	}
	att, notes := includes(out, root, denied)
	return out + att, notes
}

// includes attaches the files @path names under root.
func includes(text, root string, denied func(string) string) (string, []string) {
	if root == "" {
		return "", nil
	}
	var b strings.Builder
	var notes []string
	seen := map[string]bool{}
	for _, p := range atPaths(text) {
		if seen[p] || len(seen) >= maxIncludes {
			continue
		}
		seen[p] = true
		full := filepath.Clean(filepath.Join(root, p))
		if filepath.IsAbs(p) {
			full = filepath.Clean(p)
		}
		if denied != nil {
			if why := denied(full); why != "" {
				notes = append(notes, fmt.Sprintf("@%s not included: the policy denies reading it (%s)", p, why))
				continue
			}
		}
		data, err := safefile.ReadBeneath(root, full, MaxFileBytes)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			notes = append(notes, fmt.Sprintf("@%s not included: %v", p, err))
			continue
		}
		if st, err := os.Stat(full); err == nil && st.IsDir() {
			continue
		}
		fence := "```"
		for strings.Contains(string(data), fence) {
			fence += "`"
		}
		fmt.Fprintf(&b, "\n\nContents of %s:\n%s\n%s\n%s", p, fence, strings.TrimRight(string(data), "\n"), fence)
	}
	return b.String(), notes
}

var atRE = regexp.MustCompile(`(?:^|[\s(])@((?:\.{1,2}/|/)?[A-Za-z0-9_.\-][A-Za-z0-9_./\-]*)`)

func atPaths(text string) []string {
	var out []string
	for _, m := range atRE.FindAllStringSubmatch(text, -1) {
		p := strings.TrimRight(m[1], ".,;:)")
		if strings.Contains(p, ".") || strings.Contains(p, "/") {
			out = append(out, p)
		}
	}
	return out
}

// splitArgs splits words, keeping "quoted words" together.
func splitArgs(s string) []string {
	var out []string
	var cur strings.Builder
	quote := rune(0)
	has := false
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '"' || r == '\''):
			quote, has = r, true
		case quote == 0 && (r == ' ' || r == '\t' || r == '\n'):
			if has {
				out = append(out, cur.String())
				cur.Reset()
				has = false
			}
		default:
			cur.WriteRune(r)
			has = true
		}
	}
	if has {
		out = append(out, cur.String())
	}
	return out
}
