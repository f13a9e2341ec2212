package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/lovia-dev/lovia/internal/transcript"
)

// Attachment bytes (images a user attached, images tools returned) are stored once
// per content in the blobs table and named from the entries by SHA-256: a run's
// checkpoint batches and its session segment hold the same entries, and every
// later turn of a session replays them, so inlining base64 would store an image
// several times over (and a third bigger).

// blob is one attachment's bytes to store.
type blob struct {
	sum  string
	mime string
	data []byte
}

// splitBlobs returns entries with each attachment's Data replaced by its SHA256
// and Size (copies: the caller's entries are not changed), and the bytes to store.
func splitBlobs(entries []transcript.Entry) ([]transcript.Entry, []blob) {
	var blobs []blob
	out := transcript.DetachData(entries, func(a transcript.Attachment) {
		blobs = append(blobs, blob{sum: a.SHA256, mime: a.MIME, data: a.Data})
	})
	return out, blobs
}

// putBlobs stores blobs within tx; content already stored is left as it is.
func putBlobs(ctx context.Context, tx execQuerier, blobs []blob, now time.Time) error {
	for _, b := range blobs {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO blobs (sha256, mime, data, created_at) VALUES (?, ?, ?, ?)`,
			b.sum, b.mime, b.data, now.UnixMilli()); err != nil {
			return fmt.Errorf("store attachment: %w", err)
		}
	}
	return nil
}

// fillBlobs puts the stored bytes back into entries' attachments (in place). An
// attachment whose bytes are gone stays without Data: shown as not available,
// never an error that would make the session unreadable.
func fillBlobs(ctx context.Context, tx dbtx, entries []transcript.Entry) error {
	var cache map[string][]byte
	for i := range entries {
		for j := range entries[i].Attachments {
			a := &entries[i].Attachments[j]
			if a.SHA256 == "" || len(a.Data) > 0 {
				continue
			}
			if cache == nil {
				cache = map[string][]byte{}
			}
			data, ok := cache[a.SHA256]
			if !ok {
				err := tx.QueryRowContext(ctx, `SELECT data FROM blobs WHERE sha256 = ?`, a.SHA256).Scan(&data)
				if err != nil && !errors.Is(err, sql.ErrNoRows) {
					return fmt.Errorf("load attachment: %w", err)
				}
				cache[a.SHA256] = data
			}
			// A stored blob is checked against its name: the database file is
			// ours, but a damaged one must not show one image for another.
			if len(data) > 0 && fmt.Sprintf("%x", sha256.Sum256(data)) == a.SHA256 {
				a.Data = data
			}
		}
	}
	return nil
}

// dropOrphanBlobs deletes the attachments no stored entry names any more, so a
// deleted session takes its images with it. It reads every stored entry, which is
// fine for the rare deletion it follows.
func dropOrphanBlobs(ctx context.Context, tx dbtx) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM blobs WHERE
	NOT EXISTS (SELECT 1 FROM session_runs WHERE instr(entries, blobs.sha256) > 0) AND
	NOT EXISTS (SELECT 1 FROM run_batches WHERE instr(entries, blobs.sha256) > 0)`)
	if err != nil {
		return fmt.Errorf("drop unused attachments: %w", err)
	}
	return nil
}
