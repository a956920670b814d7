package stats

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"strconv"
	"text/tabwriter"

	"mdk/trace"
)

// Stats are the summary numbers of one trace. Field names and JSON keys are
// stable: scripts read them.
type Stats struct {
	Windows       int     `json:"windows"`        // W
	Window        string  `json:"window"`         // window length, Go duration syntax ("30s")
	WindowSeconds float64 `json:"window_seconds"` // window length in seconds
	PageSize      int     `json:"page_size"`      // bytes
	// Sample, for a trace recorded sampled, is its rate and seed ("1% seed
	// 7"): every count is of the sampled pages only, not scaled.
	Sample        string `json:"sample,omitempty"`
	Spaces        int    `json:"spaces"` // distinct address spaces
	Pages         int    `json:"pages"`  // distinct (space, page) pairs
	Lives         int64  `json:"lives"`
	AccessRecords int64  `json:"access_records"` // Σ|A_w|
	Births        int64  `json:"births"`         // lives started by a b
	Frees         int64  `json:"frees"`          // lives ended by an f
	IgnoredBirths int64  `json:"ignored_births"` // b for a page already alive
	IgnoredFrees  int64  `json:"ignored_frees"`  // f for a page not alive
	// |A_w| over all W windows; the median is the lower median (0 when W = 0).
	AccessedMin      int64    `json:"accessed_min"`
	AccessedMedian   int64    `json:"accessed_median"`
	AccessedMax      int64    `json:"accessed_max"`
	AlivePageWindows int64    `json:"alive_page_windows"` // L
	PeakAlivePages   int64    `json:"peak_alive_pages"`   // max over windows of pages alive in it
	ClosedGaps       int64    `json:"closed_gaps"`
	OpenGaps         int64    `json:"open_gaps"`
	ClosedGapHist    []Bucket `json:"closed_gap_histogram"`
	OpenGapHist      []Bucket `json:"open_gap_histogram"`
}

// Bucket is one bar of a gap-length histogram: Count gaps with idle length
// g in [Min, Max].
type Bucket struct {
	Min   int   `json:"min"`
	Max   int   `json:"max"`
	Count int64 `json:"count"`
}

// bucketOf returns the histogram bucket of idle length g: 0 for g = 0, else
// 1 + ceil(log2 g), so that bucket b >= 1 holds 2^(b-2) < g <= 2^(b-1).
func bucketOf(g int) int {
	if g == 0 {
		return 0
	}
	return 1 + bits.Len(uint(g-1))
}

// bucketRange returns the smallest and largest g of bucket b.
func bucketRange(b int) (lo, hi int) {
	switch b {
	case 0:
		return 0, 0
	case 1:
		return 1, 1
	}
	return 1<<(b-2) + 1, 1 << (b - 1)
}

// Compute reads r to its end and returns its statistics. On a read error it
// returns the statistics of the windows read before the error, and the
// error.
func Compute(r trace.Reader) (*Stats, error) {
	var closed, open []int64 // histogram counts by bucket
	count := func(h *[]int64, g int) {
		b := bucketOf(g)
		for len(*h) <= b {
			*h = append(*h, 0)
		}
		(*h)[b]++
	}
	wk := trace.NewWalker()
	wk.OnGap = func(g trace.Gap) {
		if g.Closed {
			count(&closed, g.Idle)
		} else {
			count(&open, g.Idle)
		}
	}
	var accessed []int64
	var readErr error
	for {
		w, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			readErr = err
			break
		}
		accessed = append(accessed, int64(len(w.Accessed)))
		wk.Window(w)
	}
	wk.Finish()

	h := r.Header()
	c := wk.Counts
	s := &Stats{
		Windows:          wk.Windows(),
		Window:           trace.FormatDuration(h.Window),
		WindowSeconds:    h.Window.Seconds(),
		PageSize:         h.PageSize,
		Sample:           sampleString(h.Sample),
		Pages:            len(r.Pages()),
		Lives:            c.Lives,
		AccessRecords:    c.AccessRecords,
		Births:           c.Births,
		Frees:            c.Frees,
		IgnoredBirths:    c.IgnoredBirths,
		IgnoredFrees:     c.IgnoredFrees,
		AlivePageWindows: c.AlivePageWins,
		PeakAlivePages:   c.PeakAlive,
		ClosedGaps:       c.ClosedGaps,
		OpenGaps:         c.OpenGaps,
	}
	spaces := map[uint32]struct{}{}
	for _, p := range r.Pages() {
		spaces[p.Space] = struct{}{}
	}
	s.Spaces = len(spaces)
	if len(accessed) > 0 {
		slices.Sort(accessed)
		s.AccessedMin = accessed[0]
		s.AccessedMedian = accessed[(len(accessed)-1)/2]
		s.AccessedMax = accessed[len(accessed)-1]
	}
	n := max(len(closed), len(open))
	s.ClosedGapHist = histogram(closed, n)
	s.OpenGapHist = histogram(open, n)
	return s, readErr
}

