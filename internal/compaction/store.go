package compaction

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/lovia-dev/lovia/internal/safefile"
)

// ErrNotArchived is returned by ResultStore.Get for a call that was never archived.
var ErrNotArchived = errors.New("tool result not archived")

// ResultStore archives the full output of offloaded tool results so they can be
// recalled (and read with ordinary file tools) after the view dropped them. The
// transcript keeps the full output too; the archive is what a marker can point at.
type ResultStore interface {
	// Put stores text for (scope, callID) and returns a reference shown in the marker
	// (a file path for DirStore). Storing the same call again is a no-op.
	Put(ctx context.Context, scope, callID, text string) (ref string, err error)
	// Get returns the stored text, or an error matching ErrNotArchived.
	Get(ctx context.Context, scope, callID string) (string, error)
}

// SessionStateStore is optionally implemented by a ResultStore: the policy saves a
// session's sticky state there after each burst and loads it when a run of the session
// starts in a process that has no state for it (each `lovia run -c` is a new process).
// A missing state is an error matching fs.ErrNotExist.
type SessionStateStore interface {
	LoadState(ctx context.Context, sessionID string) (json.RawMessage, error)
	SaveState(ctx context.Context, sessionID string, state json.RawMessage) error
}

// DirStore keeps one file per result: DIR/<scope>/<call_id>.txt, private to the user
// (tool output may hold secrets). The scope is the session id, or the run id for a
// run without a session, because call ids are only unique within a conversation.
type DirStore struct {
	Dir string
}

// NewDirStore returns a store under dir (e.g. $LOVIA_HOME/tool-results); the directory
// is created on first use.
func NewDirStore(dir string) *DirStore { return &DirStore{Dir: dir} }

// Path is where (scope, callID) is stored.
func (d *DirStore) Path(scope, callID string) string {
	return filepath.Join(d.Dir, safeName(scope), safeName(callID)+".txt")
}

// Put implements ResultStore. It writes to a temporary file and renames it, so a
// reader never sees half an output.
func (d *DirStore) Put(ctx context.Context, scope, callID, text string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	p := d.Path(scope, callID)
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	if err := writeFileAtomic(p, []byte(text)); err != nil {
		return "", fmt.Errorf("archive tool result: %w", err)
	}
	return p, nil
}

// statePath is where a session's state is saved (beside its archived results; the
// name cannot collide with a call's, which always end in .txt).
func (d *DirStore) statePath(sessionID string) string {
	return filepath.Join(d.Dir, safeName(sessionID), "context-state.json")
}

// LoadState implements SessionStateStore.
func (d *DirStore) LoadState(ctx context.Context, sessionID string) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return os.ReadFile(d.statePath(sessionID))
}

// SaveState implements SessionStateStore.
func (d *DirStore) SaveState(ctx context.Context, sessionID string, state json.RawMessage) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := writeFileAtomic(d.statePath(sessionID), state); err != nil {
		return fmt.Errorf("save context state: %w", err)
	}
	return nil
}

// writeFileAtomic writes to a temporary file and renames it, so a reader never sees
// half a file; directories and files are private to the user.
func writeFileAtomic(p string, data []byte) error {
	if err := safefile.PrivateDir(filepath.Dir(p)); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), p); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// Get implements ResultStore.
func (d *DirStore) Get(ctx context.Context, scope, callID string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	b, err := os.ReadFile(d.Path(scope, callID))
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: %s", ErrNotArchived, callID)
	}
	if err != nil {
		return "", fmt.Errorf("read archived tool result: %w", err)
	}
	return string(b), nil
}

// safeName maps an id to a file name: ids come from providers and users, so anything
// outside a conservative alphabet is replaced, with a hash suffix to keep names unique.
func safeName(s string) string {
	if s == "" {
		return "_"
	}
	var b strings.Builder
	changed := false
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == '.' && b.Len() > 0:
			b.WriteRune(r)
		default:
			b.WriteByte('_')
			changed = true
		}
	}
	out := b.String()
	if len(out) > 100 {
		out, changed = out[:100], true
	}
	if changed {
		out += fmt.Sprintf("-%08x", uint32(fnvString(fnvOffset, s)))
	}
	return out
}

// scopeOf is the archive scope of a run: its session, else the run itself.
func scopeOf(sessionID, runID string) string {
	if sessionID != "" {
		return sessionID
	}
	return "run-" + runID
}
