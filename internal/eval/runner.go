package eval

import (
	"context"
	"errors"
	"sync"
	"time"
)

// RunFunc runs one sample of a case and reports what happened. It never panics on a
// failed run: failures are carried in Outcome.Err.
type RunFunc func(ctx context.Context, c Case, sample int) Outcome

// Options tune Run.
type Options struct {
	// Concurrency is how many samples run at once (default 4).
	Concurrency int
	// FailFast stops scheduling new samples after the first failing one.
	FailFast bool
	// Progress is called after each sample (serially).
	Progress func(done, total int, r SampleResult)
	Judge    JudgeFunc
}

// DefaultConcurrency is the number of samples run at once.
const DefaultConcurrency = 4

// Run evaluates every case of f. The report lists cases in file order.
func Run(ctx context.Context, f *File, run RunFunc, opts Options) *Report {
	conc := opts.Concurrency
	if conc <= 0 {
		conc = f.Defaults.Concurrency
	}
	if conc <= 0 {
		conc = DefaultConcurrency
	}
	type job struct{ ci, sample int }
	var jobs []job
	built := make([][]Check, len(f.Cases))
	for ci, c := range f.Cases {
		for _, cs := range c.Checks {
			chk, err := cs.Build()
			if err != nil { // Parse validated already; keep the error visible anyway
				chk = errCheck{err}
			}
			built[ci] = append(built[ci], chk)
		}
		for s := range c.Samples {
			jobs = append(jobs, job{ci, s})
		}
	}
	rep := &Report{Started: time.Now()}
	results := make([][]SampleResult, len(f.Cases))
	for i, c := range f.Cases {
		results[i] = make([]SampleResult, c.Samples)
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var (
		mu   sync.Mutex
		done int
		wg   sync.WaitGroup
	)
	sem := make(chan struct{}, conc)
	for _, j := range jobs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func(j job) {
			defer wg.Done()
			defer func() { <-sem }()
			c := f.Cases[j.ci]
			c.Model = f.ResolveModel(c.Model)
			start := time.Now()
			out := run(ctx, c, j.sample)
			if out.Duration == 0 {
				out.Duration = time.Since(start)
			}
			env := &Env{Input: c.Input, Judge: opts.Judge, JudgeModel: f.Judge.Model, JudgeThreshold: f.Judge.Threshold}
			sr := judge(ctx, env, built[j.ci], out)
			sr.Sample, sr.Case = j.sample, c.Name
			sr.Ran = true
			mu.Lock()
			results[j.ci][j.sample] = sr
			done++
			if opts.Progress != nil {
				opts.Progress(done, len(jobs), sr)
			}
			mu.Unlock()
			if opts.FailFast && !sr.Pass {
				stop()
			}
		}(j)
	}
	wg.Wait()
	for i, c := range f.Cases {
		rep.Cases = append(rep.Cases, summarize(c.Name, results[i]))
	}
	rep.Duration = time.Since(rep.Started)
	rep.tally()
	return rep
}

func judge(ctx context.Context, env *Env, checks []Check, o Outcome) SampleResult {
	sr := SampleResult{Pass: true, Turns: o.Turns, Usage: o.Usage, DurationMS: o.Duration.Milliseconds(), Output: clip(o.Output, 500)}
	if o.Err != nil {
		sr.Error = o.Err.Error()
		if errors.Is(o.Err, context.Canceled) {
			sr.Error = "cancelled"
		}
	}
	total := 0.0
	for _, c := range checks {
		v := c.Evaluate(ctx, env, o)
		total += v.Score
		sr.Checks = append(sr.Checks, CheckResult{Name: c.Name(), Verdict: v})
		if !v.Pass {
			sr.Pass = false
		}
	}
	if len(checks) > 0 {
		sr.Score = total / float64(len(checks))
	}
	return sr
}
