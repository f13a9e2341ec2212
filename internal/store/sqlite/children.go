package sqlite

import "context"

// ChildRuns lists the runs started by parentRunID (subagents, agents asked as
// tools), oldest first.
func (c *CheckpointStore) ChildRuns(ctx context.Context, parentRunID string) ([]RunInfo, error) {
	ids, err := queryStrings(ctx, c.db, "list child runs of "+parentRunID,
		`SELECT run_id FROM runs WHERE json_extract(head, '$.parent_run_id') = ? ORDER BY started_at, run_id`, parentRunID)
	if err != nil {
		return nil, err
	}
	out := make([]RunInfo, 0, len(ids))
	for _, id := range ids {
		ri, err := c.GetRun(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, ri)
	}
	return out, nil
}