// histogram returns buckets 0..n-1 with their counts from h (missing
// buckets count 0). It is never nil, so JSON shows [] rather than null.
func histogram(h []int64, n int) []Bucket {
	out := make([]Bucket, n)
	for b := range out {
		out[b].Min, out[b].Max = bucketRange(b)
		if b < len(h) {
			out[b].Count = h[b]
		}
	}
	return out
}

// Label formats a bucket's range: "0", "1", "3-4".
func (b Bucket) Label() string {
	if b.Min == b.Max {
		return strconv.Itoa(b.Min)
	}
	return strconv.Itoa(b.Min) + "-" + strconv.Itoa(b.Max)
}

// WriteText writes s for a terminal: one "name  value" line per number,
// then the gap histograms side by side.
func (s *Stats) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	line := func(name string, format string, args ...any) {
		fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{name}, args...)...)
	}
	line("windows", "%d x %s", s.Windows, s.Window)
	line("page size", "%d bytes", s.PageSize)
	if s.Sample != "" {
		line("sample", "%s: every count below is of the sampled pages only (not scaled)", s.Sample)
	}
	line("spaces", "%d", s.Spaces)
	line("pages", "%d", s.Pages)
	line("lives", "%d", s.Lives)
	line("access records", "%d", s.AccessRecords)
	line("births", "%d", s.Births)
	line("frees", "%d", s.Frees)
	line("ignored births", "%d", s.IgnoredBirths)
	line("ignored frees", "%d", s.IgnoredFrees)
	line("accessed per window", "min %d, median %d, max %d", s.AccessedMin, s.AccessedMedian, s.AccessedMax)
	line("alive page-windows", "%d", s.AlivePageWindows)
	line("peak alive pages", "%d", s.PeakAlivePages)
	line("closed gaps", "%d", s.ClosedGaps)
	line("open gaps", "%d", s.OpenGaps)
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(s.ClosedGapHist) == 0 {
		return nil
	}
	// Labels left-aligned, counts right-aligned.
	lw, cw, ow := len("gap length"), len("closed"), len("open")
	for b := range s.ClosedGapHist {
		lw = max(lw, len(s.ClosedGapHist[b].Label()))
		cw = max(cw, len(strconv.FormatInt(s.ClosedGapHist[b].Count, 10)))
		ow = max(ow, len(strconv.FormatInt(s.OpenGapHist[b].Count, 10)))
	}
	var buf []byte
	buf = fmt.Appendf(buf, "\n%-*s  %*s  %*s\n", lw, "gap length", cw, "closed", ow, "open")
	for b := range s.ClosedGapHist {
		buf = fmt.Appendf(buf, "%-*s  %*d  %*d\n", lw, s.ClosedGapHist[b].Label(), cw, s.ClosedGapHist[b].Count, ow, s.OpenGapHist[b].Count)
	}
	_, err := w.Write(buf)
	return err
}

func sampleString(s trace.Sample) string {
	if s.All() {
		return ""
	}
	return s.String()
}
