package config

import (
	"path/filepath"
	"time"

	"github.com/lovia-dev/lovia/internal/config/trust"
	"github.com/lovia-dev/lovia/internal/preset"
)

// Trust is whether the project folder's loosening settings apply.
type Trust struct {
	// Root is the folder trust is keyed by: the project root, resolved.
	Root string
	// Entries are the project's settings that need trust (config and presets),
	// sorted by file and line. Empty: nothing to trust.
	Entries []trust.Entry
	// Hash identifies exactly those settings (trust.Hash).
	Hash string
	// Trusted: the entries apply (recorded with `lovia trust`, or --trust).
	Trusted bool
	// Via says how: "lovia trust" or "--trust" ("" when not trusted).
	Via string
	// StoreErr is why the trust file could not be read (treated as untrusted).
	StoreErr error
	// Store is the trust file.
	Store trust.Store
}

// Ignored returns the entries that do not apply (none in a trusted folder).
func (t Trust) Ignored() []trust.Entry {
	if t.Trusted {
		return nil
	}
	return t.Entries
}

// Notice is the one message naming the ignored settings and the fix ("" when
// nothing is ignored).
func (t Trust) Notice() string {
	n := trust.Notice(t.Root, t.Ignored())
	if n != "" && t.StoreErr != nil {
		n += "  note: the trust file could not be read: " + t.StoreErr.Error() + "\n"
	}
	return n
}

// Record trusts the folder with its current settings.
func (t Trust) Record() error {
	return t.Store.Trust(t.Root, t.Hash, t.Entries, time.Now())
}

// decideTrust gathers the settings that need trust (the project config's loose
// entries and the project presets') and looks the folder up.
func (c *Config) decideTrust(opts Options, home string, loose []trust.Entry) {
	root := c.Root
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	if c.Compat != nil {
		loose = append(loose, c.Compat.loose...)
	}
	entries := append(loose, preset.ProjectLoosening(preset.Dirs{User: filepath.Join(c.UserDir, "presets"), Project: filepath.Join(c.ProjectDir(), "presets")})...)
	trust.Sort(entries)
	c.Trust = Trust{Root: root, Entries: entries, Hash: trust.Hash(root, entries), Store: trust.NewStore(home)}
	switch {
	case len(entries) == 0:
	case opts.Trust:
		c.Trust.Trusted, c.Trust.Via = true, "--trust"
	default:
		ok, err := c.Trust.Store.Trusted(root, c.Trust.Hash)
		c.Trust.StoreErr = err
		if ok {
			c.Trust.Trusted, c.Trust.Via = true, "lovia trust"
		}
	}
}

// PresetDirs are the preset directories of this configuration, with the project's
// presets trusted or not as the folder is.
func (c *Config) PresetDirs() preset.Dirs {
	return preset.Dirs{User: filepath.Join(c.UserDir, "presets"), Project: filepath.Join(c.ProjectDir(), "presets"),
		TrustProject: c.Trust.Trusted}
}

// EffectivePolicy is the workspace policy of a run whose preset declares
// presetPolicy ("" = none): the environment, a flag or a config file's policy: beat
// the preset, whose policy beats workspace.policy, else coding. An untrusted
// project's policy only tightens the policy the run would have without it.
func (c *Config) EffectivePolicy(presetPolicy string) string {
	src := c.Source("policy")
	if c.tightenPolicy && src.Layer < LayerEnv {
		return trust.Stricter(choosePolicy(c.userPolicy, c.userWSPolicy, presetPolicy), c.projectPolicy)
	}
	top := ""
	if src.Layer > LayerPreset {
		top = c.Policy
	}
	return choosePolicy(top, c.Workspace.Policy, presetPolicy)
}

func choosePolicy(top, workspacePolicy, presetPolicy string) string {
	switch {
	case top != "":
		return top
	case presetPolicy != "":
		return presetPolicy
	case workspacePolicy != "":
		return workspacePolicy
	}
	return DefaultPolicy
}

// nested returns m[a][b] for generic maps (nil when absent).
func nested(m map[string]any, a, b string) any {
	sub, _ := m[a].(map[string]any)
	return sub[b]
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
