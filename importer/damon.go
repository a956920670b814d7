package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"time"
)

// DAMON recordings are region-level: in each aggregation interval DAMON
// reports, per region, in how many sampling intervals the one address it
// sampled in that region was found accessed (nr_accesses). mdk turns a
// snapshot into accesses as follows: every page overlapping a region with
// nr_accesses > 0 is accessed in the snapshot's window. This is an
// approximation: DAMON samples one address per region per sampling
// interval, so all pages of a region share one value, and a large region
// with a single hot page is reported as wholly accessed.

// Snapshot is one DAMON aggregation interval of one monitoring target.
type Snapshot struct {
	Target  int   // target index, in order of first appearance; the page space
	StartNs int64 // start time, nanoseconds on DAMON's clock
	EndNs   int64 // end time; 0 when the format does not give it
	Regions []Region
	Line    int64 // first line (perf script) or 0
	Offset  int64 // byte offset of the snapshot in the (decompressed) JSON
}

// Region is one DAMON region, half-open byte range [Start, End).
type Region struct {
	Start, End uint64
	NrAccesses int64
}

var damonFormat = &Format{
	Name:      "damon",
	Short:     "DAMON recording from damo (json or json_compressed, damon.data): accessed regions become pages",
	Timed:     true,
	TimeUnit:  time.Nanosecond,
	allowZlib: true,
	run:       runDamonJSON,
}

var damonPerfFormat = &Format{
	Name:     "damon-perf",
	Short:    "`perf script` text of damon:damon_aggregated tracepoints; nr_regions consecutive lines make a snapshot",
	Timed:    true,
	TimeUnit: time.Nanosecond,
	run:      runDamonPerf,
}

// damonEmitter places snapshots in windows and maps regions to pages.
type damonEmitter struct {
	name string
	o    *Options
	w    *Windower
	st   *Stats
	clk  clock
	ps   uint64
	max  uint64
}

func newDamonEmitter(name string, o *Options, w *Windower, st *Stats) *damonEmitter {
	ps, _ := o.pageSize()
	return &damonEmitter{name: name, o: o, w: w, st: st, clk: newClock(o, true), ps: ps, max: o.maxRecordPages()}
}

func (e *damonEmitter) emit(s *Snapshot) error {
	pos := func(err error, format string, args ...any) error {
		if s.Line > 0 {
			return lineError(e.name, s.Line, err, format, args...)
		}
		return offsetError(e.name, s.Offset, err, "snapshot: "+format, args...)
	}
	e.st.Records++
	win, ok := e.clk.window(s.StartNs)
	win, err := place(e.w, e.o, e.st, win, ok, pos, s.StartNs)
	if err != nil {
		return err
	}
	for _, r := range s.Regions {
		if r.NrAccesses <= 0 {
			continue
		}
		first, last := r.Start/e.ps, (r.End-1)/e.ps
		if last-first >= e.max {
			return pos(nil, "region [%d, %d) spans %d pages, more than the limit of %d", r.Start, r.End, last-first+1, e.max)
		}
		if err := e.w.AccessRange(win, uint32(s.Target), first, last); err != nil {
			return pos(err, "add pages")
		}
	}
	return nil
}

// damonNum is a number that damo writes as a JSON string, possibly with
// comma thousands separators ("94,827,419,009,024"), or as a JSON number.
type damonNum struct {
	v   uint64
	set bool
}

func (n *damonNum) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	s := b
	if len(s) >= 2 && s[0] == '"' {
		s = s[1 : len(s)-1]
	}
	s = bytes.ReplaceAll(s, []byte{','}, nil)
	v, ok := parseUint(s)
	if !ok {
		return fmt.Errorf("expected a non-negative integer (a number or a decimal string, commas allowed), got %s", b)
	}
	n.v, n.set = v, true
	return nil
}

// damonAccesses is nr_accesses: {"samples": N, "percent": P} in current damo,
// a plain number in older versions.
type damonAccesses struct {
	v   int64
	set bool
}

func (a *damonAccesses) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var o struct {
			Samples *damonNum        `json:"samples"`
			Percent *json.RawMessage `json:"percent"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return err
		}
		switch {
		case o.Samples != nil && o.Samples.set:
			a.v, a.set = int64(min(o.Samples.v, 1<<62)), true
		case o.Percent != nil && string(*o.Percent) != "null":
			p, err := strconv.ParseFloat(string(bytes.Trim(*o.Percent, `"`)), 64)
			if err != nil {
				return fmt.Errorf("nr_accesses percent: expected a number, got %s", *o.Percent)
			}
			a.v, a.set = 0, true
			if p > 0 {
				a.v = 1
			}
		}
		return nil
	}
	var n damonNum
	if err := n.UnmarshalJSON(b); err != nil {
		return err
	}
	a.v, a.set = int64(min(n.v, 1<<62)), n.set
	return nil
}

