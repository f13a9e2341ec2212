package sqlite

import (
	"bytes"
	"context"
	"encoding/base64"
	"testing"

	"github.com/lovia-dev/lovia/internal/transcript"
)

// An image is stored once, however many batches, segments and sessions carry it,
// as bytes (not base64 inside the entries' JSON), and loads back whole. The
// caller's entries are not changed by storing them.
func TestAttachmentsStoredOnce(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	img := bytes.Repeat([]byte("\x89PNG-not-really-but-bytes"), 400)
	in := transcript.UserInput("look")
	in.Attachments = []transcript.Attachment{{MIME: "image/png", Name: "shot.png", Data: img}}
	res := transcript.ToolResult("c1", "shot", "here", false)
	res.Attachments = []transcript.Attachment{{MIME: "image/png", Data: img}}
	entries := []transcript.Entry{in, transcript.ToolCall("c1", "shot", nil), res}

	h := running("coder")
	h.SessionID = "s1"
	if err := db.Checkpoints().Append(ctx, "run-1", entries[:1], h); err != nil {
		t.Fatal(err)
	}
	if err := db.Checkpoints().Append(ctx, "run-1", entries[1:], h); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"s1", "s2"} {
		if err := db.Sessions().Append(ctx, s, "run-"+s, entries, nil); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(entries[0].Attachments[0].Data, img) || entries[0].Attachments[0].SHA256 != "" {
		t.Fatal("storing changed the caller's entries")
	}
	var n int
	if err := db.sql.QueryRowContext(ctx, `SELECT count(*) FROM blobs`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d blobs (%v), want 1", n, err)
	}
	b64 := base64.StdEncoding.EncodeToString(img)[:40]
	for _, q := range []string{`SELECT group_concat(entries) FROM session_runs`, `SELECT group_concat(entries) FROM run_batches`} {
		var text string
		if err := db.sql.QueryRowContext(ctx, q).Scan(&text); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains([]byte(text), []byte(b64)) {
			t.Errorf("%s: the image is inlined as base64", q)
		}
	}
	got, err := db.Sessions().Load(ctx, "s2")
	if err != nil {
		t.Fatal(err)
	}
	snap, err := db.Checkpoints().Load(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, es := range [][]transcript.Entry{got, snap.Entries} {
		if len(es) != 3 || !bytes.Equal(es[0].Attachments[0].Data, img) || !bytes.Equal(es[2].Attachments[0].Data, img) ||
			es[0].Attachments[0].Name != "shot.png" || es[0].Attachments[0].Size != len(img) {
			t.Fatalf("loaded attachments: %+v", es)
		}
	}
}

// Deleting sessions deletes the images only they used.
func TestDeleteSessionDropsItsBlobs(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	add := func(session string, data []byte) {
		in := transcript.UserInput("look")
		in.Attachments = []transcript.Attachment{{MIME: "image/png", Data: data}}
		if err := db.Sessions().Append(ctx, session, "run-"+session, []transcript.Entry{in}, nil); err != nil {
			t.Fatal(err)
		}
	}
	add("a", []byte("image-a"))
	add("b", []byte("image-b"))
	add("c", []byte("image-a")) // shared with a
	count := func() int {
		var n int
		if err := db.sql.QueryRowContext(ctx, `SELECT count(*) FROM blobs`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if err := db.Sessions().DeleteSession(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 2 {
		t.Fatalf("%d blobs after deleting a, want 2 (a's image is still c's)", n)
	}
	if err := db.Sessions().DeleteSession(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 1 {
		t.Fatalf("%d blobs after deleting a and c, want 1", n)
	}
}
