package skills

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml"

	"github.com/lovia-dev/lovia/internal/commands"
	"github.com/lovia-dev/lovia/internal/config/yamlfile"
	lerrs "github.com/lovia-dev/lovia/internal/errs"
)

// Limits from the agentskills.io specification.
const (
	MaxNameLen          = 64
	MaxDescriptionLen   = 1024
	MaxCompatibilityLen = 500
)

var nameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// ParseError is a SKILL.md problem with its location (Line is 1-based, 0 = unknown).
type ParseError struct {
	Path string
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
	}
	return e.Path + ": " + e.Msg
}

// Frontmatter is a SKILL.md header. Fields the spec defines are typed; every other
// field is kept in Extra.
type Frontmatter struct {
	Name          string            `json:"name"`
	Description   string            `json:"description"`
	License       string            `json:"license,omitempty"`
	Compatibility string            `json:"compatibility,omitempty"`
	AllowedTools  []string          `json:"allowed_tools,omitempty"`
	Metadata      map[string]string `json:"metadata,omitempty"`
	// DisableModelInvocation hides the skill from the model's list (Claude Code's
	// disable-model-invocation): the user invokes it as /name.
	DisableModelInvocation bool           `json:"disable_model_invocation,omitempty"`
	Extra                  map[string]any `json:"extra,omitempty"`
	// Warnings are problems that did not stop the skill from loading (a description
	// cut to the limit, a name taken from the folder).
	Warnings []string `json:"-"`
}

// Warning is a SKILL.md problem the skill loaded despite.
type Warning struct {
	Path string
	Msg  string
}

func (w *Warning) Error() string { return w.Path + ": " + w.Msg }

// folderName is the skill name a folder gives when SKILL.md has none: lowercased,
// runs of other characters made single hyphens.
func folderName(dir string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(dir) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	return b.String()
}

// Parse splits a SKILL.md into its validated frontmatter and markdown body. path
// labels errors (line numbers count from the top of the file) and its folder names a
// skill whose frontmatter has no name.
func Parse(path string, data []byte) (Frontmatter, string, error) {
	dir := filepath.Base(filepath.Dir(filepath.FromSlash(path)))
	if i := strings.LastIndexByte(dir, ':'); i >= 0 {
		dir = dir[i+1:]
	}
	return parse(path, dir, data)
}

