package memory

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// The vector index lives beside the keyword index in the archive's SQLite file: one
// row per item and embedding model. Search is a scan with cosine similarity, which
// is fast enough for the thousands of memories one user keeps.
const vectorSchema = `
CREATE TABLE IF NOT EXISTS memory_vectors (
	item_id INTEGER NOT NULL,
	model   TEXT NOT NULL,
	vec     BLOB NOT NULL,
	PRIMARY KEY (item_id, model)
);
CREATE TRIGGER IF NOT EXISTS memory_items_vec_ad AFTER DELETE ON memory_items BEGIN
	DELETE FROM memory_vectors WHERE item_id = old.id;
END;
`

// rrfK is reciprocal-rank fusion's constant (the usual 60): a document's score is
// the sum over the rankings of 1/(rrfK + rank).
const rrfK = 60

// backfillBatch bounds how many unindexed items one search embeds.
const backfillBatch = 64

// SetEmbedder turns on hybrid search with e (nil: keyword only).
func (a *Archive) SetEmbedder(e Embedder) { a.embed = e }

func embedText(it Item) string {
	if it.Tags != "" {
		return it.Content + "\n" + it.Tags
	}
	return it.Content
}

// indexVectors embeds items and stores their vectors (a no-op without an embedder).
func (a *Archive) indexVectors(ctx context.Context, items []Item) error {
	if a.embed == nil || len(items) == 0 {
		return nil
	}
	texts := make([]string, len(items))
	for i, it := range items {
		texts[i] = embedText(it)
	}
	vecs, err := a.embed.Embed(ctx, texts)
	if err != nil {
		return err
	}
	if len(vecs) != len(items) {
		return fmt.Errorf("embeddings: %d vectors for %d items", len(vecs), len(items))
	}
	model := a.embed.Model()
	for i, it := range items {
		if _, err := a.db.ExecContext(ctx, `INSERT OR REPLACE INTO memory_vectors(item_id, model, vec) VALUES (?,?,?)`, it.ID, model, encodeVec(vecs[i])); err != nil {
			return err
		}
	}
	return nil
}

// backfill embeds items saved before the embedder was configured (or when it was
// unreachable), a batch at a time.
func (a *Archive) backfill(ctx context.Context) error {
	rows, err := a.db.QueryContext(ctx, `SELECT id, content, tags FROM memory_items m
		WHERE NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE v.item_id = m.id AND v.model = ?) ORDER BY id LIMIT ?`, a.embed.Model(), backfillBatch)
	if err != nil {
		return err
	}
	var items []Item
	for rows.Next() {
		var it Item
		if err := rows.Scan(&it.ID, &it.Content, &it.Tags); err != nil {
			rows.Close()
			return err
		}
		items = append(items, it)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	return a.indexVectors(ctx, items)
}

// Search returns up to limit items of the given scopes matching query, best first:
// keyword matches (FTS5, bm25) alone without an embedder; with one, the keyword
// and the vector rankings fused by reciprocal rank, so an item found by meaning
// alone (other words, same sense) is found too. If the embedder fails, the search
// falls back to keywords.
func (a *Archive) Search(ctx context.Context, query string, scopes []string, limit int) ([]Item, error) {
	if err := a.ready(ctx); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 10
	}
	if a.embed == nil {
		return a.keywordSearch(ctx, query, scopes, limit)
	}
	depth := max(limit*3, 30)
	kw, err := a.keywordSearch(ctx, query, scopes, depth)
	if err != nil && strings.TrimSpace(query) == "" {
		return nil, err
	}
	_ = a.backfill(ctx)
	vec, verr := a.vectorSearch(ctx, query, scopes, depth)
	if verr != nil {
		if err != nil {
			return nil, err
		}
		return kw[:min(limit, len(kw))], nil
	}
	score := map[int64]float64{}
	byID := map[int64]Item{}
	for r, it := range kw {
		score[it.ID] += 1.0 / float64(rrfK+r+1)
		byID[it.ID] = it
	}
	for r, it := range vec {
		score[it.ID] += 1.0 / float64(rrfK+r+1)
		if _, ok := byID[it.ID]; !ok {
			byID[it.ID] = it
		}
	}
	out := make([]Item, 0, len(byID))
	for _, it := range byID {
		out = append(out, it)
	}
	sort.Slice(out, func(i, j int) bool {
		if score[out[i].ID] != score[out[j].ID] {
			return score[out[i].ID] > score[out[j].ID]
		}
		return out[i].ID > out[j].ID
	})
	return out[:min(limit, len(out))], nil
}

// vectorSearch ranks the items of scopes by cosine similarity to query's embedding.
func (a *Archive) vectorSearch(ctx context.Context, query string, scopes []string, limit int) ([]Item, error) {
	if strings.TrimSpace(query) == "" || len(scopes) == 0 {
		return nil, nil
	}
	qv, err := a.embed.Embed(ctx, []string{query})
	if err != nil {
		return nil, err
	}
	if len(qv) != 1 || len(qv[0]) == 0 {
		return nil, fmt.Errorf("embeddings: no vector for the query")
	}
	marks := make([]string, len(scopes))
	args := []any{a.embed.Model()}
	for i, s := range scopes {
		marks[i] = "?"
		args = append(args, s)
	}
	rows, err := a.db.QueryContext(ctx, `SELECT m.id, m.scope, m.content, m.tags, m.pinned, m.session_id, m.run_id, m.created_at, v.vec
		FROM memory_vectors v JOIN memory_items m ON m.id = v.item_id
		WHERE v.model = ? AND m.scope IN (`+strings.Join(marks, ",")+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	type scored struct {
		it  Item
		sim float64
	}
	var all []scored
	for rows.Next() {
		var it Item
		var created string
		var blob []byte
		if err := rows.Scan(&it.ID, &it.Scope, &it.Content, &it.Tags, &it.Pinned, &it.SessionID, &it.RunID, &created, &blob); err != nil {
			return nil, err
		}
		it.Created, _ = time.Parse(time.RFC3339Nano, created)
		it.Snippet = clipRunes(it.Content, 160)
		// Nothing in common is no match, however few items there are.
		if sim := cosine(qv[0], decodeVec(blob)); sim > 0 {
			all = append(all, scored{it, sim})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].sim > all[j].sim })
	out := make([]Item, 0, min(limit, len(all)))
	for _, s := range all[:min(limit, len(all))] {
		out = append(out, s.it)
	}
	return out, nil
}

func encodeVec(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func decodeVec(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// cosine is the cosine similarity of a and b (0 when their lengths differ or one
// is zero).
func cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / (math.Sqrt(na) * math.Sqrt(nb))
}

func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
