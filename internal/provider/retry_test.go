package provider

import (
	"context"
	"errors"
	"iter"
	"reflect"
	"testing"
	"time"

	"github.com/lovia-dev/lovia/internal/errs"
)

// scripted fails attempts with the given errors (after emitting `partial` text
// deltas each), then succeeds.
type scripted struct {
	fails   []error
	partial int
	calls   int
}

func (s *scripted) Info() Info { return Info{Provider: "fake"} }

func (s *scripted) Stream(ctx context.Context, req Request) iter.Seq2[Delta, error] {
	return func(yield func(Delta, error) bool) {
		n := s.calls
		s.calls++
		if n < len(s.fails) {
			for range s.partial {
				if !yield(Delta{Kind: DeltaText, Text: "x"}, nil) {
					return
				}
			}
			yield(Delta{}, s.fails[n])
			return
		}
		if yield(Delta{Kind: DeltaText, Text: "ok"}, nil) {
			yield(Delta{Kind: DeltaFinish, FinishReason: "stop"}, nil)
		}
	}
}

type recorder struct{ waits []time.Duration }

func (r *recorder) sleep(ctx context.Context, d time.Duration) error {
	r.waits = append(r.waits, d)
	return ctx.Err()
}

func policy(r *recorder) RetryPolicy {
	p := DefaultRetryPolicy()
	p.Sleep = r.sleep
	p.Jitter = func(d time.Duration) time.Duration { return d }
	return p
}

func drain(ctx context.Context, p Provider) (kinds []DeltaKind, discards []string, err error) {
	for d, e := range p.Stream(ctx, Request{}) {
		if e != nil {
			return kinds, discards, e
		}
		kinds = append(kinds, d.Kind)
		if d.Kind == DeltaDiscard {
			discards = append(discards, d.Text)
		}
	}
	return kinds, discards, nil
}

func TestWithRetry(t *testing.T) {
	e500 := &HTTPError{Provider: "fake", Status: 500, Message: "boom"}
	e429 := &HTTPError{Provider: "fake", Status: 429, RetryAfter: 10 * time.Second}
	cut := &HTTPError{Provider: "fake", Transport: ErrStreamCut}
	e400 := &HTTPError{Provider: "fake", Status: 400, Message: "bad"}
	overflow := &HTTPError{Provider: "fake", Status: 400, Overflow: true}
	auth := errs.Wrap(errs.KindAuth, &HTTPError{Status: 401}, "refused", "fix key")
	tests := []struct {
		name     string
		fails    []error
		partial  int
		waits    []time.Duration
		discards int
		calls    int
		err      func(error) bool
	}{
		{name: "success", calls: 1},
		{name: "500 twice", fails: []error{e500, e500}, waits: []time.Duration{time.Second, 2 * time.Second}, calls: 3},
		{name: "retry-after wins over shorter backoff", fails: []error{e429}, waits: []time.Duration{10 * time.Second}, calls: 2},
		{name: "cut after output emits discard", fails: []error{cut}, partial: 3, waits: []time.Duration{time.Second}, discards: 1, calls: 2},
		{name: "no discard when nothing was emitted", fails: []error{cut}, waits: []time.Duration{time.Second}, calls: 2},
		{name: "400 not retried", fails: []error{e400}, calls: 1, err: func(err error) bool { return err == e400 }},
		{name: "overflow not retried", fails: []error{overflow}, calls: 1, err: func(err error) bool { return errors.Is(err, ErrContextOverflow) }},
		{name: "auth not retried", fails: []error{auth}, calls: 1, err: func(err error) bool { return errs.KindOf(err) == errs.KindAuth }},
		{name: "gives up after 5", fails: []error{e500, e500, e500, e500, e500, e500}, calls: 5,
			waits: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second},
			err: func(err error) bool {
				var he *HTTPError
				return errors.As(err, &he) && he.Status == 500 && errs.KindOf(err) == errs.KindProvider
			}},
		{name: "retry-after beyond the cap gives up", fails: []error{&HTTPError{Status: 429, RetryAfter: time.Hour}}, calls: 1,
			err: func(err error) bool { return errs.HintOf(err) != "" && errs.KindOf(err) == errs.KindProvider }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inner := &scripted{fails: tt.fails, partial: tt.partial}
			rec := &recorder{}
			kinds, discards, err := drain(context.Background(), WithRetry(inner, policy(rec)))
			if tt.err == nil && err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if tt.err != nil && (err == nil || !tt.err(err)) {
				t.Fatalf("error %v", err)
			}
			if inner.calls != tt.calls {
				t.Errorf("%d attempts, want %d", inner.calls, tt.calls)
			}
			if !reflect.DeepEqual(rec.waits, tt.waits) {
				t.Errorf("waits %v, want %v", rec.waits, tt.waits)
			}
			if len(discards) != tt.discards {
				t.Errorf("discards %v, want %d", discards, tt.discards)
			}
			if tt.err == nil && (len(kinds) < 2 || kinds[len(kinds)-1] != DeltaFinish) {
				t.Errorf("stream did not finish: %v", kinds)
			}
		})
	}
}

func TestRetrySleepHonoursCancel(t *testing.T) {
	inner := &scripted{fails: []error{&HTTPError{Status: 503}}}
	pol := DefaultRetryPolicy()
	pol.BaseDelay = time.Hour // real timer: only cancellation can end it
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	_, _, err := drain(ctx, WithRetry(inner, pol))
	if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
		t.Fatalf("err %v after %v", err, time.Since(start))
	}
}

func TestRetryStopsWhenConsumerStops(t *testing.T) {
	inner := &scripted{fails: []error{&HTTPError{Status: 503}}, partial: 2}
	rec := &recorder{}
	for d := range WithRetry(inner, policy(rec)).Stream(context.Background(), Request{}) {
		if d.Kind == DeltaDiscard {
			break
		}
	}
	if inner.calls != 1 || len(rec.waits) != 0 {
		t.Errorf("kept going after the consumer stopped: %d calls", inner.calls)
	}
}

func TestRetryDelay(t *testing.T) {
	p := DefaultRetryPolicy()
	p.Jitter = func(d time.Duration) time.Duration { return d }
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}
	for i, w := range want {
		if got := p.Delay(i+2, 0); got != w {
			t.Errorf("Delay(%d) = %v, want %v", i+2, got, w)
		}
	}
	p = DefaultRetryPolicy() // real jitter stays within [d/2, d]
	for range 100 {
		if d := p.Delay(3, 0); d < time.Second || d > 2*time.Second {
			t.Fatalf("jittered delay %v outside [1s, 2s]", d)
		}
	}
}