func parse(path, folder string, data []byte) (Frontmatter, string, error) {
	var fm Frontmatter
	fail := func(line int, format string, args ...any) (Frontmatter, string, error) {
		return Frontmatter{}, "", &ParseError{Path: path, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	if !utf8.Valid(data) {
		return fail(0, "not valid UTF-8 text")
	}
	text := strings.TrimPrefix(string(data), "\ufeff")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") {
		return fail(1, "missing YAML frontmatter: the file must start with a line '---', then 'name:' and 'description:', then a closing '---'")
	}
	rest := text[len("---\n"):]
	var header string
	var body string
	closed := false
	for off := 0; off <= len(rest); {
		end := strings.IndexByte(rest[off:], '\n')
		line := rest[off:]
		next := len(rest) + 1
		if end >= 0 {
			line = rest[off : off+end]
			next = off + end + 1
		}
		if strings.TrimRight(line, " \t") == "---" {
			header = rest[:off]
			if next <= len(rest) {
				body = rest[next:]
			}
			closed = true
			break
		}
		off = next
	}
	if !closed {
		return fail(1, "frontmatter is not closed: add a line '---' after the YAML header")
	}
	var raw map[string]any
	if strings.TrimSpace(header) != "" {
		if err := yamlfile.Check(path, []byte(header)); err != nil {
			return fail(0, "invalid YAML frontmatter: %v (%s)", err, lerrs.HintOf(err))
		}
		if err := yaml.Unmarshal([]byte(header), &raw); err != nil {
			line, msg := 0, err.Error()
			var ye yaml.Error
			if errors.As(err, &ye) {
				msg = ye.GetMessage()
				if tk := ye.GetToken(); tk != nil && tk.Position != nil {
					line = tk.Position.Line + 1 // the header starts on line 2
				}
			}
			return fail(line, "invalid YAML frontmatter: %s", msg)
		}
	}
	lineOf := func(key string) int {
		for i, l := range strings.Split(header, "\n") {
			if strings.HasPrefix(l, key+":") {
				return i + 2
			}
		}
		return 1
	}
	str := func(key string, required bool) (string, error) {
		v, ok := raw[key]
		if !ok || v == nil {
			if required {
				return "", &ParseError{Path: path, Line: 1, Msg: fmt.Sprintf("frontmatter has no %q field; add '%s: ...'", key, key)}
			}
			return "", nil
		}
		s, ok := v.(string)
		if !ok {
			return "", &ParseError{Path: path, Line: lineOf(key), Msg: fmt.Sprintf("%q must be a string, got %T", key, v)}
		}
		return strings.TrimSpace(s), nil
	}
	var err error
	if fm.Name, err = str("name", false); err != nil {
		return Frontmatter{}, "", err
	}
	if fm.Name == "" {
		// As Claude Code: a skill is named by its folder unless it says otherwise.
		fm.Name = folderName(folder)
	}
	if fm.Description, err = str("description", false); err != nil {
		return Frontmatter{}, "", err
	}
	if fm.Description == "" {
		// The first paragraph of the body describes it (Claude Code's fallback).
		para, _, _ := strings.Cut(strings.TrimSpace(stripHeadings(body)), "\n\n")
		fm.Description = strings.Join(strings.Fields(para), " ")
	}
	if fm.License, err = str("license", false); err != nil {
		return Frontmatter{}, "", err
	}
	if fm.Compatibility, err = str("compatibility", false); err != nil {
		return Frontmatter{}, "", err
	}
	switch n := utf8.RuneCountInString(fm.Name); {
	case n == 0:
		return fail(lineOf("name"), "name is empty")
	case n > MaxNameLen:
		return fail(lineOf("name"), "name is %d characters; the limit is %d", n, MaxNameLen)
	case !nameRE.MatchString(fm.Name):
		return fail(lineOf("name"), "name %q must use lowercase letters, digits and single hyphens (e.g. 'pdf-forms')", fm.Name)
	}
	switch n := utf8.RuneCountInString(fm.Description); {
	case n == 0:
		return fail(lineOf("description"), "description is empty; say what the skill does and when to use it")
	case n > MaxDescriptionLen:
		// Public skills exceed the limit (claude-api's is 1,068): cut, do not refuse.
		fm.Description = strings.TrimSpace(string([]rune(fm.Description)[:MaxDescriptionLen-1])) + "…"
		fm.Warnings = append(fm.Warnings, fmt.Sprintf("description is %d characters; truncated to the limit of %d", n, MaxDescriptionLen))
	}
	if n := utf8.RuneCountInString(fm.Compatibility); n > MaxCompatibilityLen {
		return fail(lineOf("compatibility"), "compatibility is %d characters; the limit is %d", n, MaxCompatibilityLen)
	}
	// allowed-tools: a space-separated string in the spec; a YAML list is accepted too.
	// Claude Code's skills write "Read, Grep, Glob"; Bash(git add:*) keeps its space.
	switch v := raw["allowed-tools"].(type) {
	case nil:
	case string:
		fm.AllowedTools = commands.ToolList(v)
	case []any:
		for _, x := range v {
			if _, ok := x.(string); !ok {
				return fail(lineOf("allowed-tools"), "allowed-tools entries must be strings, got %T", x)
			}
		}
		fm.AllowedTools = commands.ToolList(v)
	default:
		return fail(lineOf("allowed-tools"), "allowed-tools must be a list or a comma- or space-separated string, got %T", v)
	}
	switch v := raw["disable-model-invocation"].(type) {
	case bool:
		fm.DisableModelInvocation = v
	case string:
		fm.DisableModelInvocation = strings.EqualFold(strings.TrimSpace(v), "true")
	}
	if v, ok := raw["metadata"]; ok && v != nil {
		m, ok := v.(map[string]any)
		if !ok {
			return fail(lineOf("metadata"), "metadata must be a mapping of string keys to string values")
		}
		fm.Metadata = make(map[string]string, len(m))
		for k, x := range m {
			fm.Metadata[k] = fmt.Sprint(x)
		}
	}
	for k, v := range raw {
		switch k {
		case "name", "description", "license", "compatibility", "allowed-tools", "metadata", "disable-model-invocation":
			continue
		}
		if fm.Extra == nil {
			fm.Extra = map[string]any{}
		}
		fm.Extra[k] = v
	}
	return fm, string(bytes.TrimLeft([]byte(body), "\n")), nil
}

// stripHeadings drops Markdown heading lines (a description is prose).
func stripHeadings(body string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
