// Package skills is the built-in skills plugin: agent skills (agentskills.io SKILL.md
// folders) discovered from the bundled set and on-disk directories. Only names and
// descriptions enter the prompt; load_skill and read_skill_file fetch the rest on
// demand. Directories are watched so a change is seen at the next turn.
package skills

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	lerrs "github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/safefile"
	bundledskills "github.com/lovia-dev/lovia/skills"
)

// Source labels where a skill came from.
const SourceBundled = "bundled"

// MaxSkillFileBytes bounds SKILL.md and read_skill_file reads.
const MaxSkillFileBytes = safefile.MaxSkillFile

// Skill is one discovered skill.
type Skill struct {
	Frontmatter
	// Body is the markdown after the frontmatter.
	Body string `json:"-"`
	// Source is "bundled" or the directory root it was found under.
	Source string `json:"source"`
	// Dir is the skill's folder: an absolute path on disk, or "bundled:<name>".
	Dir string `json:"dir"`
	// Path is the SKILL.md location (same convention as Dir).
	Path string `json:"path"`
	// Shadows lists lower-precedence locations of a skill with the same name.
	Shadows []string `json:"shadows,omitempty"`

	fsys fs.FS // the folder's contents (nil for disk skills: read via Dir)
	// denied is Config.Denied for a skill found under the repository (nil otherwise).
	denied func(abs string) string
}

// Config says where skills come from.
type Config struct {
	// Bundled is the embedded set (the repository's skills.FS); nil for none.
	Bundled fs.FS `yaml:"-"`
	// Dirs are on-disk roots, lowest precedence first; a skill in a later root
	// replaces one with the same name from an earlier root (or the bundled set).
	// Missing directories are skipped.
	Dirs []string `yaml:"dirs"`
	// NoWatch disables fsnotify watching (the catalog is then fixed for the run).
	NoWatch bool `yaml:"no_watch"`
	// Repo is the repository root: a skill folder found under it must not link out of
	// it (a repository cannot hand the model a folder elsewhere on the disk).
	Repo string `yaml:"-"`
	// Warn, when set, shows the user each skill that failed to load.
	Warn func(msg string) `yaml:"-"`
	// Denied, when set, says why the workspace policy denies reading abs ("" =
	// allowed). It is asked for every file of a skill under Repo before it is read:
	// a repository skill folder may be (or link to) any directory of the repository,
	// so read_skill_file must not hand the model a file the read rules keep from it
	// (a .env under denied_paths, a key under a read: deny path rule).
	Denied func(abs string) string `yaml:"-"`
}

// DefaultDirs returns the standard roots in precedence order: the user's
// ~/.claude/skills and ~/.config/lovia/skills, then the project's .lovia/skills,
// .agents/skills and .claude/skills under root. Empty arguments skip their part.
func DefaultDirs(home, root string) []string {
	user := ""
	if home != "" {
		user = filepath.Join(home, ".config", "lovia")
	}
	return DirsFor(home, user, root)
}

// DirsFor is DefaultDirs with lovia's user config directory given (it honours
// $XDG_CONFIG_HOME: config.UserDir).
func DirsFor(home, userDir, root string) []string {
	var dirs []string
	if home != "" {
		dirs = append(dirs, filepath.Join(home, ".claude", "skills"))
	}
	if userDir != "" {
		dirs = append(dirs, filepath.Join(userDir, "skills"))
	}
	if root != "" {
		for _, d := range []string{".lovia", ".agents", ".claude"} {
			dirs = append(dirs, filepath.Join(root, d, "skills"))
		}
	}
	return dirs
}

// List discovers every skill (for `lovia skills`). It returns the skills sorted by
// name and one error per folder that could not be loaded (a *ParseError names the
// file and line); the other skills still load.
func List(ctx context.Context, cfg Config) ([]Skill, []error) {
	byName := map[string]*Skill{}
	var problems []error
	add := func(s Skill) {
		if old, ok := byName[s.Name]; ok {
			s.Shadows = append(append(s.Shadows, old.Shadows...), old.Path)
		}
		byName[s.Name] = &s
	}
	if cfg.Bundled != nil {
		skills, errs := scanBundled(cfg.Bundled)
		problems = append(problems, errs...)
		for _, s := range skills {
			add(s)
		}
	}
	for _, root := range cfg.Dirs {
		if ctx.Err() != nil {
			problems = append(problems, ctx.Err())
			break
		}
		skills, errs := scanDir(root, cfg.Repo, cfg.Denied)
		problems = append(problems, errs...)
		for _, s := range skills {
			add(s)
		}
	}
	out := make([]Skill, 0, len(byName))
	for _, s := range byName {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, problems
}

// scanBundled is scanFS of the bundled set. lovia's own skills (bundledskills.FS)
// were parsed at build time (bundled_gen.go): decoding their YAML front matter cost
// every run about as much as the rest of the plugin's setup.
func scanBundled(fsys fs.FS) ([]Skill, []error) {
	if fsys != fs.FS(bundledskills.FS) {
		return scanFS(fsys, SourceBundled)
	}
	out := bundledCatalog()
	for i := range out {
		sub, err := fs.Sub(fsys, strings.TrimPrefix(out[i].Dir, SourceBundled+":"))
		if err != nil {
			return scanFS(fsys, SourceBundled)
		}
		out[i].fsys = sub
	}
	return out, nil
}

func scanFS(fsys fs.FS, label string) ([]Skill, []error) {
	ents, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, []error{fmt.Errorf("bundled skills: %w", err)}
	}
	var out []Skill
	var problems []error
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		p := path.Join(e.Name(), "SKILL.md")
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			continue // a folder without SKILL.md is not a skill
		}
		display := label + ":" + p
		fm, body, err := parse(display, e.Name(), data)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		for _, w := range fm.Warnings {
			problems = append(problems, &Warning{Path: display, Msg: w})
		}
		sub, err := fs.Sub(fsys, e.Name())
		if err != nil {
			problems = append(problems, err)
			continue
		}
		out = append(out, Skill{Frontmatter: fm, Body: body, Source: label, Dir: label + ":" + e.Name(), Path: display, fsys: sub})
	}
	return out, problems
}

