package agent

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"mdk/linux"
)

// Row is what the agent measured in one window: one line of measured.csv
// and one JSON line. Counters of the kernel (MajFlt, PswpIn, PswpOut,
// RefaultAnon) are the window's increase, -1 where the kernel does not have
// them.
type Row struct {
	Window   int64 `json:"window"`
	Alive    int64 `json:"alive"`    // pages alive in the window (the observed trace's lives)
	Accessed int64 `json:"accessed"` // |A_w| of the observed trace

	// The decision and what became of it. Decided = Skipped* + Reclaimed;
	// Reclaimed = Out + Refused.
	Decided      int64 `json:"decided"`       // pages the policy chose at the window's end
	SkippedDry   int64 `json:"skipped_dry"`   // not reclaimed: --dry-run
	SkippedSLO   int64 `json:"skipped_slo"`   // not reclaimed: the promotion-rate SLO guard is on
	SkippedPSI   int64 `json:"skipped_psi"`   // not reclaimed: memory pressure above the threshold
	SkippedLimit int64 `json:"skipped_limit"` // not reclaimed: over the per-window page limit
	SkippedSwap  int64 `json:"skipped_swap"`  // not reclaimed: swap free would fall below the floor
	SkippedGone  int64 `json:"skipped_gone"`  // not reclaimed: the target exited
	Reclaimed    int64 `json:"reclaimed"`     // pages passed to process_madvise(MADV_PAGEOUT)
	Out          int64 `json:"out"`           // of those, confirmed out by pagemap
	Refused      int64 `json:"refused"`       // of those, still present
	// Refused pages by reason (linux.Refusal order).
	RefusedBy [linux.NumRefusals]int64 `json:"refused_by"`

	// What the workload felt, measured through pagemap before the decision.
	Promotions  int64 `json:"promotions"`   // pages the agent had put out, found present again and accessed
	SwapInOther int64 `json:"swapin_other"` // pages the agent had put out, present again without an access in the trace
	Saved       int64 `json:"saved"`        // pages the agent had put out, still out: saved page-windows
	KernelOut   int64 `json:"kernel_out"`   // alive pages out that the agent did not put out (kernel reclaim)
	KernelIn    int64 `json:"kernel_in"`    // pages the kernel had put out, present again

	// Cross-checks from the kernel's own counters.
	MajFlt      int64   `json:"majflt"`       // major faults of the targets (/proc/PID/stat)
	PswpIn      int64   `json:"pswpin"`       // pages swapped in, system-wide (/proc/vmstat)
	PswpOut     int64   `json:"pswpout"`      // pages swapped out, system-wide (/proc/vmstat)
	RefaultAnon int64   `json:"refault_anon"` // the memory cgroup's workingset_refault_anon
	ZramOrig    int64   `json:"zram_orig_bytes"`
	ZramCompr   int64   `json:"zram_compr_bytes"`
	ZramMem     int64   `json:"zram_mem_bytes"` // memory the zram swap devices use (mm_stat mem_used_total)
	SwapFree    int64   `json:"swap_free_bytes"`
	PSISome     float64 `json:"psi_some_avg10"` // percent; -1 when not readable
	// The targets' memory as the kernel counts it at the window's end
	// (after the reclaim), summed over the targets alive: VmRSS and VmSwap
	// of /proc/PID/status, in bytes; -1 when no target's could be read.
	RSS  int64 `json:"rss_bytes"`
	Swap int64 `json:"swap_bytes"`

	// The agent's own cost in this window.
	CPUNS    int64 `json:"cpu_ns"`        // user+system CPU of the agent
	WallNS   int64 `json:"wall_ns"`       // from the tracker's window to the end of the confirmation
	Syscalls int64 `json:"syscalls"`      // process_madvise calls and pagemap reads
	Scanned  int64 `json:"pages_scanned"` // pagemap entries read

	// The replay workload's own report (zero with other trackers).
	Touches       int64   `json:"touches"`
	TouchesPerSec float64 `json:"touches_per_sec"`
	TouchP50NS    int64   `json:"touch_p50_ns"`
	TouchP99NS    int64   `json:"touch_p99_ns"`
	TouchMaxNS    int64   `json:"touch_max_ns"`
	SlowTouches   int64   `json:"slow_touches"`
	SlowNS        int64   `json:"slow_ns"`

	// Under a controller ([Controlled]): the setting in force at this
	// window's scan point, and whether the controller switched to it
	// there; measured.csv's last columns (setting, switch) and the JSON
	// line's last keys, absent with a fixed setting.
	Setting  string `json:"setting,omitempty"`
	Switched bool   `json:"switch,omitempty"`
}

