package agent

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
)

// This file is the business side of mdk agent compare: the memory of a run
// as the kernel counts it, window by window, so that what the model calls
// saved can be set beside what the targets and their swap really took
// (docs/agent.md, "Memory as the kernel counts it").

// MemoryWindow is one window's memory, in bytes, at the window's end
// (after the reclaim). RSS, Swap and Net are -1 where the run did not
// record the targets' memory (a run of an older mdk).
type MemoryWindow struct {
	Window int `json:"window"`
	// Alive is the alive pages of the observed trace times the page size:
	// what the traced pages take with no reclaim (the model's baseline).
	Alive int64 `json:"alive_bytes"`
	// RSS and Swap are the targets' VmRSS and VmSwap (measured.csv's
	// rss_bytes and swap_bytes).
	RSS  int64 `json:"rss_bytes"`
	Swap int64 `json:"swap_bytes"`
	// Zram is the memory the zram swap devices take (mm_stat
	// mem_used_total, measured.csv's zram_mem_bytes): the compressed pages
	// and zsmalloc's overhead, of every process swapped to them.
	Zram int64 `json:"zram_mem_bytes"`
	// Net is RSS + Zram: the memory the targets take, their compressed
	// swap included.
	Net int64 `json:"net_bytes"`
	// Saved is the measured saved pages times the page size: the pages
	// out at the window's measurement, before its reclaim (those put out at
	// its end are in the next window's).
	Saved int64 `json:"saved_bytes"`
	// NetSaved is Swap - Zram: the targets' memory out of RAM at the
	// window's end net of what holding it compressed takes (-1 where Swap
	// is unknown).
	NetSaved int64 `json:"net_saved_bytes"`
}

// Memory is a run's memory table: its windows, their mean and the last
// window.
type Memory struct {
	Windows []MemoryWindow `json:"windows"`
	// Mean is the mean over the windows of each column (Window: the number
	// of windows), -1 where a column is unknown in any window.
	Mean MemoryWindow `json:"mean"`
	// Last is the last window's row.
	Last MemoryWindow `json:"last"`
	// Known reports whether the run recorded the targets' memory.
	Known bool `json:"known"`
}

// memoryOf is the memory table of the rows of a run whose observed trace has
// alive[w] pages alive in window w, pages of pageSize bytes.
func memoryOf(rows []Row, alive []int64, pageSize int64) Memory {
	var m Memory
	ps := pageSize
	var sum [7]int64
	unknown := len(rows) == 0
	for w, r := range rows {
		mw := MemoryWindow{Window: w, Alive: alive[w] * ps, RSS: r.RSS, Swap: r.Swap, Zram: r.ZramMem,
			Net: -1, Saved: r.Saved * ps}
		mw.NetSaved = -1
		if r.RSS >= 0 {
			mw.Net, mw.NetSaved = r.RSS+r.ZramMem, r.Swap-r.ZramMem
		} else {
			unknown = true
		}
		m.Windows = append(m.Windows, mw)
		for i, v := range []int64{mw.Alive, mw.RSS, mw.Swap, mw.Zram, mw.Net, mw.Saved, mw.NetSaved} {
			sum[i] += v
		}
	}
	m.Known = !unknown
	n := int64(len(rows))
	mean := func(i int) int64 {
		if n == 0 {
			return 0
		}
		return sum[i] / n
	}
	m.Mean = MemoryWindow{Window: len(rows), Alive: mean(0), RSS: mean(1), Swap: mean(2), Zram: mean(3), Net: mean(4),
		Saved: mean(5), NetSaved: mean(6)}
	if unknown {
		m.Mean.RSS, m.Mean.Swap, m.Mean.Net, m.Mean.NetSaved = -1, -1, -1, -1
	}
	if len(m.Windows) > 0 {
		m.Last = m.Windows[len(m.Windows)-1]
	}
	return m
}

// MiB prints a byte count in MiB with one decimal, "n/a" for -1.
func MiB(b int64) string {
	if b == -1 {
		return "n/a"
	}
	s := strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64)
	if s == "-0.0" {
		return "0.0"
	}
	return s
}

// WriteText writes the memory table in MiB: per window, the mean and the
// last window.
func (m Memory) WriteText(w io.Writer) error {
	fmt.Fprintln(w, "memory as the kernel counts it, MiB at each window's end (net = rss + zram,")
	fmt.Fprintln(w, "net saved = swap - zram; saved: the pages out at the window's measurement, before its reclaim):")
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "window\talive\trss\tswap\tzram\tnet\tsaved\tnet saved\t")
	row := func(name string, d MemoryWindow) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name, MiB(d.Alive), MiB(d.RSS), MiB(d.Swap), MiB(d.Zram),
			MiB(d.Net), MiB(d.Saved), MiB(d.NetSaved))
	}
	for _, d := range m.Windows {
		row(strconv.Itoa(d.Window), d)
	}
	row("mean", m.Mean)
	if err := tw.Flush(); err != nil {
		return err
	}
	if !m.Known {
		fmt.Fprintln(w, "(rss and swap n/a: the run did not record the targets' memory)")
	}
	return nil
}

// memoryColumns are the memory table's CSV columns, after each format's
// own.
var memoryColumns = []string{"alive_bytes", "rss_bytes", "swap_bytes", "zram_mem_bytes", "net_bytes", "saved_bytes", "net_saved_bytes"}

// csv returns window w's memory columns.
func (m Memory) csv(w int) []string {
	d := m.Windows[w]
	var out []string
	for _, v := range []int64{d.Alive, d.RSS, d.Swap, d.Zram, d.Net, d.Saved, d.NetSaved} {
		out = append(out, strconv.FormatInt(v, 10))
	}
	return out
}
