-- A lovia database as schema v1 left it (frozen: do not edit). Used to test the
-- migration from the previous schema to the current one.
CREATE TABLE lovia_schema (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL);
INSERT INTO lovia_schema VALUES (1, 1764460800000);

CREATE TABLE sessions (
	id         TEXT PRIMARY KEY,
	cwd        TEXT NOT NULL DEFAULT '',
	repo       TEXT NOT NULL DEFAULT '',
	title      TEXT NOT NULL DEFAULT '',
	meta       TEXT NOT NULL DEFAULT '{}',
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);
CREATE INDEX sessions_repo_updated ON sessions(repo, updated_at);
CREATE INDEX sessions_updated ON sessions(updated_at);
CREATE TABLE session_runs (
	seq        INTEGER PRIMARY KEY AUTOINCREMENT,
	session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	run_id     TEXT NOT NULL,
	entries    TEXT NOT NULL,
	n_entries  INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	UNIQUE(session_id, run_id)
);
CREATE TABLE runs (
	run_id     TEXT PRIMARY KEY,
	session_id TEXT NOT NULL DEFAULT '',
	status     TEXT NOT NULL,
	head       TEXT NOT NULL,
	n_batches  INTEGER NOT NULL DEFAULT 0,
	n_entries  INTEGER NOT NULL DEFAULT 0,
	started_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);
CREATE INDEX runs_session ON runs(session_id);
CREATE TABLE run_batches (
	run_id      TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
	seq         INTEGER NOT NULL,
	first_entry INTEGER NOT NULL,
	entries     TEXT NOT NULL,
	PRIMARY KEY (run_id, seq)
);

INSERT INTO sessions VALUES ('s-old', '/home/u/proj', '/home/u/proj', 'fix the build', '{"cwd":"/home/u/proj","repo":"/home/u/proj"}', 1764460800000, 1764460900000);
INSERT INTO session_runs (session_id, run_id, entries, n_entries, created_at) VALUES
	('s-old', 'r-old-1', '[{"type":"input","role":"user","text":"fix the build"},{"type":"assistant_text","text":"done"}]', 2, 1764460850000),
	('s-old', 'r-old-2', '[{"type":"input","role":"user","text":"thanks"},{"type":"assistant_text","text":"welcome"}]', 2, 1764460900000);

INSERT INTO runs VALUES ('r-old-2', 's-old', 'completed',
	'{"status":"completed","session_id":"s-old","agent":"coder","usage":{"input_tokens":120,"output_tokens":30,"cached_input_tokens":0},"turns":1,"settings":{"model":"openai:gpt-4.1"},"result":{"output":"welcome","finish_reason":"stop","final_agent":"coder"},"pid":4242,"started_at":"2025-11-30T00:01:30Z","updated_at":"2025-11-30T00:01:40Z"}',
	2, 3, 1764460890000, 1764460900000);
INSERT INTO run_batches VALUES
	('r-old-2', 0, 0, '[{"type":"input","role":"user","text":"thanks"}]'),
	('r-old-2', 1, 1, '[{"type":"assistant_text","text":"welcome"},{"type":"reasoning","text":"be nice"}]');
-- A run a v1 lovia was executing when it was killed.
INSERT INTO runs VALUES ('r-old-3', 's-old', 'running',
	'{"status":"running","session_id":"s-old","agent":"coder","usage":{"input_tokens":0,"output_tokens":0,"cached_input_tokens":0},"turns":0,"pid":4243,"started_at":"2025-11-30T00:02:00Z","updated_at":"2025-11-30T00:02:00Z"}',
	1, 1, 1764460920000, 1764460920000);
INSERT INTO run_batches VALUES ('r-old-3', 0, 0, '[{"type":"input","role":"user","text":"and now?"}]');
