package compaction

// Stability measures how much of each model request survives verbatim as the prefix
// of the next one: the share a provider's prompt cache can serve. Feed it the
// serialized requests in order (e.g. the bodies a fake server recorded).
type Stability struct {
	// Carried is the sum over consecutive pairs of the bytes request n shares as a
	// prefix with request n+1; Sent is the sum of the sizes of those requests n.
	Carried, Sent int64
	// Requests counted so far.
	Requests int
	prev     []byte
}

// Add records the next request.
func (s *Stability) Add(req []byte) {
	if s.prev != nil {
		n := min(len(s.prev), len(req))
		i := 0
		for i < n && s.prev[i] == req[i] {
			i++
		}
		s.Carried += int64(i)
		s.Sent += int64(len(s.prev))
	}
	s.prev = req
	s.Requests++
}

// Ratio is Carried/Sent (1 with fewer than two requests).
func (s *Stability) Ratio() float64 {
	if s.Sent == 0 {
		return 1
	}
	return float64(s.Carried) / float64(s.Sent)
}
