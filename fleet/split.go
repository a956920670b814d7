package fleet

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"mdk/mpc"
	"mdk/trace"
)

// A Piece is a unit of work of a distributed fleet run (fleet/beam): a job
// whole (Hi 0), or partitions Lo .. Hi-1 of a job's partitioned trace
// (docs/fleet.md, "One trace over many workers").
type Piece struct {
	Job    string
	Lo, Hi int
}

// Whole reports whether the piece is a whole job.
func (pc Piece) Whole() bool { return pc.Hi == 0 }

// PartState is what a piece of partitions contributes to its job: the
// partitions' merged mpc.Partial, or the first error (Lo says which
// piece's, so that merging errors is deterministic too). It is plain data;
// fleet/beam encodes it with [PartState.MarshalBinary].
type PartState struct {
	Job     string
	Lo      int // the piece's (or after a merge the lowest) first partition
	Error   string
	Partial *mpc.Partial
}

// SplitReason says why the plan's jobs are not split into pieces of
// partitions ("" if they are, when their traces are partitioned): every
// setting must run on gap histograms alone (not lopp's nor lru's
// engines), and no controller or sample may be asked for.
func (p *Plan) SplitReason() string {
	switch {
	case len(p.Controllers) > 0:
		return "a controller runs over its job's whole trace"
	case p.Config.SamplePPM != 0:
		return "a sampled run needs its whole sample's pass"
	}
	if ok, err := mpc.Mergeable(p.All); err != nil || !ok {
		return "lopp's and lru's engines need more than gap histograms"
	}
	return ""
}

// Pieces returns a job's pieces: at most split groups of consecutive
// partitions of its trace, as even in pages as they go
// (trace.Partitioning.Ranges, by the partitions' cuts; split 0: one per
// partition), when the trace is a partitioned trace of every page with
// the fleet's window length and the plan splits (SplitReason). Otherwise,
// and when the trace does not open (its job then fails in RunJob as it
// would whole), the job is one whole piece.
func (p *Plan) Pieces(ctx context.Context, job string, open Opener, split int) []Piece {
	whole := []Piece{{Job: job}}
	if split == 1 || p.SplitReason() != "" {
		return whole
	}
	r, c, err := open(ctx, job)
	if err != nil {
		return whole
	}
	defer c.Close()
	pr, ok := r.(trace.PartitionedReader)
	h := r.Header()
	if !ok || !h.Sample.All() || h.Window != p.Config.Window {
		return whole
	}
	parts := pr.Partitioning()
	n := parts.Count
	if split > 0 {
		n = min(split, n)
	}
	var out []Piece
	for _, r := range parts.Ranges(n) {
		out = append(out, Piece{Job: job, Lo: r[0], Hi: r[1]})
	}
	return out
}

// WalkPiece walks a piece of partitions (mpc.WalkPartitions over Plan.All);
// a failure is the state's error, never a panic; only a cancelled ctx is
// returned as an error.
func (p *Plan) WalkPiece(ctx context.Context, pc Piece, open Opener) (st PartState, err error) {
	st = PartState{Job: pc.Job, Lo: pc.Lo}
	defer func() {
		if v := recover(); v != nil {
			st = PartState{Job: pc.Job, Lo: pc.Lo, Error: fmt.Sprintf("internal error: %v\n%s", v, debug.Stack())}
			err = nil
		}
	}()
	fail := func(e error) (PartState, error) {
		if ctx.Err() != nil {
			return st, ctx.Err()
		}
		// A trace's error names its file already.
		st.Error = fmt.Sprintf("%s: partitions %d..%d: %s", pc.Job, pc.Lo, pc.Hi-1, strings.TrimPrefix(e.Error(), pc.Job+": "))
		return st, nil
	}
	r, c, err := open(ctx, pc.Job)
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	pr, ok := r.(trace.PartitionedReader)
	if !ok {
		return fail(errors.New("not a partitioned trace"))
	}
	part, err := mpc.WalkPartitions(ctx, pr, pc.Lo, pc.Hi, p.All)
	if err != nil {
		return fail(err)
	}
	st.Partial = part
	return st, nil
}

