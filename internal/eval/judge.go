package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/lovia-dev/lovia/internal/provider"
	"github.com/lovia-dev/lovia/internal/transcript"
)

const judgePrompt = `You are grading an AI assistant's answer. Score how well the answer meets the criteria, from 0.0 (not at all) to 1.0 (fully).
Reply with only a JSON object: {"score": <number 0..1>, "reason": "<one sentence>"}.`

// ProviderJudge returns a JudgeFunc that asks a model for a verdict.
func ProviderJudge(resolve func(ctx context.Context, model string) (provider.Provider, error)) JudgeFunc {
	return func(ctx context.Context, model, criteria, input, output string) (float64, string, error) {
		p, err := resolve(ctx, model)
		if err != nil {
			return 0, "", err
		}
		user := fmt.Sprintf("Criteria:\n%s\n\nTask given to the assistant:\n%s\n\nAssistant's answer:\n%s", criteria, input, output)
		req := provider.Request{Model: model, System: judgePrompt, Entries: []transcript.Entry{transcript.UserInput(user)}}
		var text strings.Builder
		for d, err := range p.Stream(ctx, req) {
			if err != nil {
				return 0, "", err
			}
			if d.Kind == provider.DeltaEntry && d.Entry != nil && d.Entry.Type == transcript.TypeAssistantText {
				text.WriteString(d.Entry.Text)
			}
		}
		return parseVerdict(text.String())
	}
}

var jsonObject = regexp.MustCompile(`(?s)\{.*\}`)

// parseVerdict reads {"score": x, "reason": "..."} from a reply, tolerating prose or
// code fences around it.
func parseVerdict(s string) (float64, string, error) {
	m := jsonObject.FindString(s)
	var v struct {
		Score  *float64 `json:"score"`
		Reason string   `json:"reason"`
	}
	if m == "" || json.Unmarshal([]byte(m), &v) != nil || v.Score == nil {
		return 0, "", fmt.Errorf("judge reply has no {\"score\": ...} object: %q", clip(s, 120))
	}
	return min(max(*v.Score, 0), 1), v.Reason, nil
}
