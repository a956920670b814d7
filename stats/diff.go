package stats

import (
	"errors"
	"fmt"
	"io"

	"mdk/trace"
)

// Diff compares the accessed sets of two traces of the same run (idle page
// tracking beside DAMON, an exact trace beside a sampled one), window by
// window (docs/whatif.md). Pages are matched by name (space, page); a
// window one trace lacks counts as empty in it.
type Diff struct {
	Windows  [2]int   `json:"windows"`          // windows of A and B
	Pages    [2]int64 `json:"pages"`            // distinct pages accessed in A and B
	Common   int64    `json:"common_pages"`     // pages accessed in both (in any windows)
	Accessed [2]int64 `json:"accessed"`         // Σ|A_w| and Σ|B_w|
	Both     int64    `json:"accessed_in_both"` // Σ|A_w ∩ B_w|
	// Jaccard is |A_w ∩ B_w| / |A_w ∪ B_w| of every window w of the longer
	// trace; 1 where both are empty.
	Jaccard []float64 `json:"jaccard"`
}

// Overall returns Σ|A_w ∩ B_w| / Σ|A_w ∪ B_w| (1 when nothing was accessed).
func (d *Diff) Overall() float64 {
	union := d.Accessed[0] + d.Accessed[1] - d.Both
	if union == 0 {
		return 1
	}
	return float64(d.Both) / float64(union)
}

// MeanJaccard returns the mean of the per-window Jaccard indices (1 for no
// windows), and MinJaccard their minimum.
func (d *Diff) MeanJaccard() float64 {
	if len(d.Jaccard) == 0 {
		return 1
	}
	s := 0.0
	for _, j := range d.Jaccard {
		s += j
	}
	return s / float64(len(d.Jaccard))
}

// MinJaccard returns the smallest per-window Jaccard index (1 for no windows).
func (d *Diff) MinJaccard() float64 {
	m := 1.0
	for _, j := range d.Jaccard {
		m = min(m, j)
	}
	return m
}

// CompareTraces reads a and b side by side, window by window. Their page
// sizes and window lengths must be equal (mdk convert --page-size and
// --window-factor make them so). Memory: a few bytes per distinct page and
// per window.
func CompareTraces(a, b trace.Reader) (*Diff, error) {
	ha, hb := a.Header(), b.Header()
	if ha.PageSize != hb.PageSize {
		return nil, fmt.Errorf("page sizes differ: %d and %d bytes (mdk convert --page-size makes them equal)", ha.PageSize, hb.PageSize)
	}
	if ha.Window != hb.Window {
		return nil, fmt.Errorf("window lengths differ: %v and %v (mdk convert --window-factor merges windows)", ha.Window, hb.Window)
	}
	d := &Diff{}
	ids := map[trace.Page]uint32{} // a page's index in seen
	var seen []uint8               // bit i: accessed in trace i
	var stamp []int32              // window + 1 in which A accessed the page
	global := [2][]uint32{}        // each trace's dense ID -> index in seen
	rs := [2]trace.Reader{a, b}
	done := [2]bool{}
	for w := 0; ; w++ {
		var wins [2]*trace.Window
		for i, r := range rs {
			if done[i] {
				continue
			}
			win, err := r.Read()
			if errors.Is(err, io.EOF) {
				done[i] = true
				continue
			}
			if err != nil {
				return nil, err
			}
			d.Windows[i]++
			wins[i] = win
			for _, p := range win.New {
				g, ok := ids[p]
				if !ok {
					g = uint32(len(seen))
					ids[p] = g
					seen = append(seen, 0)
					stamp = append(stamp, 0)
				}
				global[i] = append(global[i], g)
			}
		}
		if done[0] && done[1] {
			d.count(seen)
			return d, nil
		}
		var na, nb, both int64
		if wins[0] != nil {
			for _, id := range wins[0].Accessed {
				g := global[0][id]
				stamp[g] = int32(w + 1)
				seen[g] |= 1
			}
			na = int64(len(wins[0].Accessed))
		}
		if wins[1] != nil {
			for _, id := range wins[1].Accessed {
				g := global[1][id]
				if stamp[g] == int32(w+1) {
					both++
				}
				seen[g] |= 2
			}
			nb = int64(len(wins[1].Accessed))
		}
		d.Accessed[0] += na
		d.Accessed[1] += nb
		d.Both += both
		j := 1.0
		if u := na + nb - both; u > 0 {
			j = float64(both) / float64(u)
		}
		d.Jaccard = append(d.Jaccard, j)
	}
}

// count counts the distinct pages accessed in each trace and in both.
func (d *Diff) count(seen []uint8) {
	for _, s := range seen {
		if s&1 != 0 {
			d.Pages[0]++
		}
		if s&2 != 0 {
			d.Pages[1]++
		}
		if s == 3 {
			d.Common++
		}
	}
}
