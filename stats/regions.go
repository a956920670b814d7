package stats

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"mdk/trace"
)

// Region is one memory region of a trace with mappings (trace.FromMappings):
// how many of the trace's pages fall in it and how often they were accessed.
type Region struct {
	Label         string `json:"label"`
	Pages         int64  `json:"pages"`          // distinct pages of the trace in it
	Bytes         int64  `json:"bytes"`          // Pages x page size
	AccessRecords int64  `json:"access_records"` // Σ over windows of its pages accessed
}

// Regions reads r and sums its pages and accesses by the regions of the
// mappings ms, largest first (by pages, then accesses, then label). Memory:
// 8 bytes per page.
func Regions(r trace.Reader, ms []trace.Mapping) ([]Region, error) {
	var acc []int64
	for {
		w, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		for range w.NumNew() {
			acc = append(acc, 0)
		}
		for _, id := range w.Accessed {
			acc[id]++
		}
	}
	pages := r.Pages()
	ps := r.Header().PageSize
	rg := trace.FromMappings(pages, ps, ms)
	out := make([]Region, rg.Len())
	for i := range out {
		out[i] = Region{Label: rg.Label(i), Pages: rg.Pages(i), Bytes: rg.Pages(i) * int64(ps)}
	}
	for id := range pages {
		out[rg.Of(uint32(id))].AccessRecords += acc[id]
	}
	slices.SortStableFunc(out, func(a, b Region) int {
		return cmp.Or(cmp.Compare(b.Pages, a.Pages), cmp.Compare(b.AccessRecords, a.AccessRecords), cmp.Compare(a.Label, b.Label))
	})
	return out, nil
}

// WriteRegions prints the top regions (all if top <= 0) as a table, the
// rest summed on one line.
func WriteRegions(w io.Writer, rs []Region, from string, top int) error {
	fmt.Fprintf(w, "\nregions              %d (%s)\n", len(rs), from)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  region\tpages\tbytes\taccess records")
	var rest Region
	for i, r := range rs {
		if top > 0 && i >= top {
			rest.Pages += r.Pages
			rest.Bytes += r.Bytes
			rest.AccessRecords += r.AccessRecords
			continue
		}
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%d\n", r.Label, r.Pages, formatBytes(r.Bytes), r.AccessRecords)
	}
	if top > 0 && len(rs) > top {
		fmt.Fprintf(tw, "  other (%d)\t%d\t%s\t%d\n", len(rs)-top, rest.Pages, formatBytes(rest.Bytes), rest.AccessRecords)
	}
	return tw.Flush()
}

// formatBytes prints n bytes with a binary unit.
func formatBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	x, i := float64(n), 0
	for x >= 1024 && i < len(units)-1 {
		x /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f %s", x, units[i])
}