type col struct {
	name string
	i    *int64
	f    *float64
}

func (r *Row) cols() []col {
	c := []col{
		{name: "window", i: &r.Window}, {name: "alive", i: &r.Alive}, {name: "accessed", i: &r.Accessed},
		{name: "decided", i: &r.Decided},
		{name: "skipped_dry", i: &r.SkippedDry}, {name: "skipped_slo", i: &r.SkippedSLO},
		{name: "skipped_psi", i: &r.SkippedPSI}, {name: "skipped_limit", i: &r.SkippedLimit},
		{name: "skipped_swap", i: &r.SkippedSwap}, {name: "skipped_gone", i: &r.SkippedGone},
		{name: "reclaimed", i: &r.Reclaimed}, {name: "out", i: &r.Out}, {name: "refused", i: &r.Refused},
	}
	for k := range r.RefusedBy {
		c = append(c, col{name: "refused_" + linux.Refusal(k).String(), i: &r.RefusedBy[k]})
	}
	return append(c,
		col{name: "promotions", i: &r.Promotions}, col{name: "swapin_other", i: &r.SwapInOther},
		col{name: "saved", i: &r.Saved}, col{name: "kernel_out", i: &r.KernelOut}, col{name: "kernel_in", i: &r.KernelIn},
		col{name: "majflt", i: &r.MajFlt}, col{name: "pswpin", i: &r.PswpIn}, col{name: "pswpout", i: &r.PswpOut},
		col{name: "refault_anon", i: &r.RefaultAnon},
		col{name: "rss_bytes", i: &r.RSS}, col{name: "swap_bytes", i: &r.Swap},
		col{name: "zram_orig_bytes", i: &r.ZramOrig}, col{name: "zram_compr_bytes", i: &r.ZramCompr},
		col{name: "zram_mem_bytes", i: &r.ZramMem}, col{name: "swap_free_bytes", i: &r.SwapFree},
		col{name: "psi_some_avg10", f: &r.PSISome},
		col{name: "cpu_ns", i: &r.CPUNS}, col{name: "wall_ns", i: &r.WallNS},
		col{name: "syscalls", i: &r.Syscalls}, col{name: "pages_scanned", i: &r.Scanned},
		col{name: "touches", i: &r.Touches}, col{name: "touches_per_sec", f: &r.TouchesPerSec},
		col{name: "touch_p50_ns", i: &r.TouchP50NS}, col{name: "touch_p99_ns", i: &r.TouchP99NS},
		col{name: "touch_max_ns", i: &r.TouchMaxNS},
		col{name: "slow_touches", i: &r.SlowTouches}, col{name: "slow_ns", i: &r.SlowNS},
	)
}

// Columns returns the column names of measured.csv, in order.
func Columns() []string {
	var r Row
	var names []string
	for _, c := range r.cols() {
		names = append(names, c.name)
	}
	return names
}

func (r *Row) csvRecord() []string {
	var out []string
	for _, c := range r.cols() {
		if c.f != nil {
			out = append(out, strconv.FormatFloat(*c.f, 'g', -1, 64))
		} else {
			out = append(out, strconv.FormatInt(*c.i, 10))
		}
	}
	return out
}

