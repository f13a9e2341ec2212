package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/transcript"
	"github.com/lovia-dev/lovia/internal/usage"
)

// SessionStore is the store.Session over a DB: one row per completed run (a segment,
// its entries as one JSON array) with UNIQUE(session_id, run_id), so Append is an
// idempotent INSERT OR IGNORE that costs O(the run's entries) and Load is one ordered
// scan. Old segments change only through the explicit maintenance operations Rewind
// and TrimToolOutputs.
type SessionStore struct{ db *DB }

var _ store.Session = (*SessionStore)(nil)

// SessionMeta is the metadata a front end passes as the meta argument of Append (as
// JSON) or to EnsureSession. Unknown keys are kept (redacted) in the session's meta.
type SessionMeta struct {
	Cwd  string `json:"cwd,omitempty"`
	Repo string `json:"repo,omitempty"`
	// Title overrides the default title (the first user message, truncated).
	Title string `json:"title,omitempty"`
	// Usage is the appended run's token usage. When Usage, Cwd or Repo are absent,
	// Append takes them from the run's checkpoint head (usage; settings "cwd" and
	// "repo") if the run has one.
	Usage *usage.Usage `json:"usage,omitempty"`
}

// titleRunes bounds a derived session title.
const titleRunes = 72

// Load returns all segments' entries in append order (nil, nil for an unknown session).
func (s *SessionStore) Load(ctx context.Context, sessionID string) ([]transcript.Entry, error) {
	db := s.db
	var out []transcript.Entry
	err := db.read(ctx, "load session "+sessionID, func(tx dbtx) error {
		rows, err := tx.QueryContext(ctx, `SELECT run_id, entries FROM session_runs WHERE session_id = ? ORDER BY seq`, sessionID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var runID string
			var data []byte
			if err := rows.Scan(&runID, &data); err != nil {
				return err
			}
			seg, err := decodeEntries(data)
			if err != nil {
				return errs.Wrap(errs.KindStore, fmt.Errorf("segment of run %s: %w", runID, err),
					fmt.Sprintf("session %s in %s is damaged", sessionID, db.path),
					"remove the damaged run with `lovia sessions` maintenance (rewind), or start a new session")
			}
			out = append(out, seg...)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return fillBlobs(ctx, tx, out)
	})
	return out, err
}

// Append adds runID's entries as one segment of sessionID, creating the session on
// first use; re-appending the same (sessionID, runID) is a no-op. meta is a JSON
// SessionMeta (may be nil); secret-looking keys are redacted before storage.
func (s *SessionStore) Append(ctx context.Context, sessionID, runID string, entries []transcript.Entry, meta json.RawMessage) error {
	db := s.db
	op := fmt.Sprintf("append run %s to session %s", runID, sessionID)
	if sessionID == "" || runID == "" {
		return errs.New(errs.KindInternal, op+": empty session or run id", "")
	}
	m, rawMeta, err := parseMeta(meta)
	if err != nil {
		return errs.Wrap(errs.KindInternal, err, op+": meta", "")
	}
	entries = persistable(entries)
	if entries == nil {
		entries = []transcript.Entry{}
	}
	entries, blobs := splitBlobs(entries) // blobs.go
	data, err := json.Marshal(entries)
	if err != nil {
		return errs.Wrap(errs.KindInternal, err, op+": encode entries", "")
	}
	title := m.Title
	if title == "" {
		title = deriveTitle(entries)
	}
	now := db.now().UnixMilli()
	return db.write(ctx, op, func(tx dbtx) error {
		// The run's checkpoint head, if any, fills in what meta leaves out: usage, and
		// cwd/repo from the run's settings.
		m := m
		var hj string
		err := tx.QueryRowContext(ctx, `SELECT head FROM runs WHERE run_id = ?`, runID).Scan(&hj)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		var h store.Head
		if err == nil && json.Unmarshal([]byte(hj), &h) == nil {
			if m.Usage == nil {
				m.Usage = &h.Usage
			}
			if m.Cwd == "" {
				m.Cwd = settingString(h.Settings, "cwd")
			}
			if m.Repo == "" {
				m.Repo = settingString(h.Settings, "repo")
			}
		}
		if err := ensureSession(ctx, tx, sessionID, m, rawMeta, now); err != nil {
			return err
		}
		u := m.Usage
		if u == nil {
			u = &usage.Usage{}
		}
		uj, _ := json.Marshal(u)
		if err := putBlobs(ctx, tx, blobs, db.now()); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO session_runs (session_id, run_id, entries, n_entries, created_at, usage)
VALUES (?, ?, ?, ?, ?, ?)`, sessionID, runID, string(data), len(entries), now, string(uj))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil // already appended: idempotent
		}
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET updated_at = MAX(updated_at, ?),
	title = CASE WHEN title = '' THEN ? ELSE title END WHERE id = ?`, now, title, sessionID)
		return err
	})
}

