package importer

import (
	"bufio"
	"bytes"
	"context"
	"io"
)

// DamonPerfScanner reads `perf script` output of damon:damon_aggregated
// tracepoints, one region per line:
//
//	kdamond.0  4452 [000] 82820.952659: damon:damon_aggregated: target_id=18446623435582458880 nr_regions=8 94253027950592-94253031862272: 0
//
// A snapshot is nr_regions consecutive lines of one target (as damo groups
// them); its time is the first line's timestamp. A trailing 10th field (the
// region's age, in newer kernels) is accepted and ignored.
type DamonPerfScanner struct {
	s       *bufio.Scanner
	name    string
	line    int64
	targets map[uint64]int
	snap    Snapshot
	err     error
}

// NewDamonPerfScanner returns a scanner over r; name is used in errors.
func NewDamonPerfScanner(r io.Reader, name string) *DamonPerfScanner {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64<<10), maxLine)
	return &DamonPerfScanner{s: s, name: name, targets: map[uint64]int{}}
}

// Snapshot returns the current snapshot, owned by the scanner and valid
// until the next Scan.
func (d *DamonPerfScanner) Snapshot() *Snapshot { return &d.snap }

// Err returns the first error.
func (d *DamonPerfScanner) Err() error { return d.err }

// Scan reads the next snapshot.
func (d *DamonPerfScanner) Scan() bool {
	if d.err != nil {
		return false
	}
	var (
		want   uint64 // nr_regions of the snapshot being read; 0 before its first line
		target uint64
	)
	d.snap.Regions = d.snap.Regions[:0]
	for d.s.Scan() {
		d.line++
		b := d.s.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		l, err := d.parse(b)
		if err != nil {
			d.err = err
			return false
		}
		if want == 0 {
			want, target = l.nrRegions, l.target
			id, ok := d.targets[target]
			if !ok {
				id = len(d.targets)
				d.targets[target] = id
			}
			d.snap.Target, d.snap.StartNs, d.snap.Line = id, l.timeNs, d.line
		} else if l.target != target || l.nrRegions != want {
			d.err = lineError(d.name, d.line, nil, "expected region %d of %d of target_id=%d (snapshot from line %d), got target_id=%d nr_regions=%d",
				len(d.snap.Regions)+1, want, target, d.snap.Line, l.target, l.nrRegions)
			return false
		}
		d.snap.Regions = append(d.snap.Regions, l.region)
		if uint64(len(d.snap.Regions)) == want {
			return true
		}
	}
	if err := d.s.Err(); err != nil {
		d.err = lineError(d.name, d.line+1, err, "read")
		return false
	}
	if want != 0 {
		d.err = lineError(d.name, d.line, io.ErrUnexpectedEOF, "snapshot from line %d ends after %d of its nr_regions=%d lines", d.snap.Line, len(d.snap.Regions), want)
	}
	return false
}

type perfLine struct {
	timeNs    int64
	target    uint64
	nrRegions uint64
	region    Region
}

var damonEvent = []byte("damon:damon_aggregated:")

func (d *DamonPerfScanner) parse(b []byte) (perfLine, error) {
	var l perfLine
	fields := bytes.Fields(b)
	ev := -1
	for i, f := range fields {
		if bytes.Equal(f, damonEvent) {
			ev = i
			break
		}
	}
	if ev < 1 {
		return l, lineError(d.name, d.line, nil, "expected a %s event after a timestamp", damonEvent)
	}
	rest := fields[ev+1:]
	if len(rest) != 4 && len(rest) != 5 {
		return l, lineError(d.name, d.line, nil, "expected target_id=N nr_regions=N START-END: NR_ACCESSES [AGE] after the event name, found %d fields", len(rest))
	}
	ts, ok := parseSeconds(bytes.TrimSuffix(fields[ev-1], []byte{':'}))
	if !ok {
		return l, lineError(d.name, d.line, nil, "expected a timestamp SECONDS.FRACTION: before the event name, got %q", fields[ev-1])
	}
	l.timeNs = ts
	kv := func(f []byte, key string) (uint64, bool) {
		v, found := bytes.CutPrefix(f, []byte(key))
		if !found {
			return 0, false
		}
		return parseUint(v)
	}
	if l.target, ok = kv(rest[0], "target_id="); !ok {
		return l, lineError(d.name, d.line, nil, "expected target_id=N, got %q", rest[0])
	}
	if l.nrRegions, ok = kv(rest[1], "nr_regions="); !ok || l.nrRegions == 0 {
		return l, lineError(d.name, d.line, nil, "expected nr_regions=N with N > 0, got %q", rest[1])
	}
	rg, found := bytes.CutSuffix(rest[2], []byte{':'})
	s, e, dash := bytes.Cut(rg, []byte{'-'})
	start, ok1 := parseUint(s)
	end, ok2 := parseUint(e)
	if !found || !dash || !ok1 || !ok2 || start >= end {
		return l, lineError(d.name, d.line, nil, "expected START-END: with START < END, got %q", rest[2])
	}
	n, ok := parseUint(rest[3])
	if !ok {
		return l, lineError(d.name, d.line, nil, "expected nr_accesses, a non-negative integer, got %q", rest[3])
	}
	if len(rest) == 5 {
		if _, ok := parseUint(rest[4]); !ok {
			return l, lineError(d.name, d.line, nil, "expected age, a non-negative integer, got %q", rest[4])
		}
	}
	l.region = Region{Start: start, End: end, NrAccesses: int64(min(n, 1<<62))}
	return l, nil
}

// parseSeconds parses "82820.952659" into nanoseconds.
func parseSeconds(b []byte) (int64, bool) {
	ip, fp, _ := bytes.Cut(b, []byte{'.'})
	sec, ok := parseUint(ip)
	if !ok || sec > (1<<63-1)/1_000_000_000-1 || len(fp) > 9 {
		return 0, false
	}
	ns := uint64(0)
	if len(fp) > 0 {
		f, ok := parseUint(fp)
		if !ok {
			return 0, false
		}
		ns = f
		for i := len(fp); i < 9; i++ {
			ns *= 10
		}
	}
	return int64(sec*1_000_000_000 + ns), true
}

func runDamonPerf(ctx context.Context, r io.Reader, name string, o *Options, w *Windower, st *Stats) error {
	sc := NewDamonPerfScanner(r, name)
	e := newDamonEmitter(name, o, w, st)
	for n := 0; sc.Scan(); n++ {
		if n&0xff == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := e.emit(sc.Snapshot()); err != nil {
			return err
		}
	}
	return sc.Err()
}
