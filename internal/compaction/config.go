package compaction

import (
	"fmt"

	"github.com/lovia-dev/lovia/internal/errs"
)

// Amount is a size on the usable window: a fraction of it when <= 1 (0.85 = 85%), an
// absolute number of tokens when > 1 (50000). Zero means "use the default".
type Amount float64

// Tokens resolves a against the usable window.
func (a Amount) Tokens(usable int) int {
	if a <= 1 {
		return int(float64(a) * float64(usable))
	}
	return int(a)
}

// Config tunes the default context policy. Zero values mean the defaults named on
// each field, so a zero Config is the documented default behaviour. It is meant to be
// embedded in the user configuration (`compaction:` in config.yaml and presets).
type Config struct {
	// ReserveOutputTokens is subtracted from the model's context window to get the
	// usable window (default 16384).
	ReserveOutputTokens int `yaml:"reserve_output_tokens,omitempty" json:"reserve_output_tokens,omitempty"`
	// DefaultContextWindow is assumed when the provider does not know the model's
	// window (default 128000; an overflow error still triggers the aggressive path).
	DefaultContextWindow int `yaml:"default_context_window,omitempty" json:"default_context_window,omitempty"`
	// CompactAt: nothing is compacted while the view is below this (default 0.85).
	CompactAt Amount `yaml:"compact_at,omitempty" json:"compact_at,omitempty"`
	// CompactTo: once above CompactAt, stages run until the view is below this
	// (default 0.60).
	CompactTo Amount `yaml:"compact_to,omitempty" json:"compact_to,omitempty"`
	// KeepRecentTokens is the protected tail every stage leaves verbatim (default
	// usable/5, i.e. 0.2).
	KeepRecentTokens Amount `yaml:"keep_recent_tokens,omitempty" json:"keep_recent_tokens,omitempty"`

	Offload OffloadConfig `yaml:"offload,omitempty" json:"offload,omitempty"`
	Clear   ClearConfig   `yaml:"clear,omitempty" json:"clear,omitempty"`
	Summary SummaryConfig `yaml:"summary,omitempty" json:"summary,omitempty"`

	// OverflowTarget and OverflowKeepRecent drive the aggressive re-render after a
	// context-overflow error (defaults 0.25 and 0.10).
	OverflowTarget     Amount `yaml:"overflow_target,omitempty" json:"overflow_target,omitempty"`
	OverflowKeepRecent Amount `yaml:"overflow_keep_recent,omitempty" json:"overflow_keep_recent,omitempty"`
}

// OffloadConfig: huge tool results are replaced by a preview marker and archived.
type OffloadConfig struct {
	Disabled bool `yaml:"disabled,omitempty" json:"disabled,omitempty"`
	// MinChars: results at least this long are offloaded (default 4000).
	MinChars int `yaml:"min_chars,omitempty" json:"min_chars,omitempty"`
	// KeepLast: the most recent N tool results are never offloaded (default 2; -1 = 0).
	KeepLast int `yaml:"keep_last,omitempty" json:"keep_last,omitempty"`
	// PreviewChars: how much of the output the marker keeps (default 400).
	PreviewChars int `yaml:"preview_chars,omitempty" json:"preview_chars,omitempty"`
}

// ClearConfig: older tool results are replaced by a short marker.
type ClearConfig struct {
	Disabled bool `yaml:"disabled,omitempty" json:"disabled,omitempty"`
	// KeepLast: the most recent N tool results are never cleared (default 3; -1 = 0).
	KeepLast int `yaml:"keep_last,omitempty" json:"keep_last,omitempty"`
}

// SummaryConfig: the old prefix is replaced by an incremental LLM summary.
type SummaryConfig struct {
	Disabled bool `yaml:"disabled,omitempty" json:"disabled,omitempty"`
	// MinSaving: skip when the projected saving is below this share of the view
	// (default 0.10).
	MinSaving float64 `yaml:"min_saving,omitempty" json:"min_saving,omitempty"`
	// MaxFailures: after this many consecutive failures in a run the stage is
	// skipped for the rest of the run (default 3).
	MaxFailures int `yaml:"max_failures,omitempty" json:"max_failures,omitempty"`
	// MaxTokens caps the summary's length (default 2048).
	MaxTokens int `yaml:"max_tokens,omitempty" json:"max_tokens,omitempty"`
	// Model optionally names a different "provider:model" for summaries; the front
	// end resolves it when it builds the LLMSummarizer (empty: the run's model).
	Model string `yaml:"model,omitempty" json:"model,omitempty"`
}

