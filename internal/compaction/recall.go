package compaction

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// RecallToolName is the tool that returns a result the view cleared or offloaded.
const RecallToolName = "recall_tool_result"

// recallDefaultLimit keeps one recall well under the tool output cap; the model pages
// through longer outputs with offset.
const recallDefaultLimit = 50000

type recallArgs struct {
	CallID string `json:"call_id" jsonschema:"description=The call_id shown in the cleared or offloaded tool-result marker."`
	Offset int    `json:"offset,omitempty" jsonschema:"description=Character offset to start from (default 0),minimum=0"`
	Limit  int    `json:"limit,omitempty" jsonschema:"description=Maximum characters to return (default 50000),minimum=1"`
}

const recallDescription = "Return the full output of an earlier tool call whose result was cleared or offloaded from the context to save space (the marker shows its call_id). Use it only when you need that output again; long outputs can be read in pages with offset and limit."

// recallTool builds recall_tool_result. It reads the archive first, then the run's own
// transcript (which always keeps the full output).
func recallTool(store ResultStore) tool.Tool {
	return tool.New(RecallToolName, recallDescription, func(ctx context.Context, rc *tool.RunContext, a recallArgs) (string, error) {
		if a.CallID == "" {
			return "", errors.New("call_id is required: copy it from the marker")
		}
		text, found := "", false
		if store != nil && rc != nil {
			if t, err := store.Get(ctx, scopeOf(rc.SessionID, rc.RunID), a.CallID); err == nil {
				text, found = t, true
			}
		}
		if !found && rc != nil && rc.Entries != nil {
			entries := rc.Entries()
			for i := len(entries) - 1; i >= 0; i-- {
				if e := entries[i]; e.Type == transcript.TypeToolResult && e.CallID == a.CallID && !e.Synthetic {
					text, found = e.Text, true
					break
				}
			}
		}
		if !found {
			return "", fmt.Errorf("no tool result with call_id %q in this conversation; copy the call_id exactly from the marker", a.CallID)
		}
		return page(text, a.CallID, a.Offset, a.Limit), nil
	})
}

// page returns text[offset:offset+limit] in characters, announcing what is left.
func page(text, callID string, offset, limit int) string {
	if limit <= 0 {
		limit = recallDefaultLimit
	}
	total := utf8.RuneCountInString(text)
	if offset <= 0 && total <= limit {
		return text
	}
	r := []rune(text)
	offset = min(max(offset, 0), total)
	end := min(offset+limit, total)
	out := string(r[offset:end])
	if end < total {
		out += fmt.Sprintf("\n[characters %d-%d of %d; call %s with call_id %q and offset %d for more]", offset, end, total, RecallToolName, callID, end)
	} else {
		out += fmt.Sprintf("\n[characters %d-%d of %d]", offset, end, total)
	}
	return out
}
