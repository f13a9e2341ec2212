package memory

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// wordEmbedder embeds by a fixed word→dimension table.
type wordEmbedder struct {
	dims map[string]int
	fail bool
}

func (w *wordEmbedder) Model() string { return "test:words" }

func (w *wordEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	if w.fail {
		return nil, errors.New("server down")
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 4)
		for _, word := range strings.Fields(strings.ToLower(t)) {
			if d, ok := w.dims[strings.Trim(word, ".,")]; ok {
				v[d]++
			}
		}
		out[i] = v
	}
	return out, nil
}

func TestHybridSearch(t *testing.T) {
	ctx := context.Background()
	a, err := OpenArchive(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, c := range []string{"The car is in garage B.", "Lunch is at noon.", "The automobile insurance renews in May."} {
		if _, err := a.Add(ctx, Item{Scope: GlobalScope, Content: c}); err != nil {
			t.Fatal(err)
		}
	}
	scopes := []string{GlobalScope}
	if got, _ := a.Search(ctx, "vehicle", scopes, 5); len(got) != 0 {
		t.Fatalf("keyword only found %v", got)
	}
	emb := &wordEmbedder{dims: map[string]int{"car": 0, "automobile": 0, "vehicle": 0, "lunch": 1}}
	a.SetEmbedder(emb)
	got, err := a.Search(ctx, "vehicle", scopes, 5)
	if err != nil || len(got) != 2 {
		t.Fatalf("hybrid: %v %v", got, err)
	}
	// Found by both rankings beats found by one.
	got, _ = a.Search(ctx, "automobile", scopes, 5)
	if len(got) != 2 || !strings.Contains(got[0].Content, "automobile") {
		t.Errorf("fusion order: %v", got)
	}
	// The embedder down: keyword results still come back.
	emb.fail = true
	got, err = a.Search(ctx, "automobile", scopes, 5)
	if err != nil || len(got) != 1 {
		t.Errorf("fallback: %v %v", got, err)
	}
	// Deleting an item deletes its vectors.
	if err := a.Remove(ctx, got[0].ID); err != nil {
		t.Fatal(err)
	}
	var n int
	a.db.QueryRow(`SELECT count(*) FROM memory_vectors WHERE item_id = ?`, got[0].ID).Scan(&n)
	if n != 0 {
		t.Errorf("%d vectors left for a removed item", n)
	}
}
