package provider

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/lovia-dev/lovia/internal/errs"
)

// RetryPolicy is the one retry policy for every provider (SPEC §2): exponential
// backoff with jitter on retryable *HTTPError (408/409/429/5xx, dropped
// connections), honouring the server's retry-after.
type RetryPolicy struct {
	// MaxAttempts counts the first try (default 5).
	MaxAttempts int
	// BaseDelay is the wait before the second attempt; it doubles each time
	// (default 1s), capped at MaxDelay (default 30s).
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// MaxRetryAfter bounds how long a server may ask us to wait; a longer
	// retry-after ends the retries with the error (default 2m).
	MaxRetryAfter time.Duration
	// Sleep waits d or until ctx is done (nil = a timer). Tests inject a fake.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter randomises a backoff delay (nil = uniform in [d/2, d]).
	Jitter func(d time.Duration) time.Duration
	// Logger receives one record per retry (nil = silent).
	Logger *slog.Logger
}

// DefaultRetryPolicy returns the SPEC policy: 5 attempts, 1s doubling to 30s.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxAttempts: 5, BaseDelay: time.Second, MaxDelay: 30 * time.Second, MaxRetryAfter: 2 * time.Minute}
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	d := DefaultRetryPolicy()
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = d.MaxAttempts
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = d.BaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = d.MaxDelay
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = d.MaxRetryAfter
	}
	if p.Sleep == nil {
		p.Sleep = sleepCtx
	}
	if p.Jitter == nil {
		p.Jitter = halfJitter
	}
	return p
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// halfJitter keeps at least half the backoff so retries stay spread out but a
// burst of clients does not synchronise.
func halfJitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2+1)
}

// Delay is the wait before attempt number next (2 = first retry). A server
// retry-after wins when it is longer than the backoff.
func (p RetryPolicy) Delay(next int, retryAfter time.Duration) time.Duration {
	p = p.withDefaults()
	d := p.BaseDelay
	for i := 2; i < next && d < p.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, p.MaxDelay)
	d = p.Jitter(d)
	return max(d, retryAfter)
}

// WithRetry wraps p so every Stream follows pol. When an attempt fails after it
// already emitted deltas, a DeltaDiscard (Text = reason) is emitted before the
// stream restarts from scratch.
func WithRetry(p Provider, pol RetryPolicy) Provider {
	return &retrying{inner: p, pol: pol.withDefaults()}
}

type retrying struct {
	inner Provider
	pol   RetryPolicy
}

func (r *retrying) Info() Info { return r.inner.Info() }

// Unwrap returns the wrapped provider.
func (r *retrying) Unwrap() Provider { return r.inner }

func (r *retrying) Stream(ctx context.Context, req Request) iter.Seq2[Delta, error] {
	return func(yield func(Delta, error) bool) {
		for attempt := 1; ; attempt++ {
			emitted := false
			var failure error
			for d, err := range r.inner.Stream(ctx, req) {
				if err != nil {
					failure = err
					break
				}
				emitted = true
				if !yield(d, nil) {
					return
				}
			}
			if failure == nil {
				return
			}
			var he *HTTPError
			retry := ctx.Err() == nil && errors.As(failure, &he) && he.Retryable()
			if !retry {
				yield(Delta{}, failure)
				return
			}
			if he.RetryAfter > r.pol.MaxRetryAfter {
				yield(Delta{}, errs.Wrap(errs.KindProvider, failure,
					"", fmt.Sprintf("the server asked to wait %s before retrying; try again later", he.RetryAfter.Round(time.Second))))
				return
			}
			if attempt >= r.pol.MaxAttempts {
				hint := "the provider kept failing; check its status page or try again later"
				if he.Transport != nil && !errors.Is(he.Transport, ErrStreamCut) {
					hint = "could not reach the provider; check the network, that the server is running, and its base URL"
				}
				if te, ok := AsTimeout(failure); ok {
					key, env := TimeoutSetting(te.Phase)
					hint = fmt.Sprintf("the server at %s did not answer in time; check that it is healthy, or raise %s in config (or %s, a Go duration such as 10m); the run is resumable", te.Server, key, env)
				}
				yield(Delta{}, errs.Wrap(errs.KindProvider, failure,
					fmt.Sprintf("model request failed after %d attempts", attempt), hint))
				return
			}
			wait := r.pol.Delay(attempt+1, he.RetryAfter)
			if r.pol.Logger != nil {
				r.pol.Logger.LogAttrs(ctx, slog.LevelWarn, "provider request failed, retrying",
					slog.String("provider", r.inner.Info().Provider),
					slog.Int("attempt", attempt), slog.Duration("wait", wait),
					slog.String("error", failure.Error()))
			}
			if emitted {
				reason := fmt.Sprintf("retrying (attempt %d of %d) after: %v", attempt+1, r.pol.MaxAttempts, failure)
				if !yield(Delta{Kind: DeltaDiscard, Text: reason}, nil) {
					return
				}
			}
			if err := r.pol.Sleep(ctx, wait); err != nil {
				yield(Delta{}, err)
				return
			}
		}
	}
}
