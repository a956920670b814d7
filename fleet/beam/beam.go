// Package beam runs the fleet computation of package fleet as an Apache Beam
// pipeline (Go SDK): each trace is one element, processed by mdk's own engine
// inside a DoFn ([fleet.Plan.Run]); the jobs' accumulators are combined per
// fleet key with [fleet.Acc.Merge] (CombinePerKey); one last DoFn builds the
// fleet view ([fleet.Plan.Build]) and writes its files. The numbers are the
// same bits as `mdk fleet --local`: merging only adds integers and exact
// rationals.
//
// Traces, job lists and the output directory go through Beam's filesystem
// layer (beam/io/filesystem), so local paths and object-store URLs (gs://,
// s3://, when the binary registers those file systems) both work. This
// package registers the local file system; cmd/mdk-fleet adds the others.
//
// Only this package and cmd/mdk-fleet import Beam; docs/fleet.md says why.
package beam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"

	"mdk/fleet"
	"mdk/internal/outfile"
	"mdk/trace"
)

func init() {
	beam.RegisterCoder(reflect.TypeOf(fleet.JobResult{}), encodeJob, decodeJob)
	beam.RegisterCoder(reflect.TypeOf(fleet.Acc{}), encodeAcc, decodeAcc)
	beam.RegisterCoder(reflect.TypeOf(fleet.PartState{}), encodePart, decodePart)
	beam.RegisterType(reflect.TypeOf(fleet.Piece{}))
	beam.RegisterType(reflect.TypeOf((*splitFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*walkFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*finishFn)(nil)).Elem())
	beam.RegisterFunction(mergeParts)
	beam.RegisterType(reflect.TypeOf((*accsFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*writeFn)(nil)).Elem())
	beam.RegisterFunction(mergeAccs)
}

func encodeJob(j fleet.JobResult) ([]byte, error) { return json.Marshal(j) }
func decodeJob(b []byte) (fleet.JobResult, error) {
	var j fleet.JobResult
	err := json.Unmarshal(b, &j)
	return j, err
}
func encodePart(st fleet.PartState) ([]byte, error) { return st.MarshalBinary() }
func decodePart(b []byte) (fleet.PartState, error) {
	var st fleet.PartState
	err := st.UnmarshalBinary(b)
	return st, err
}
func encodeAcc(a fleet.Acc) ([]byte, error) { return json.Marshal(a) }
func decodeAcc(b []byte) (fleet.Acc, error) {
	var a fleet.Acc
	err := json.Unmarshal(b, &a)
	return a, err
}

// Open opens a trace through Beam's filesystem layer.
func Open(ctx context.Context, path string) (trace.Reader, io.Closer, error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	rc, err := fs.OpenRead(ctx, path)
	if err != nil {
		fs.Close()
		return nil, nil, err
	}
	r, err := trace.NewReaderAuto(rc, path)
	if err != nil {
		rc.Close()
		fs.Close()
		return nil, nil, err
	}
	return r, closers{rc, fs}, nil
}

type closers []io.Closer

