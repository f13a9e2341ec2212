package cmd

import (
	"github.com/lovia-dev/lovia/internal/textutil"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lovia-dev/lovia/internal/config"
	"github.com/lovia-dev/lovia/internal/preset"
)

// suggestedModels are offered by --model completion besides the models named in the
// config (models.<provider:model>). Any model the provider serves works; these are
// only the common ones.
var suggestedModels = []string{
	"openai:gpt-4.1", "openai:gpt-4.1-mini", "openai:gpt-4o", "openai:gpt-5", "openai:gpt-5-mini",
	"openai:o3", "openai:o4-mini",
	"openai-responses:gpt-5", "openai-responses:o3", "openai-responses:o4-mini",
	"anthropic:claude-sonnet-4-5", "anthropic:claude-opus-4-1", "anthropic:claude-haiku-4-5",
	"ollama:qwen3", "ollama:qwen3-coder", "ollama:llama3.1", "ollama:gpt-oss",
}

// modelPrefixes are the providers a --model spec can name.
var modelPrefixes = []string{"openai:", "openai-responses:", "anthropic:", "ollama:", "script:"}

// registerModelPresetCompletion completes the common --model and --preset flags.
func registerModelPresetCompletion(root *cobra.Command, f *Factory) {
	_ = root.RegisterFlagCompletionFunc("model", func(c *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeModels(f, toComplete)
	})
	_ = root.RegisterFlagCompletionFunc("preset", func(c *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completePresets(f, toComplete), cobra.ShellCompDirectiveNoFileComp
	})
}

func loadConfigQuiet(f *Factory) *config.Config {
	cfg, err := config.Load(config.Options{Cwd: f.Common.Cwd, Getenv: f.Getenv})
	if err != nil {
		return nil
	}
	return cfg
}

func completePresets(f *Factory, toComplete string) []cobra.Completion {
	dirs := preset.Dirs{}
	if cfg := loadConfigQuiet(f); cfg != nil {
		dirs = cfg.PresetDirs()
	}
	set, err := preset.Load(dirs)
	if err != nil {
		return nil
	}
	var out []cobra.Completion
	for _, p := range set.List() {
		if strings.HasPrefix(p.Name, toComplete) {
			out = append(out, cobra.CompletionWithDesc(p.Name, textutil.OneLine(p.Description)))
		}
	}
	return out
}

func completeModels(f *Factory, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if path, ok := strings.CutPrefix(toComplete, "script:"); ok {
		return completeScriptPath(path), cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
	}
	if !strings.Contains(toComplete, ":") {
		var out []cobra.Completion
		for _, p := range modelPrefixes {
			if strings.HasPrefix(p, toComplete) {
				out = append(out, p)
			}
		}
		// A prefix alone is not a model: let the user go on typing after the colon.
		return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
	}
	models := slices.Clone(suggestedModels)
	if cfg := loadConfigQuiet(f); cfg != nil {
		if cfg.Model != "" {
			models = append(models, cfg.Model)
		}
		for name := range cfg.Models {
			if strings.Contains(name, ":") {
				models = append(models, name)
			}
		}
	}
	slices.Sort(models)
	models = slices.Compact(models)
	var out []cobra.Completion
	for _, m := range models {
		if strings.HasPrefix(m, toComplete) {
			out = append(out, m)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeScriptPath lists files and directories for script:PATH (the shell's own
// file completion cannot keep the "script:" prefix). Like the script provider, it
// resolves relative paths against the directory the command is typed in, not -C.
func completeScriptPath(path string) []cobra.Completion {
	dir, base := filepath.Split(path)
	look := dir
	if look == "" {
		look = "."
	}
	ents, err := os.ReadDir(look)
	if err != nil {
		return nil
	}
	var out []cobra.Completion
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, base) || (strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".")) {
			continue
		}
		switch {
		case e.IsDir():
			out = append(out, "script:"+dir+name+"/")
		case strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") || strings.HasSuffix(name, ".json"):
			out = append(out, "script:"+dir+name)
		}
	}
	return out
}
