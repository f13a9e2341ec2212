package config

import (
	"fmt"
	"time"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/provider"
)

// Provider holds the model-request settings (config `provider:`).
type Provider struct {
	// ConnectTimeout, HeaderTimeout and StreamIdleTimeout are Go durations ("30s",
	// "2m"); "0" turns that limit off. Empty: the default.
	ConnectTimeout    string `yaml:"connect_timeout,omitempty" json:"connect_timeout,omitempty"`
	HeaderTimeout     string `yaml:"header_timeout,omitempty" json:"header_timeout,omitempty"`
	StreamIdleTimeout string `yaml:"stream_idle_timeout,omitempty" json:"stream_idle_timeout,omitempty"`
	// MaxAttempts counts the first try of a model request (default 5).
	MaxAttempts int `yaml:"max_attempts,omitempty" json:"max_attempts,omitempty"`
}

// timeoutKeys maps each provider duration key to its field.
func (p *Provider) timeoutField(key string) *string {
	switch key {
	case "provider.connect_timeout":
		return &p.ConnectTimeout
	case "provider.header_timeout":
		return &p.HeaderTimeout
	case "provider.stream_idle_timeout":
		return &p.StreamIdleTimeout
	}
	return nil
}

func parseTimeout(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, err
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration")
	}
	return d, nil
}

// Validate refuses durations that do not parse or are negative.
func (p Provider) Validate() error {
	for _, k := range []string{"provider.connect_timeout", "provider.header_timeout", "provider.stream_idle_timeout"} {
		v := *p.timeoutField(k)
		if v == "" {
			continue
		}
		if _, err := parseTimeout(v); err != nil {
			return errs.Newf(errs.KindConfig, "use a Go duration >= 0 such as 30s or 5m (0 turns the limit off)", "%s %q is not a valid duration", k, v)
		}
	}
	if p.MaxAttempts < 0 {
		return errs.Newf(errs.KindConfig, "use a whole number >= 1 (0 = default 5)", "provider.max_attempts must not be negative")
	}
	return nil
}

// Timeouts returns the effective request timeouts (defaults where unset).
func (p Provider) Timeouts() provider.Timeouts {
	t := provider.DefaultTimeouts()
	for k, dst := range map[string]*time.Duration{
		"provider.connect_timeout":     &t.Connect,
		"provider.header_timeout":      &t.Header,
		"provider.stream_idle_timeout": &t.StreamIdle,
	} {
		if v := *p.timeoutField(k); v != "" {
			if d, err := parseTimeout(v); err == nil {
				*dst = d
			}
		}
	}
	return t
}