func (cs closers) Close() error {
	var errs []error
	for _, c := range cs {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// Source is fleet.Source over Beam's filesystem layer.
func Source(ctx context.Context) fleet.Source {
	read := func(path string, n int) ([]byte, error) {
		fs, err := filesystem.New(ctx, path)
		if err != nil {
			return nil, err
		}
		defer fs.Close()
		rc, err := fs.OpenRead(ctx, path)
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		var r io.Reader = rc
		if n >= 0 {
			r = io.LimitReader(rc, int64(n))
		}
		return io.ReadAll(r)
	}
	return fleet.Source{
		Glob: func(pattern string) ([]string, error) {
			fs, err := filesystem.New(ctx, pattern)
			if err != nil {
				return nil, err
			}
			defer fs.Close()
			return fs.List(ctx, pattern)
		},
		ReadHead: read,
		ReadAll:  func(path string) ([]byte, error) { return read(path, -1) },
	}
}

// planned is embedded by the DoFns that run the plan: its config travels
// with them, and each worker compiles it once.
type planned struct {
	Config fleet.Config `json:"config"`
	plan   *fleet.Plan
}

func (f *planned) Setup() error {
	var err error
	f.plan, err = f.Config.Compile()
	return err
}

// splitFn cuts a job into pieces (fleet.Plan.Pieces): groups of its
// trace's partitions, or the whole job.
type splitFn struct {
	planned
	Split int `json:"split"`
}

func (f *splitFn) ProcessElement(ctx context.Context, job string, emit func(fleet.Piece)) {
	for _, pc := range f.plan.Pieces(ctx, job, Open, f.Split) {
		emit(pc)
	}
}

// walkFn runs a whole job (to its result), or walks a piece of its
// partitions (to its state, keyed by job).
type walkFn struct {
	planned
}

func (f *walkFn) ProcessElement(ctx context.Context, pc fleet.Piece, whole func(fleet.JobResult), part func(string, fleet.PartState)) error {
	if pc.Whole() {
		jr, err := f.plan.RunJob(ctx, pc.Job, Open)
		if err != nil {
			return err
		}
		whole(jr)
		return nil
	}
	st, err := f.plan.WalkPiece(ctx, pc, Open)
	if err != nil {
		return err
	}
	part(pc.Job, st)
	return nil
}

func mergeParts(a, b fleet.PartState) fleet.PartState { return fleet.MergeParts(a, b) }

// finishFn turns a job's merged partitions into its result.
type finishFn struct {
	planned
}

func (f *finishFn) ProcessElement(ctx context.Context, _ string, st fleet.PartState) (fleet.JobResult, error) {
	return f.plan.FinishJob(ctx, st)
}

// accsFn emits a job's accumulators keyed by fleet key.
type accsFn struct {
	planned
}

func (f *accsFn) ProcessElement(j fleet.JobResult, emit func(string, fleet.Acc)) {
	for _, a := range f.plan.Accs(&j) {
		emit(a.Key, a)
	}
}

func mergeAccs(a, b fleet.Acc) fleet.Acc { return a.Merge(b) }

// writeFn builds the fleet view and writes its files to Out.
type writeFn struct {
	Config fleet.Config `json:"config"`
	Out    string       `json:"out"`
}

func (f *writeFn) ProcessElement(ctx context.Context, _ []byte, accs func(*fleet.Acc) bool, jobs func(*fleet.JobResult) bool) error {
	plan, err := f.Config.Compile()
	if err != nil {
		return err
	}
	var as []fleet.Acc
	var a fleet.Acc
	for accs(&a) {
		as = append(as, a)
		a = fleet.Acc{}
	}
	var js []fleet.JobResult
	var j fleet.JobResult
	for jobs(&j) {
		js = append(js, j)
		j = fleet.JobResult{}
	}
	return WriteDir(ctx, plan.Build(as, js), f.Out)
}

// WriteDir writes the fleet's files to dir through Beam's filesystem layer;
// a local dir is created if missing, and each file in it is written to a
// temporary file renamed into place, as mdk fleet does.
func WriteDir(ctx context.Context, fl *fleet.Fleet, dir string) error {
	if !strings.Contains(dir, "://") {
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return err
		}
		return fl.WriteFiles(func(name string, data []byte) error {
			return outfile.WriteFile(filepath.Join(dir, name), data)
		})
	}
	fs, err := filesystem.New(ctx, dir)
	if err != nil {
		return err
	}
	defer fs.Close()
	return fl.WriteFiles(func(name string, data []byte) error {
		w, err := fs.OpenWrite(ctx, strings.TrimSuffix(dir, "/")+"/"+name)
		if err != nil {
			return err
		}
		if _, err := w.Write(data); err != nil {
			w.Close()
			return err
		}
		return w.Close()
	})
}

// Build adds the fleet pipeline to s: jobs (trace paths or URLs, one element
// each) in, the fleet's files in out. cfg must compile. A partitioned
// trace is cut into at most split pieces of its partitions (0: one per
// partition; 1: none), when the plan allows (fleet.Plan.Pieces).
//
//  1. Create one element per job, reshuffled so a runner spreads them.
//  2. ParDo: cut each job into pieces (its trace's header read), reshuffled.
//  3. ParDo: run the plan over each whole job (one pass of mpc per trace)
//     to its result; walk each piece of partitions (mpc.WalkPartitions)
//     to its state, keyed by job.
//  4. CombinePerKey: merge each job's states (mpc.Partial.Merge), then
//     ParDo: the job's result from its merged state (mpc.Partial.Results).
//  5. ParDo: each job's accumulators, keyed by fleet key.
//  6. CombinePerKey: merge them (sums of integers and exact rationals).
//  7. ParDo over one impulse, with the merged accumulators and the job
//     results as side inputs: build the fleet view, write the files.
func Build(s beam.Scope, cfg fleet.Config, jobs []string, out string, split int) error {
	if _, err := cfg.Compile(); err != nil {
		return err
	}
	if len(jobs) == 0 {
		return fmt.Errorf("fleet: no jobs")
	}
	s = s.Scope("mdk-fleet")
	if split < 0 {
		return fmt.Errorf("fleet: split %d: want 0 (a piece per partition), 1 (whole traces) or more", split)
	}
	paths := beam.Reshuffle(s, beam.CreateList(s, jobs))
	pieces := beam.Reshuffle(s, beam.ParDo(s, &splitFn{planned: planned{Config: cfg}, Split: split}, paths))
	whole, parts := beam.ParDo2(s, &walkFn{planned{Config: cfg}}, pieces)
	finished := beam.ParDo(s, &finishFn{planned{Config: cfg}}, beam.CombinePerKey(s, mergeParts, parts))
	results := beam.Flatten(s, whole, finished)
	keyed := beam.ParDo(s, &accsFn{planned{Config: cfg}}, results)
	merged := beam.DropKey(s, beam.CombinePerKey(s, mergeAccs, keyed))
	beam.ParDo0(s, &writeFn{Config: cfg, Out: out}, beam.Impulse(s),
		beam.SideInput{Input: merged}, beam.SideInput{Input: results})
	return nil
}