// EnsureSession creates sessionID if needed and fills in metadata it lacks (cwd,
// repo, title), e.g. when `lovia chat` starts a conversation before its first run
// completes.
func (s *SessionStore) EnsureSession(ctx context.Context, sessionID string, meta SessionMeta) error {
	if sessionID == "" {
		return errs.New(errs.KindInternal, "ensure session: empty session id", "")
	}
	raw, err := json.Marshal(meta)
	if err != nil {
		return errs.Wrap(errs.KindInternal, err, "ensure session", "")
	}
	m, rawMeta, err := parseMeta(raw)
	if err != nil {
		return errs.Wrap(errs.KindInternal, err, "ensure session", "")
	}
	now := s.db.now().UnixMilli()
	return s.db.write(ctx, "create session "+sessionID, func(tx dbtx) error {
		return ensureSession(ctx, tx, sessionID, m, rawMeta, now)
	})
}

func ensureSession(ctx context.Context, tx dbtx, id string, m SessionMeta, rawMeta json.RawMessage, now int64) error {
	if len(rawMeta) == 0 {
		rawMeta = json.RawMessage(`{}`)
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO sessions (id, cwd, repo, title, meta, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?)`, id, m.Cwd, m.Repo, m.Title, string(rawMeta), now, now); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE sessions SET
	cwd = CASE WHEN cwd = '' THEN ? ELSE cwd END,
	repo = CASE WHEN repo = '' THEN ? ELSE repo END,
	title = CASE WHEN ? <> '' THEN ? ELSE title END,
	meta = CASE WHEN meta = '{}' THEN ? ELSE meta END
WHERE id = ?`, m.Cwd, m.Repo, m.Title, m.Title, string(rawMeta), id)
	return err
}