// Defaults of Config (SPEC §6).
const (
	DefaultReserveOutputTokens = 16384
	DefaultContextWindow       = 128000
	DefaultCompactAt           = 0.85
	DefaultCompactTo           = 0.60
	DefaultKeepRecent          = 0.20
	DefaultOffloadMinChars     = 4000
	DefaultOffloadKeepLast     = 2
	DefaultOffloadPreviewChars = 400
	DefaultClearKeepLast       = 3
	DefaultSummaryMinSaving    = 0.10
	DefaultSummaryMaxFailures  = 3
	DefaultSummaryMaxTokens    = 2048
	DefaultOverflowTarget      = 0.25
	DefaultOverflowKeepRecent  = 0.10
	minUsableTokens            = 1024
)

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	def := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	defA := func(p *Amount, v Amount) {
		if *p == 0 {
			*p = v
		}
	}
	def(&c.ReserveOutputTokens, DefaultReserveOutputTokens)
	def(&c.DefaultContextWindow, DefaultContextWindow)
	defA(&c.CompactAt, DefaultCompactAt)
	defA(&c.CompactTo, DefaultCompactTo)
	defA(&c.KeepRecentTokens, DefaultKeepRecent)
	defA(&c.OverflowTarget, DefaultOverflowTarget)
	defA(&c.OverflowKeepRecent, DefaultOverflowKeepRecent)
	def(&c.Offload.MinChars, DefaultOffloadMinChars)
	def(&c.Offload.KeepLast, DefaultOffloadKeepLast)
	def(&c.Offload.PreviewChars, DefaultOffloadPreviewChars)
	def(&c.Clear.KeepLast, DefaultClearKeepLast)
	def(&c.Summary.MaxFailures, DefaultSummaryMaxFailures)
	def(&c.Summary.MaxTokens, DefaultSummaryMaxTokens)
	if c.Summary.MinSaving == 0 {
		c.Summary.MinSaving = DefaultSummaryMinSaving
	}
	return c
}

// Validate reports a configuration that cannot work, naming the field and the fix.
func (c Config) Validate() error {
	c = c.WithDefaults()
	bad := func(field, hint, format string, args ...any) error {
		return errs.Newf(errs.KindConfig, hint, "compaction."+field+": "+format, args...)
	}
	for _, a := range []struct {
		name string
		v    Amount
	}{{"compact_at", c.CompactAt}, {"compact_to", c.CompactTo}, {"keep_recent_tokens", c.KeepRecentTokens},
		{"overflow_target", c.OverflowTarget}, {"overflow_keep_recent", c.OverflowKeepRecent}} {
		if a.v < 0 {
			return bad(a.name, "use a fraction of the usable window (0.6) or a token count (40000)", "must not be negative, got %v", float64(a.v))
		}
		if a.v > 1 && a.v != Amount(int(a.v)) {
			return bad(a.name, "values above 1 are token counts and must be whole numbers; use a fraction <= 1 or a token count",
				"must be a whole number of tokens when above 1, got %v", float64(a.v))
		}
	}
	if c.ReserveOutputTokens < 0 {
		return bad("reserve_output_tokens", "use a token count such as 16384", "must not be negative, got %d", c.ReserveOutputTokens)
	}
	// Compare in one unit when both are of the same kind; mixed kinds depend on the
	// model's window and are checked when it is known (see Budget).
	if (c.CompactAt <= 1) == (c.CompactTo <= 1) && c.CompactTo >= c.CompactAt {
		return bad("compact_to", fmt.Sprintf("set compact_to below compact_at (%v)", float64(c.CompactAt)),
			"must be below compact_at, got %v >= %v", float64(c.CompactTo), float64(c.CompactAt))
	}
	if c.Summary.MinSaving < 0 || c.Summary.MinSaving >= 1 {
		return bad("summary.min_saving", "use a fraction such as 0.1", "must be in [0, 1), got %v", c.Summary.MinSaving)
	}
	return nil
}

// keepLast maps the config convention (0 = default, -1 = none) to a count.
func keepLast(n int) int {
	if n < 0 {
		return 0
	}
	return n
}

// Budget is the token arithmetic for one model call.
type Budget struct {
	Window     int // the model's context window
	Usable     int // window minus reserved output
	CompactAt  int // nothing happens below this
	CompactTo  int // a burst shrinks the view below this
	KeepRecent int // protected tail
}

// BudgetFor resolves c against a context window (0 = the configured default).
func (c Config) BudgetFor(window int) Budget {
	c = c.WithDefaults()
	if window <= 0 {
		window = c.DefaultContextWindow
	}
	reserve := c.ReserveOutputTokens
	// A reserve that would eat most of a small window is scaled down: the model still
	// needs room to read.
	if reserve > window/2 {
		reserve = window / 4
	}
	usable := max(window-reserve, min(window, minUsableTokens))
	b := Budget{Window: window, Usable: usable,
		CompactAt: c.CompactAt.Tokens(usable), CompactTo: c.CompactTo.Tokens(usable),
		KeepRecent: c.KeepRecentTokens.Tokens(usable)}
	b.CompactAt = min(b.CompactAt, usable)
	if b.CompactTo >= b.CompactAt {
		b.CompactTo = b.CompactAt * 7 / 10
	}
	b.KeepRecent = min(b.KeepRecent, b.CompactTo)
	return b
}