// ReadMeasured reads a measured.csv; name is used in errors. Unknown columns
// are ignored and missing ones read as zero (the kernel counters,
// psi_some_avg10, rss_bytes and swap_bytes as -1, not available), so that
// partial runs stay readable; [ReadRun] says which columns a run must have. A count must not be
// negative, except -1 in the kernel counters, psi_some_avg10, rss_bytes
// and swap_bytes; a percentage is at most 100. A controller's run has its
// setting and switch columns (Row.Setting, Row.Switched; switch 0 or 1).
func ReadMeasured(r io.Reader, name string) ([]Row, error) {
	rows, _, err := readMeasured(r, name)
	return rows, err
}

// mayBeUnknown are the columns that hold -1 where the kernel does not have
// the number, and read as -1 when missing.
var mayBeUnknown = map[string]bool{"majflt": true, "pswpin": true, "pswpout": true, "refault_anon": true, "psi_some_avg10": true,
	"rss_bytes": true, "swap_bytes": true}

// readMeasured is ReadMeasured, also returning the columns the header has.
func readMeasured(r io.Reader, name string) ([]Row, map[string]bool, error) {
	cr := csv.NewReader(bufio.NewReader(r))
	head, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, fmt.Errorf("%s: empty file, expected a header line", name)
		}
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	idx := map[string]int{}
	have := map[string]bool{}
	for i, h := range head {
		if _, dup := idx[h]; dup {
			return nil, nil, fmt.Errorf("%s:1: column %q twice", name, h)
		}
		idx[h] = i
		have[h] = true
	}
	if _, ok := idx["window"]; !ok {
		return nil, nil, fmt.Errorf("%s:1: no \"window\" column: not a measured.csv", name)
	}
	var rows []Row
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return rows, have, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		var row Row
		for _, c := range row.cols() {
			i, ok := idx[c.name]
			if !ok || i >= len(rec) {
				if mayBeUnknown[c.name] {
					if c.f != nil {
						*c.f = -1
					} else {
						*c.i = -1
					}
				}
				continue
			}
			// -1 is "not available" where the kernel may lack the number.
			bad := func(neg, over bool) bool { return neg && !mayBeUnknown[c.name] || over }
			if c.f != nil {
				v, err := strconv.ParseFloat(rec[i], 64)
				if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, nil, fmt.Errorf("%s:%d: %s: expected a number, got %q", name, line, c.name, rec[i])
				}
				if v < 0 && v != -1 || bad(v < 0, c.name == "psi_some_avg10" && v > 100) {
					return nil, nil, fmt.Errorf("%s:%d: %s %s: out of range", name, line, c.name, rec[i])
				}
				*c.f = v
				continue
			}
			v, err := strconv.ParseInt(rec[i], 10, 64)
			if err != nil {
				return nil, nil, fmt.Errorf("%s:%d: %s: expected an integer, got %q", name, line, c.name, rec[i])
			}
			if v < -1 || bad(v < 0, false) {
				return nil, nil, fmt.Errorf("%s:%d: %s %d: a count is not negative", name, line, c.name, v)
			}
			*c.i = v
		}
		if i, ok := idx["setting"]; ok && i < len(rec) {
			row.Setting = rec[i]
		}
		if i, ok := idx["switch"]; ok && i < len(rec) {
			switch rec[i] {
			case "0":
			case "1":
				row.Switched = true
			default:
				return nil, nil, fmt.Errorf("%s:%d: switch: expected 0 or 1, got %q", name, line, rec[i])
			}
		}
		if row.Window != int64(len(rows)) {
			return nil, nil, fmt.Errorf("%s:%d: window %d, expected %d (windows in order from 0)", name, line, row.Window, len(rows))
		}
		rows = append(rows, row)
	}
}

// MarshalJSON writes the row as one object with the columns of
// measured.csv, in the same order.
func (r *Row) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, c := range r.cols() {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, c.name)
		b = append(b, ':')
		if c.f != nil {
			b = strconv.AppendFloat(b, *c.f, 'g', -1, 64)
		} else {
			b = strconv.AppendInt(b, *c.i, 10)
		}
	}
	if r.Setting != "" {
		b = append(strconv.AppendQuote(append(b, `,"setting":`...), r.Setting), `,"switch":`...)
		b = strconv.AppendBool(b, r.Switched)
	}
	return append(b, '}'), nil
}