// parseMeta redacts meta and reads the known fields. The stored meta leaves out usage
// (it is per segment, not per session).
func parseMeta(meta json.RawMessage) (SessionMeta, json.RawMessage, error) {
	var m SessionMeta
	red, err := redactJSON(meta)
	if err != nil || len(red) == 0 {
		return m, nil, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(red, &obj); err != nil {
		return m, nil, fmt.Errorf("meta must be a JSON object: %w", err)
	}
	if err := json.Unmarshal(red, &m); err != nil {
		return m, nil, fmt.Errorf("meta: %w", err)
	}
	delete(obj, "usage")
	if len(obj) == 0 {
		return m, nil, nil
	}
	out, err := json.Marshal(obj)
	return m, out, err
}

// deriveTitle is the first user message, whitespace collapsed, truncated.
func deriveTitle(entries []transcript.Entry) string {
	for _, e := range entries {
		if e.IsUser() && strings.TrimSpace(e.Text) != "" {
			return truncateRunes(strings.Join(strings.Fields(e.Text), " "), titleRunes)
		}
	}
	return ""
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// SessionFilter selects sessions for ListSessions. Zero fields do not filter.
type SessionFilter struct {
	Cwd   string
	Repo  string
	Limit int
	// IncludeEmpty lists sessions that no run ever used (a run that failed before its
	// first checkpoint leaves one behind); listings and --continue skip them by default.
	IncludeEmpty bool
}

// SessionInfo summarises a session for `lovia sessions`.
type SessionInfo struct {
	ID        string          `json:"session_id"`
	Title     string          `json:"title"`
	Cwd       string          `json:"cwd,omitempty"`
	Repo      string          `json:"repo,omitempty"`
	Meta      json.RawMessage `json:"meta,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
	Runs      int             `json:"runs"`
	Entries   int             `json:"entries"`
	Usage     usage.Usage     `json:"usage"`
}

// ListSessions lists sessions, most recently updated first.
func (s *SessionStore) ListSessions(ctx context.Context, f SessionFilter) ([]SessionInfo, error) {
	return s.listSessions(ctx, f, "")
}

// GetSession summarises one session (errs.KindNotFound for an unknown id).
func (s *SessionStore) GetSession(ctx context.Context, sessionID string) (SessionInfo, error) {
	out, err := s.listSessions(ctx, SessionFilter{}, sessionID)
	if err != nil {
		return SessionInfo{}, err
	}
	if len(out) == 0 {
		return SessionInfo{}, sessionNotFound(sessionID)
	}
	return out[0], nil
}

// LatestSession is the most recently updated session of repo (any session when repo
// is empty), for `--continue`; errs.KindNotFound when there is none.
func (s *SessionStore) LatestSession(ctx context.Context, repo string) (SessionInfo, error) {
	out, err := s.listSessions(ctx, SessionFilter{Repo: repo, Limit: 1}, "")
	if err != nil {
		return SessionInfo{}, err
	}
	if len(out) == 0 {
		where := ""
		if repo != "" {
			where = " for " + repo
		}
		return SessionInfo{}, errs.Wrap(errs.KindNotFound, store.ErrNotFound, "no session to continue"+where,
			"start one with `lovia chat` or `lovia run`; `lovia sessions list` shows all sessions")
	}
	return out[0], nil
}

// SessionIDsWithPrefix lists the ids of the sessions whose id starts with prefix,
// sorted (for resolving the short ids users type).
func (s *SessionStore) SessionIDsWithPrefix(ctx context.Context, prefix string) ([]string, error) {
	return idsWithPrefix(ctx, s.db, "session ids", `SELECT id FROM sessions WHERE id >= ?1 AND substr(id, 1, length(?1)) = ?1 ORDER BY id`, prefix)
}

func (s *SessionStore) listSessions(ctx context.Context, f SessionFilter, id string) ([]SessionInfo, error) {
	q := `SELECT s.id, s.title, s.cwd, s.repo, s.meta, s.created_at, s.updated_at,
	COUNT(r.seq), COALESCE(SUM(r.n_entries), 0),
	COALESCE(SUM(json_extract(r.usage, '$.input_tokens')), 0),
	COALESCE(SUM(json_extract(r.usage, '$.output_tokens')), 0),
	COALESCE(SUM(json_extract(r.usage, '$.cached_input_tokens')), 0),
	COALESCE(SUM(json_extract(r.usage, '$.cache_write_tokens')), 0),
	COALESCE(SUM(json_extract(r.usage, '$.reasoning_tokens')), 0),
	COALESCE(SUM(json_extract(r.usage, '$.requests')), 0),
	COALESCE(SUM(json_extract(r.usage, '$.cost_usd')), 0),
	COALESCE(SUM(json_extract(r.usage, '$.cost_usd') IS NULL
		AND COALESCE(json_extract(r.usage, '$.input_tokens'), 0) + COALESCE(json_extract(r.usage, '$.output_tokens'), 0) > 0), 0)
FROM sessions s LEFT JOIN session_runs r ON r.session_id = s.id
WHERE (?1 = '' OR s.cwd = ?1) AND (?2 = '' OR s.repo = ?2) AND (?3 = '' OR s.id = ?3)
	AND (?3 <> '' OR ?4 OR EXISTS (SELECT 1 FROM session_runs x WHERE x.session_id = s.id)
		OR EXISTS (SELECT 1 FROM runs y WHERE y.session_id = s.id))
GROUP BY s.id
ORDER BY s.updated_at DESC, s.id`
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	var out []SessionInfo
	err := s.db.read(ctx, "list sessions", func(tx dbtx) error {
		rows, err := tx.QueryContext(ctx, q, f.Cwd, f.Repo, id, f.IncludeEmpty)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var si SessionInfo
			var meta string
			var created, updated int64
			u := &si.Usage
			var unpriced int
			if err := rows.Scan(&si.ID, &si.Title, &si.Cwd, &si.Repo, &meta, &created, &updated, &si.Runs, &si.Entries,
				&u.InputTokens, &u.OutputTokens, &u.CachedInputTokens, &u.CacheWriteTokens, &u.ReasoningTokens, &u.Requests,
				&u.CostUSD, &unpriced); err != nil {
				return err
			}
			// The session's cost is known when every run that used tokens recorded one
			// (runs recorded before lovia priced calls did not).
			u.Priced = unpriced == 0 && si.Runs > 0
			if !u.Priced {
				u.CostUSD = 0
			}
			if meta != "" && meta != "{}" && json.Valid([]byte(meta)) {
				si.Meta = json.RawMessage(meta)
			}
			si.CreatedAt, si.UpdatedAt = fromMillis(created), fromMillis(updated)
			out = append(out, si)
		}
		return rows.Err()
	})
	return out, err
}

// SessionRun is one segment of a session.
type SessionRun struct {
	RunID     string      `json:"run_id"`
	Entries   int         `json:"entries"`
	Usage     usage.Usage `json:"usage"`
	CreatedAt time.Time   `json:"created_at"`
}

// SessionRuns lists sessionID's segments in order (errs.KindNotFound for an unknown
// session).
func (s *SessionStore) SessionRuns(ctx context.Context, sessionID string) ([]SessionRun, error) {
	var out []SessionRun
	err := s.db.read(ctx, "list runs of session "+sessionID, func(tx dbtx) error {
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM sessions WHERE id = ?`, sessionID).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return sessionNotFound(sessionID)
		} else if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT run_id, n_entries, usage, created_at FROM session_runs WHERE session_id = ? ORDER BY seq`, sessionID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r SessionRun
			var uj string
			var created int64
			if err := rows.Scan(&r.RunID, &r.Entries, &uj, &created); err != nil {
				return err
			}
			_ = json.Unmarshal([]byte(uj), &r.Usage) // a damaged usage only blanks the figures
			r.CreatedAt = fromMillis(created)
			out = append(out, r)
		}
		return rows.Err()
	})
	return out, err
}

// DeleteSession removes a session, its segments and the checkpoints of its runs.
// It is refused (errs.KindRunConflict) while another live process runs one of them.
func (s *SessionStore) DeleteSession(ctx context.Context, sessionID string) error {
	db := s.db
	return db.write(ctx, "delete session "+sessionID, func(tx dbtx) error {
		rows, err := tx.QueryContext(ctx, `SELECT run_id FROM runs WHERE session_id = ?`, sessionID)
		if err != nil {
			return err
		}
		var runs []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			runs = append(runs, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, id := range runs {
			h, err := db.liveOther(ctx, tx, id)
			if err != nil {
				return err
			}
			if h != nil {
				return db.heldError(id, h)
			}
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, sessionID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return sessionNotFound(sessionID)
		}
		for _, id := range runs {
			if _, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE run_id = ?`, id); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM run_claims WHERE run_id = ?`, id); err != nil {
				return err
			}
		}
		return dropOrphanBlobs(ctx, tx) // blobs.go
	})
}

// Rewind drops the last nRuns segments of sessionID (the checkpoints of those runs
// are kept) and returns how many were dropped.
func (s *SessionStore) Rewind(ctx context.Context, sessionID string, nRuns int) (int, error) {
	if nRuns <= 0 {
		return 0, nil
	}
	var n int64
	err := s.db.write(ctx, "rewind session "+sessionID, func(tx dbtx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM session_runs WHERE seq IN
	(SELECT seq FROM session_runs WHERE session_id = ? ORDER BY seq DESC LIMIT ?)`, sessionID, nRuns)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		if n > 0 {
			_, err = tx.ExecContext(ctx, `UPDATE sessions SET updated_at = ? WHERE id = ?`, s.db.now().UnixMilli(), sessionID)
		}
		return err
	})
	return int(n), err
}