func scanDir(root, repo string, denied func(string) string) ([]Skill, []error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, []error{fmt.Errorf("skills directory %s: %w", root, err)}
	}
	// Under the repository, folders must resolve inside it; elsewhere (the user's own
	// skill directories) a symlinked folder is the user's choice.
	realRepo := ""
	if repo != "" {
		if r, err := filepath.Rel(repo, abs); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			realRepo, _ = filepath.EvalSymlinks(repo)
		}
	}
	ents, err := os.ReadDir(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, []error{fmt.Errorf("skills directory %s: %w", abs, err)}
	}
	var out []Skill
	var problems []error
	for _, e := range ents {
		dir := filepath.Join(abs, e.Name())
		// Follow a symlinked skill folder (a common way to share skills).
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		p := filepath.Join(dir, "SKILL.md")
		if realRepo != "" {
			if real, err := filepath.EvalSymlinks(dir); err != nil || !inside(realRepo, real) {
				problems = append(problems, fmt.Errorf("skill folder %s links outside the repository (to %s); lovia does not follow it: replace the link with the folder itself, or remove it", dir, real))
				continue
			}
		}
		var skillDenied func(string) string
		if realRepo != "" {
			skillDenied = denied
		}
		if skillDenied != nil {
			if why := skillDenied(p); why != "" {
				problems = append(problems, fmt.Errorf("skill %s left out: the policy denies reading it (%s)", p, why))
				continue
			}
		}
		// SKILL.md is a regular file that stays inside its folder.
		data, err := safefile.ReadBeneath(dir, p, MaxSkillFileBytes)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				problems = append(problems, withHint(err))
			}
			continue
		}
		fm, body, err := parse(p, e.Name(), data)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		for _, w := range fm.Warnings {
			problems = append(problems, &Warning{Path: p, Msg: w})
		}
		out = append(out, Skill{Frontmatter: fm, Body: body, Source: abs, Dir: dir, Path: p, denied: skillDenied})
	}
	return out, problems
}

// withHint adds an *errs.Error's hint to its text (problems are shown as text).
func withHint(err error) error {
	if h := lerrs.HintOf(err); h != "" {
		return fmt.Errorf("%w (%s)", err, h)
	}
	return err
}

func inside(root, target string) bool {
	r, err := filepath.Rel(root, target)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator))
}

// Files lists the skill's files other than SKILL.md (slash-separated, relative to its
// folder), at most limit entries (0 = 200).
func (s *Skill) Files(limit int) ([]string, error) {
	if limit <= 0 {
		limit = 200
	}
	var files []string
	fsys := s.fsys
	if fsys == nil {
		fsys = os.DirFS(s.Dir)
	}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable subtrees are skipped, not fatal
		}
		if d.IsDir() {
			if p != "." && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		if p == "SKILL.md" || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		if s.denied != nil && s.denied(filepath.Join(s.Dir, filepath.FromSlash(p))) != "" {
			return nil // not listed, as list_files leaves it out
		}
		if len(files) >= limit {
			return fs.SkipAll
		}
		files = append(files, p)
		return nil
	})
	return files, err
}

// ErrOutsideSkill is returned for paths that leave the skill's folder.
var ErrOutsideSkill = errors.New("path leaves the skill's folder")

// ErrDenied is returned for a file of a repository skill the workspace policy
// denies reading.
var ErrDenied = errors.New("the policy denies reading it")

// ReadFile reads a file of the skill, confined to its folder: absolute paths, ".."
// and symlinks that resolve outside the folder are refused.
func (s *Skill) ReadFile(rel string) ([]byte, error) {
	rel = strings.TrimSpace(rel)
	clean := path.Clean(filepath.ToSlash(rel))
	if rel == "" || path.IsAbs(clean) || filepath.IsAbs(rel) || filepath.VolumeName(rel) != "" || !fs.ValidPath(clean) || clean == "." {
		return nil, fmt.Errorf("%q: %w (give a path relative to the skill folder, like 'reference.md')", rel, ErrOutsideSkill)
	}
	if s.fsys != nil {
		data, err := fs.ReadFile(s.fsys, clean)
		if err != nil {
			return nil, err
		}
		if len(data) > MaxSkillFileBytes {
			return nil, fmt.Errorf("%s is %d bytes; the limit is %d", clean, len(data), MaxSkillFileBytes)
		}
		return data, nil
	}
	base, err := filepath.EvalSymlinks(s.Dir)
	if err != nil {
		return nil, err
	}
	target := filepath.Join(base, filepath.FromSlash(clean))
	if st, err := os.Stat(target); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s is a directory; name a file in it", clean)
	}
	if s.denied != nil {
		// The workspace's read rules hold here too (the folder may be the root).
		if why := s.denied(target); why != "" {
			return nil, fmt.Errorf("%q: %w: %s", rel, ErrDenied, why)
		}
	}
	// Read beneath the folder: a link out of it, a FIFO or a device is refused.
	data, err := safefile.ReadBeneath(base, target, MaxSkillFileBytes)
	if errors.Is(err, safefile.ErrOutsideRoot) {
		return nil, fmt.Errorf("%q: %w", rel, ErrOutsideSkill)
	}
	if err != nil {
		return nil, withHint(err)
	}
	return data, nil
}