type damonSnapshotJSON struct {
	StartTime damonNum `json:"start_time"`
	EndTime   damonNum `json:"end_time"`
	Regions   []struct {
		Start      damonNum      `json:"start"`
		End        damonNum      `json:"end"`
		NrAccesses damonAccesses `json:"nr_accesses"`
	} `json:"regions"`
}

// ReadDamonJSON reads a damo JSON recording (already decompressed): an
// array of records, each with a "snapshots" array. It returns the snapshots
// of every record, records in file order; each record is one target.
func ReadDamonJSON(r io.Reader, name string) ([]Snapshot, error) {
	dec := json.NewDecoder(r)
	fail := func(off int64, err error, format string, args ...any) error {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off = se.Offset
		}
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return offsetError(name, off, err, format, args...)
	}
	delim := func(want json.Delim, what string) error {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return fail(off, err, "expected %s", what)
		}
		if d, ok := tok.(json.Delim); !ok || d != want {
			return fail(off, nil, "expected %s, got %v", what, tok)
		}
		return nil
	}
	if err := delim('[', "a JSON array of DAMON records"); err != nil {
		return nil, err
	}
	var snaps []Snapshot
	for target := 0; dec.More(); target++ {
		if err := delim('{', "a DAMON record (JSON object)"); err != nil {
			return nil, err
		}
		for dec.More() {
			off := dec.InputOffset()
			tok, err := dec.Token()
			if err != nil {
				return nil, fail(off, err, "expected a record key")
			}
			if key, _ := tok.(string); key != "snapshots" {
				var skip json.RawMessage
				if err := dec.Decode(&skip); err != nil {
					return nil, fail(dec.InputOffset(), err, "expected the value of record key %q", key)
				}
				continue
			}
			if err := delim('[', `"snapshots": an array`); err != nil {
				return nil, err
			}
			for dec.More() {
				off := dec.InputOffset()
				var js damonSnapshotJSON
				if err := dec.Decode(&js); err != nil {
					return nil, fail(off, err, "expected a snapshot {start_time, end_time, regions}")
				}
				if !js.StartTime.set {
					return nil, fail(off, nil, "snapshot has no start_time")
				}
				if js.StartTime.v > 1<<63-1 || js.EndTime.v > 1<<63-1 {
					return nil, fail(off, nil, "snapshot time beyond 2^63 ns")
				}
				s := Snapshot{Target: target, StartNs: int64(js.StartTime.v), EndNs: int64(js.EndTime.v), Offset: off}
				s.Regions = make([]Region, len(js.Regions))
				for i, rg := range js.Regions {
					if !rg.Start.set || !rg.End.set || rg.Start.v >= rg.End.v {
						return nil, fail(off, nil, "region %d: expected start < end, got [%d, %d)", i, rg.Start.v, rg.End.v)
					}
					s.Regions[i] = Region{Start: rg.Start.v, End: rg.End.v, NrAccesses: rg.NrAccesses.v}
				}
				snaps = append(snaps, s)
			}
			if err := delim(']', `the end of "snapshots"`); err != nil {
				return nil, err
			}
		}
		if err := delim('}', "the end of a DAMON record"); err != nil {
			return nil, err
		}
	}
	if err := delim(']', "the end of the array of DAMON records"); err != nil {
		return nil, err
	}
	off := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		return nil, fail(off, err, "expected the end of the file after the array of records")
	}
	return snaps, nil
}

func runDamonJSON(ctx context.Context, r io.Reader, name string, o *Options, w *Windower, st *Stats) error {
	snaps, err := ReadDamonJSON(r, name)
	if err != nil {
		return err
	}
	// Several targets are recorded one after the other; merge them in time.
	sort.SliceStable(snaps, func(i, j int) bool { return snaps[i].StartNs < snaps[j].StartNs })
	e := newDamonEmitter(name, o, w, st)
	for i := range snaps {
		if i&0xff == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := e.emit(&snaps[i]); err != nil {
			return err
		}
	}
	return nil
}