// TrimToolOutputs shortens the text of old tool results of sessionID to at most
// maxChars characters (head and tail kept, with a marker saying how much was cut) and
// marks them Truncated; maxChars below 100 counts as 100. The last keepLastN tool
// results of the session are left intact. Trimming again with the same limits changes
// nothing. It returns how many results were shortened.
func (s *SessionStore) TrimToolOutputs(ctx context.Context, sessionID string, keepLastN, maxChars int) (int, error) {
	trimmed := 0
	err := s.db.write(ctx, "trim tool outputs of session "+sessionID, func(tx dbtx) error {
		trimmed = 0
		segs, err := loadSegments(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		kept := 0
		for i := len(segs) - 1; i >= 0; i-- {
			changed := false
			for j := len(segs[i].entries) - 1; j >= 0; j-- {
				e := &segs[i].entries[j]
				if e.Type != transcript.TypeToolResult {
					continue
				}
				if kept < keepLastN {
					kept++
					continue
				}
				if t, ok := trimText(e.Text, maxChars); ok {
					e.Text, e.Truncated = t, true
					changed = true
					trimmed++
				}
			}
			if changed {
				data, err := json.Marshal(segs[i].entries)
				if err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, `UPDATE session_runs SET entries = ? WHERE seq = ?`, string(data), segs[i].seq); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return trimmed, err
}

// minTrimChars is the smallest length TrimToolOutputs trims to: below it the marker
// alone would be longer than what it replaces.
const minTrimChars = 100

// trimText shortens s to at most maxChars characters (at least minTrimChars), keeping
// its head and tail around a marker; ok is false when s is already short enough, so
// trimming twice changes nothing.
func trimText(s string, maxChars int) (string, bool) {
	maxChars = max(maxChars, minTrimChars)
	n := utf8.RuneCountInString(s)
	if n <= maxChars {
		return s, false
	}
	marker := func(cut int) string {
		return fmt.Sprintf("\n[… %d characters trimmed from this old tool output …]\n", cut)
	}
	// The marker for cut=n is at least as long as the final one.
	keep := max(maxChars-utf8.RuneCountInString(marker(n)), 0)
	head := keep / 2
	tail := keep - head
	r := []rune(s)
	return string(r[:head]) + marker(n-keep) + string(r[n-tail:]), true
}

func sessionNotFound(id string) error {
	return errs.Wrap(errs.KindNotFound, store.ErrNotFound, "session "+id+" not found",
		"`lovia sessions list` shows the known sessions")
}

// RewindToEntry cuts sessionID back to before its entry number keep (0-based, in Load
// order): that entry and every later one are dropped, segments wholly after the cut
// are deleted and the segment holding it is shortened. A tool call whose result falls
// after the cut is dropped too, so the kept transcript never ends in a dangling call.
// It returns how many entries were dropped (0 when keep is at or past the end).
func (s *SessionStore) RewindToEntry(ctx context.Context, sessionID string, keep int) (int, error) {
	if keep < 0 {
		return 0, errs.Newf(errs.KindUsage, "", "entry %d out of range", keep)
	}
	dropped := 0
	err := s.db.write(ctx, "rewind session "+sessionID+" to an entry", func(tx dbtx) error {
		dropped = 0
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM sessions WHERE id = ?`, sessionID).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return sessionNotFound(sessionID)
		} else if err != nil {
			return err
		}
		segs, err := loadSegments(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		pos := 0
		for _, sg := range segs {
			n := len(sg.entries)
			switch {
			case pos+n <= keep:
				// wholly before the cut
			case pos >= keep:
				dropped += n
				if _, err := tx.ExecContext(ctx, `DELETE FROM session_runs WHERE seq = ?`, sg.seq); err != nil {
					return err
				}
			default:
				kept := dropDangling(sg.entries[:keep-pos])
				dropped += n - len(kept)
				data, err := json.Marshal(kept)
				if err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, `UPDATE session_runs SET entries = ?, n_entries = ? WHERE seq = ?`, string(data), len(kept), sg.seq); err != nil {
					return err
				}
			}
			pos += n
		}
		if dropped > 0 {
			_, err = tx.ExecContext(ctx, `UPDATE sessions SET updated_at = ? WHERE id = ?`, s.db.now().UnixMilli(), sessionID)
		}
		return err
	})
	return dropped, err
}

// dropDangling removes the tool calls of entries that have no result among them.
func dropDangling(entries []transcript.Entry) []transcript.Entry {
	results := map[string]bool{}
	for _, e := range entries {
		if e.Type == transcript.TypeToolResult {
			results[e.CallID] = true
		}
	}
	out := make([]transcript.Entry, 0, len(entries))
	for _, e := range entries {
		if e.Type == transcript.TypeToolCall && !results[e.CallID] {
			continue
		}
		out = append(out, e)
	}
	return out
}

// storedSegment is one run's segment of a session as stored.
type storedSegment struct {
	seq     int64
	entries []transcript.Entry
}

// loadSegments reads every segment of sessionID in order, within tx.
func loadSegments(ctx context.Context, tx dbtx, sessionID string) ([]storedSegment, error) {
	rows, err := tx.QueryContext(ctx, `SELECT seq, entries FROM session_runs WHERE session_id = ? ORDER BY seq`, sessionID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var segs []storedSegment
	for rows.Next() {
		var sg storedSegment
		var data []byte
		if err := rows.Scan(&sg.seq, &data); err != nil {
			return nil, err
		}
		if sg.entries, err = decodeEntries(data); err != nil {
			return nil, fmt.Errorf("segment %d: %w", sg.seq, err)
		}
		segs = append(segs, sg)
	}
	return segs, rows.Err()
}
