package provider

import "strings"

// Context windows used when neither config nor the server says otherwise.
const (
	// DefaultContextWindow is assumed for unknown models of hosted providers.
	DefaultContextWindow = 128000
	// LocalContextWindow is assumed for unknown models on local or
	// OpenAI-compatible servers, which are usually configured smaller.
	LocalContextWindow = 32768
)

// modelInfo is one row of the built-in table; keys are normalized name prefixes.
type modelInfo struct {
	window, maxOut int
}

// knownModels maps a normalized model-name prefix (see normModel) to its limits.
// The longest matching prefix wins, so "gpt41" beats "gpt4".
var knownModels = map[string]modelInfo{
	// OpenAI
	"gpt41":         {1047576, 32768},
	"gpt4o":         {128000, 16384},
	"gpt4turbo":     {128000, 4096},
	"gpt4":          {8192, 4096},
	"gpt35turbo":    {16385, 4096},
	"gpt5":          {400000, 128000},
	"gpt5chat":      {128000, 16384},
	"gptoss":        {131072, 32768},
	"o1":            {200000, 100000},
	"o1mini":        {128000, 65536},
	"o3":            {200000, 100000},
	"o4mini":        {200000, 100000},
	"codexmini":     {200000, 100000},
	"claude3":       {200000, 4096},
	"claude35":      {200000, 8192},
	"claude37":      {200000, 64000},
	"claudesonnet4": {200000, 64000},
	"claudeopus4":   {200000, 32000},
	"claudehaiku4":  {200000, 64000},
	// open-weight families as commonly served (Ollama, vLLM, OpenRouter)
	"llama3":           {8192, 0},
	"llama31":          {131072, 0},
	"llama32":          {131072, 0},
	"llama33":          {131072, 0},
	"llama4":           {1048576, 0},
	"qwen2":            {32768, 0},
	"qwen25":           {32768, 0},
	"qwen25coder":      {32768, 0},
	"qwen3":            {40960, 0},
	"qwen3coder":       {262144, 0},
	"deepseekr1":       {131072, 0},
	"deepseekv3":       {131072, 0},
	"deepseekchat":     {131072, 8192},
	"deepseekreasoner": {131072, 65536},
	"mistral":          {32768, 0},
	"mistrallarge":     {131072, 0},
	"codestral":        {262144, 0},
	"devstral":         {131072, 0},
	"gemma3":           {131072, 0},
	"phi4":             {16384, 0},
	"gemini15":         {1048576, 8192},
	"gemini2":          {1048576, 8192},
	"gemini25":         {1048576, 65536},
	"grok":             {131072, 0},
	"kimik2":           {131072, 0},
	"glm4":             {131072, 0},
}

// normModel lower-cases name, drops a vendor path ("meta-llama/", "anthropic/")
// and every non-alphanumeric rune, so "Llama-3.1-8B", "llama3.1:8b" and
// "meta-llama/llama-3.1-8b-instruct" all normalize to "llama318b...".
func normModel(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	var b strings.Builder
	b.Grow(len(name))
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func lookupModel(model string) (modelInfo, bool) {
	n := normModel(model)
	best, bestLen := modelInfo{}, 0
	for k, v := range knownModels {
		if len(k) > bestLen && strings.HasPrefix(n, k) {
			best, bestLen = v, len(k)
		}
	}
	return best, bestLen > 0
}

// ContextWindow returns the context window of model (as served under prefix):
// a config override (keyed "prefix:model" or "model") first, then the built-in
// table, then fallback (DefaultContextWindow or LocalContextWindow).
func ContextWindow(prefix, model string, overrides map[string]int, fallback int) int {
	if n := overrides[prefix+":"+model]; n > 0 {
		return n
	}
	if n := overrides[model]; n > 0 {
		return n
	}
	if m, ok := lookupModel(model); ok && m.window > 0 {
		return m.window
	}
	return fallback
}

// MaxOutputTokens returns the built-in output cap of model, or def when unknown.
func MaxOutputTokens(model string, def int) int {
	if m, ok := lookupModel(model); ok && m.maxOut > 0 {
		return m.maxOut
	}
	return def
}
