package compaction_test

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/lovia-dev/lovia/internal/compaction"
	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// A front end wires the default policy once and hands it to every run
// (runtime.Options.ContextPolicy); the loop calls Compact before each model call and
// adds Tools() (recall_tool_result) to every agent.
func ExampleNew() {
	dataDir := "/tmp/lovia-example" // $LOVIA_HOME in the product
	resolve := func(ctx context.Context, model string) (provider.Provider, error) {
		return nil, fmt.Errorf("no providers in this example")
	}
	cfg := compaction.Config{CompactAt: 0.85, CompactTo: 0.6} // from config.yaml `compaction:`
	if err := cfg.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	policy := compaction.New(cfg,
		compaction.WithStore(compaction.NewDirStore(filepath.Join(dataDir, "tool-results"))),
		compaction.WithSummarizer(&compaction.LLMSummarizer{Resolve: resolve, Model: "openai:gpt-4.1-mini"}),
	)
	res, _ := policy.Compact(context.Background(), compaction.Request{
		RunID: "run-1", SessionID: "sess-1", ContextWindow: 64_000,
		Body: []transcript.Entry{transcript.UserInput("hello")},
	})
	fmt.Println(len(res.View), res.Compacted, policy.Tools()[0].Spec().Name)
	// Output: 1 false recall_tool_result
}
