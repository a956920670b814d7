package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"mdk/trace"
)

// Opener opens a job's trace; the caller closes the closer.
type Opener func(ctx context.Context, job string) (trace.Reader, io.Closer, error)

// OpenFile opens a local trace file (trace.Open).
func OpenFile(_ context.Context, job string) (trace.Reader, io.Closer, error) { return trace.Open(job) }

// RunJob opens a job's trace and runs the plan over it; a failure to open is
// the job's error.
func (p *Plan) RunJob(ctx context.Context, job string, open Opener) (JobResult, error) {
	r, c, err := open(ctx, job)
	if err != nil {
		if ctx.Err() != nil {
			return JobResult{Job: job}, ctx.Err()
		}
		return JobResult{Job: job, Error: err.Error()}, nil
	}
	defer c.Close()
	return p.Run(ctx, job, r)
}

// RunLocal runs every job on a pool of workers goroutines (0: GOMAXPROCS),
// merges their accumulators and builds the fleet view. Failed jobs are in
// the view with their errors; only a cancelled ctx stops the run.
func (p *Plan) RunLocal(ctx context.Context, jobs []string, open Opener, workers int) (*Fleet, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	results := make([]JobResult, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range min(workers, max(len(jobs), 1)) {
		wg.Go(func() {
			for i := range next {
				jr, err := p.RunJob(ctx, jobs[i], open)
				if err != nil {
					mu.Lock()
					firstErr = cmpOr(firstErr, err)
					mu.Unlock()
					continue
				}
				results[i] = jr
			}
		})
	}
feed:
	for i := range jobs {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := cmpOr(ctx.Err(), firstErr); err != nil {
		return nil, err
	}
	merged := map[string]Acc{}
	for i := range results {
		for _, a := range p.Accs(&results[i]) {
			if b, ok := merged[a.Key]; ok {
				a = b.Merge(a)
			}
			merged[a.Key] = a
		}
	}
	accs := make([]Acc, 0, len(merged))
	for _, a := range merged {
		accs = append(accs, a)
	}
	return p.Build(accs, results), nil
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// DetectWindow returns the window length of the first job whose trace opens,
// the default of [Config.Window].
func DetectWindow(ctx context.Context, jobs []string, open Opener) (time.Duration, error) {
	var errs []error
	for _, j := range jobs {
		r, c, err := open(ctx, j)
		if err != nil {
			errs = append(errs, err)
			if len(errs) >= 3 {
				break
			}
			continue
		}
		w := r.Header().Window
		c.Close()
		return w, nil
	}
	if len(jobs) == 0 {
		return 0, errors.New("fleet: no jobs")
	}
	return 0, fmt.Errorf("fleet: cannot tell the window length: no trace opens (%w)", errors.Join(errs...))
}
