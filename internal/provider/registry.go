package provider

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/lovia-dev/lovia/internal/errs"
)

// Env is what a factory may read: the environment (through Getenv, so tests and
// config can supply values) and per-model overrides from config.
type Env struct {
	Getenv func(string) string
	// HTTPClient, when set, is used by network providers (tests inject transports).
	HTTPClient *http.Client
	// ContextWindows overrides the built-in per-model table (config
	// models.<name>.context_window).
	ContextWindows map[string]int
	// Vision overrides the built-in table of models that take images (config
	// models.<name>.vision).
	Vision map[string]bool
	// Dir is the directory relative paths (script:PATH) resolve against.
	Dir string
	// Timeouts bound every request of the network providers (zero: no limits).
	Timeouts Timeouts
	// Warn, when set, shows the user a problem that does not stop the run (each
	// message once; e.g. an Ollama server that keeps less context than a request
	// needs).
	Warn func(msg string)
}

// Factory builds a provider for one model name.
type Factory func(ctx context.Context, model string, env Env) (Provider, error)

// Registry maps "prefix:model" specs to factories. It is a value built by the front
// end, not package state.
type Registry struct {
	factories map[string]Factory
	canonical map[string]string // alias -> prefix
	env       Env
}

// NewRegistry returns an empty registry using env for every factory call.
func NewRegistry(env Env) *Registry {
	if env.Timeouts != (Timeouts{}) {
		env.HTTPClient = env.Timeouts.Client(env.HTTPClient)
	}
	return &Registry{factories: map[string]Factory{}, canonical: map[string]string{}, env: env}
}

// Register adds a factory under prefix and its aliases.
func (r *Registry) Register(prefix string, f Factory, aliases ...string) {
	r.factories[prefix] = f
	r.canonical[prefix] = prefix
	for _, a := range aliases {
		r.canonical[a] = prefix
	}
}

// Prefixes lists the registered canonical prefixes, sorted.
func (r *Registry) Prefixes() []string {
	out := make([]string, 0, len(r.factories))
	for p := range r.factories {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Resolve builds the provider for spec ("prefix:model").
func (r *Registry) Resolve(ctx context.Context, spec string) (Provider, error) {
	prefix, model, ok := strings.Cut(spec, ":")
	if !ok || prefix == "" || model == "" {
		return nil, errs.Newf(errs.KindConfig,
			"use --model PROVIDER:MODEL, e.g. openai:gpt-4.1 or script:testdata/demo/script.yaml (known providers: "+strings.Join(r.Prefixes(), ", ")+")",
			"model %q is not of the form PROVIDER:MODEL", spec)
	}
	canon, ok := r.canonical[prefix]
	if !ok {
		return nil, errs.Newf(errs.KindConfig,
			"known providers: "+strings.Join(r.Prefixes(), ", "),
			"unknown model provider %q in %q", prefix, spec)
	}
	return r.factories[canon](ctx, model, r.env)
}
