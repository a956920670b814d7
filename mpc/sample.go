package mpc

import (
	"context"
	"fmt"

	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

// DefaultGroups is the number of sub-samples of a sampled run.
const DefaultGroups = 10

// generateSampled runs every setting on the pages that s keeps, in one pass
// over r, as k+1 streams: the whole sample, and each of k disjoint random
// sub-samples of it (trace.SampleSplit). Each page is in or out for the
// whole trace, so its lives and gaps are exact, and OPP's per-window budgets
// are taken on the sample's own accessed counts. The results are the whole
// sample's, every count multiplied by 1/rate; each holds the k sub-samples'
// results (counts multiplied by k/rate) as Groups, for the error bounds
// (result.Result.Bound).
//
// The sub-samples' walks run on the calling goroutine, beside the sample's
// helpers; their engines have pipelines of their own. So the cost is two
// walks of the sampled records (the sample's and the sub-samples') and k+1
// times the engines' per-window work.
func generateSampled(ctx context.Context, r trace.Reader, settings []policy.Setting, s trace.Sample, opts Options) ([]*result.Result, error) {
	k := opts.Groups
	switch {
	case k == 0:
		k = DefaultGroups
	case k == 1:
		k = 0
	case k < 0 || k > trace.MaxSampleGroups:
		return nil, fmt.Errorf("mpc: %d sub-samples: want 2 .. %d (or 1 for none)", k, trace.MaxSampleGroups)
	}
	sp, err := trace.NewSampleSplit(r, s, k)
	if err != nil {
		return nil, fmt.Errorf("mpc: %w", err)
	}
	sp.DiscardPages()
	streams := make([]*stream, 1+k)
	for i := range streams {
		walkers, scale := maxWalkers, s.Scale()
		if i > 0 {
			walkers, scale = 1, scale*int64(k)
		}
		st, err := newScaledStream(settings, walkers, scale)
		if err != nil {
			for _, o := range streams[:i] {
				o.close()
			}
			return nil, err
		}
		defer st.close()
		streams[i] = st
	}
	ptrs := [2][]*trace.Window{make([]*trace.Window, 1+k), make([]*trace.Window, 1+k)}
	cur := 0
	read := func() ([]*trace.Window, error) {
		ws, err := sp.Read()
		if err != nil {
			return nil, err
		}
		p := ptrs[cur]
		cur ^= 1
		for i := range ws {
			p[i] = &ws[i]
		}
		return p, nil
	}
	h := sp.Header()
	room := newRoom(len(settings) * len(streams))
	if err := room.check(h.Windows); err != nil {
		return nil, err
	}
	if err := pass(ctx, read, streams, h.Windows, opts.Progress, room); err != nil {
		return nil, err
	}
	scale := s.Scale()
	out := streams[0].results(settings, int64(h.PageSize), scale)
	for _, o := range out {
		o.SamplePPM, o.SamplePages = s.PPM, int64(sp.Kept())
	}
	for _, st := range streams[1:] {
		for i, g := range st.results(settings, int64(h.PageSize), scale*int64(k)) {
			out[i].Groups = append(out[i].Groups, g)
		}
	}
	return out, nil
}
