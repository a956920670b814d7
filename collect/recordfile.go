package collect

import (
	"context"
	"fmt"

	"mdk/internal/outfile"
	"mdk/trace"
)

// RecordFile records to the trace file out, in the format its extension
// names, and returns the summary. The file is written beside out and
// renamed to out once the first window is complete, so a recording that
// fails before that leaves an existing out as it was. On a clean end
// (duration, targets exited, ctx) it rewrites the file once more so that
// the header's description also holds the cost summary and every space's
// pid; if the recorder is killed, the file holds every completed window
// with the description known at the start.
func (r *Recorder) RecordFile(ctx context.Context, out string) (Summary, error) {
	tf, err := newTraceFile(out)
	if err != nil {
		return Summary{}, err
	}
	if tf.parts = r.opt.partitioning(); tf.parts.On() && tf.format.Name != "binary" {
		return Summary{}, fmt.Errorf("%s: a partitioned trace is binary: name the file .mdkt", out)
	}
	sum, err := r.Run(ctx, tf.newWriter)
	if err = tf.finish(err); err != nil {
		return sum, err
	}
	if tf.f == nil {
		return sum, nil
	}
	if err := r.writeMaps(out + trace.MapsSuffix); err != nil {
		fmt.Fprintf(r.opt.Log, "mdk record: warning: could not write the mappings sidecar %s%s: %v (the trace itself is complete)\n", out, trace.MapsSuffix, err)
	}
	if ferr := finalize(out, tf.format, r.header().Source+"; "+sum.String()); ferr != nil {
		fmt.Fprintf(r.opt.Log, "mdk record: warning: could not add the summary to %s: %v (the trace itself is complete)\n", out, ferr)
	}
	return sum, nil
}

// finalize rewrites the trace at path with source as its description, in
// the same format and partitions.
func finalize(path string, format *trace.Format, source string) error {
	rd, c, err := trace.Open(path)
	if err != nil {
		return err
	}
	defer c.Close()
	h := rd.Header()
	h.Source = source
	f, err := outfile.Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	var w trace.Writer
	if pr, ok := rd.(trace.PartitionedReader); ok {
		w, err = trace.NewPartitionedWriter(f, h, pr.Partitioning())
	} else {
		w, err = format.NewWriter(f, h)
	}
	if err == nil {
		_, err = trace.Copy(w, rd)
	}
	if err != nil {
		return err
	}
	return f.Commit()
}

// writeMaps writes the targets' mappings to the sidecar at path
// (docs/trace-format.md), through a temporary file renamed into place.
func (r *Recorder) writeMaps(path string) error {
	if len(r.mappings) == 0 {
		return nil
	}
	f, err := outfile.Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := trace.WriteMaps(f, r.mappings); err != nil {
		return err
	}
	return f.Commit()
}
