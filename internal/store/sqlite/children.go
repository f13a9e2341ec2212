package sqlite

import (
	"context"
	"database/sql"
)

// ChildRuns lists the runs started by parentRunID (subagents, agents asked as
// tools), oldest first.
func (c *CheckpointStore) ChildRuns(ctx context.Context, parentRunID string) ([]RunInfo, error) {
	var ids []string
	err := c.db.read(ctx, "list child runs of "+parentRunID, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT run_id FROM runs WHERE json_extract(head, '$.parent_run_id') = ? ORDER BY started_at, run_id`, parentRunID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return rows.Err()
	})
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