// MergeParts merges two pieces' states of one job (mpc.Partial.Merge); an
// error wins over a partial, and of two errors the one of the lower
// partitions, so any order of merges gives the same state.
func MergeParts(a, b PartState) PartState {
	if b.Lo < a.Lo {
		a, b = b, a
	}
	switch {
	case a.Error != "":
		return a
	case b.Error != "":
		return PartState{Job: a.Job, Lo: a.Lo, Error: b.Error}
	}
	if err := a.Partial.Merge(b.Partial); err != nil {
		return PartState{Job: a.Job, Lo: a.Lo, Error: fmt.Sprintf("%s: %v", a.Job, err)}
	}
	return a
}

// FinishJob turns a job's merged state into its result: every setting's
// run from the merged partial (mpc.Partial.Results, the engines fed as mdk
// mpc's partitioned pass feeds them), then the job's numbers as [Plan.Run]
// computes them. Errors are the job's; only a cancelled ctx is returned.
func (p *Plan) FinishJob(ctx context.Context, st PartState) (jr JobResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			jr = JobResult{Job: st.Job, Error: fmt.Sprintf("internal error: %v\n%s", v, debug.Stack())}
			err = nil
		}
	}()
	if st.Error != "" {
		return JobResult{Job: st.Job, Error: st.Error}, nil
	}
	runs, err := st.Partial.Results(ctx, p.All)
	if err == nil {
		jr, err = p.job(st.Job, runs, nil)
	} else {
		err = fmt.Errorf("%s: %w", st.Job, err)
	}
	if err != nil {
		if ctx.Err() != nil {
			return JobResult{Job: st.Job}, ctx.Err()
		}
		return JobResult{Job: st.Job, Error: err.Error()}, nil
	}
	return jr, nil
}

// MarshalBinary encodes the state: the job, Lo, the error, and the
// partial's own encoding.
func (st PartState) MarshalBinary() ([]byte, error) {
	var b []byte
	str := func(s string) { b = binary.AppendUvarint(b, uint64(len(s))); b = append(b, s...) }
	str(st.Job)
	b = binary.AppendUvarint(b, uint64(st.Lo))
	str(st.Error)
	if st.Partial != nil {
		pb, err := st.Partial.MarshalBinary()
		if err != nil {
			return nil, err
		}
		b = append(b, pb...)
	}
	return b, nil
}

// UnmarshalBinary decodes MarshalBinary's encoding.
func (st *PartState) UnmarshalBinary(b []byte) error {
	off := 0
	num := func() (uint64, error) {
		x, n := binary.Uvarint(b[off:])
		if n <= 0 {
			return 0, fmt.Errorf("fleet: encoded partition state, byte offset %d: truncated", off)
		}
		off += n
		return x, nil
	}
	str := func() (string, error) {
		n, err := num()
		if err != nil {
			return "", err
		}
		if n > uint64(len(b)-off) {
			return "", fmt.Errorf("fleet: encoded partition state, byte offset %d: a string of %d bytes past the end", off, n)
		}
		s := string(b[off : off+int(n)])
		off += int(n)
		return s, nil
	}
	var q PartState
	var err error
	if q.Job, err = str(); err != nil {
		return err
	}
	lo, err := num()
	if err != nil {
		return err
	}
	if lo > trace.MaxPartitions {
		return fmt.Errorf("fleet: encoded partition state: partition %d", lo)
	}
	q.Lo = int(lo)
	if q.Error, err = str(); err != nil {
		return err
	}
	if off < len(b) {
		q.Partial = new(mpc.Partial)
		if err := q.Partial.UnmarshalBinary(b[off:]); err != nil {
			return err
		}
	}
	*st = q
	return nil
}
