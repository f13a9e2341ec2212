package imagefit

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"sync"
)

// Encoder fits images to one provider's limits and base64-encodes them, once per
// distinct image: a request builder asks for the same attachment on every turn of
// a conversation, and decoding, scaling and encoding it again each time would cost
// more than the rest of the request. Safe for concurrent use; the zero value is
// not usable (NewEncoder).
type Encoder struct {
	lim Limits
	mu  sync.Mutex
	m   map[[sha256.Size]byte]*encoded
	// order is the insertion order, for eviction once size exceeds encoderBudget.
	order []([sha256.Size]byte)
	size  int
}

type encoded struct {
	mime, b64 string
	err       error
}

// encoderBudget bounds the base64 text an Encoder keeps.
const encoderBudget = 128 << 20

// NewEncoder returns an Encoder for lim.
func NewEncoder(lim Limits) *Encoder {
	return &Encoder{lim: lim, m: map[[sha256.Size]byte]*encoded{}}
}

// Limits returns the encoder's limits.
func (e *Encoder) Limits() Limits { return e.lim }

// Base64 returns data fitted to the limits, as base64, and its MIME type. sum is
// data's SHA-256 in hex when the caller has it (an attachment loaded from the
// store), which spares hashing the image on every turn; "" hashes data.
func (e *Encoder) Base64(data []byte, sum string) (mime, b64 string, err error) {
	var key [sha256.Size]byte
	if b, err := hex.DecodeString(sum); err == nil && len(b) == sha256.Size {
		copy(key[:], b)
	} else {
		key = sha256.Sum256(data)
	}
	e.mu.Lock()
	if r, ok := e.m[key]; ok {
		e.mu.Unlock()
		return r.mime, r.b64, r.err
	}
	e.mu.Unlock()
	// Encoded outside the lock: two requests may race to encode the same image,
	// and both get the same answer.
	r := &encoded{}
	var out []byte
	if out, r.mime, r.err = Fit(data, e.lim); r.err == nil {
		r.b64 = base64.StdEncoding.EncodeToString(out)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.m[key]; !ok {
		e.m[key] = r
		e.order = append(e.order, key)
		e.size += len(r.b64) + 64
		for e.size > encoderBudget && len(e.order) > 1 {
			old := e.order[0]
			e.order = e.order[1:]
			e.size -= len(e.m[old].b64) + 64
			delete(e.m, old)
		}
	}
	return r.mime, r.b64, r.err
}
