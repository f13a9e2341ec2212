package transcript

// SafeWindowStart returns the cut point to use instead of start when a view keeps only
// entries[start:]: it moves start back until no tool result in the window is separated
// from its call (and, transitively, from the results of the calls that pulls in).
// start is clamped to [0, len(entries)].
func SafeWindowStart(entries []Entry, start int) int {
	if start <= 0 {
		return 0
	}
	if start >= len(entries) {
		return len(entries)
	}
	// Calls answered inside the window whose call entry is not (yet) inside it.
	missing := map[string]bool{}
	for i := len(entries) - 1; i >= start; i-- {
		switch e := &entries[i]; e.Type {
		case TypeToolResult:
			missing[e.CallID] = true
		case TypeToolCall:
			delete(missing, e.CallID)
		}
	}
	// outside: results between the scan position and start whose calls are not seen
	// yet; they join the window (and missing) whenever start moves past them.
	outside := map[string]bool{}
	for i := start - 1; i >= 0 && len(missing) > 0; i-- {
		switch e := &entries[i]; e.Type {
		case TypeToolResult:
			outside[e.CallID] = true
		case TypeToolCall:
			if outside[e.CallID] {
				delete(outside, e.CallID)
			}
			if missing[e.CallID] {
				delete(missing, e.CallID)
				start = i
				for id := range outside {
					missing[id] = true
				}
				clear(outside)
			}
		}
	}
	// A call whose sibling calls (same reply) stayed outside is fine: their results are
	// outside too, or were pulled in above.
	return start
}

// Pending returns the tool calls in entries that have no result, in order.
func Pending(entries []Entry) []Entry {
	answered := map[string]bool{}
	for i := range entries {
		if entries[i].Type == TypeToolResult {
			answered[entries[i].CallID] = true
		}
	}
	var out []Entry
	for _, e := range entries {
		if e.Type == TypeToolCall && !answered[e.CallID] {
			out = append(out, e)
		}
	}
	return out
}

// DanglingResultText is the output of a synthetic result made up for a call that has
// none.
const DanglingResultText = "error: this tool call was interrupted before it produced a result"

// RepairDangling returns entries with a synthetic error result (Synthetic=true) for
// every call that has none, placed right after the block of calls and results the call
// belongs to, as chat providers require. It is for views only: the synthetic entries
// are never persisted. Without dangling calls it returns entries itself.
func RepairDangling(entries []Entry) []Entry {
	answered := map[string]bool{}
	dangling := 0
	for i := range entries {
		if entries[i].Type == TypeToolResult {
			answered[entries[i].CallID] = true
		}
	}
	for i := range entries {
		if entries[i].Type == TypeToolCall && !answered[entries[i].CallID] {
			dangling++
		}
	}
	if dangling == 0 {
		return entries
	}
	out := make([]Entry, 0, len(entries)+dangling)
	var open []Entry // dangling calls of the current block
	flush := func() {
		for _, c := range open {
			r := ToolResult(c.CallID, c.Name, DanglingResultText, true)
			r.RunID, r.Agent, r.Synthetic = c.RunID, c.Agent, true
			out = append(out, r)
		}
		open = open[:0]
	}
	for i, e := range entries {
		out = append(out, e)
		if e.Type == TypeToolCall && !answered[e.CallID] {
			open = append(open, e)
		}
		inBlock := e.Type == TypeToolCall || e.Type == TypeToolResult
		nextInBlock := i+1 < len(entries) && (entries[i+1].Type == TypeToolCall || entries[i+1].Type == TypeToolResult)
		if len(open) > 0 && (!nextInBlock || !inBlock) {
			flush()
		}
	}
	flush()
	return out
}
