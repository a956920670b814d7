package headroom

import (
	"cmp"
	"fmt"
	"slices"

	"mdk/trace"
)

// Regions names the memory region of every page of a trace, by dense ID.
type Regions struct {
	of     []int32  // region of each dense page ID
	labels []string // label of each region
	pages  []int64  // pages of the trace in each region
}

// Of returns the region of dense page ID id.
func (r *Regions) Of(id uint32) int { return int(r.of[id]) }

// Label returns region i's label.
func (r *Regions) Label(i int) string { return r.labels[i] }

// Len returns the number of regions.
func (r *Regions) Len() int { return len(r.labels) }

// Pages returns the number of the trace's pages in region i.
func (r *Regions) Pages(i int) int64 { return r.pages[i] }

// RangeHoleBytes is the hole that separates two address ranges of
// [AddressRanges]: pages of one space whose addresses are closer than this
// (1 MiB) are in one range.
const RangeHoleBytes = 1 << 20

// AddressRanges is the regions of a trace without mappings: in each
// space, the trace's pages sorted by page number and cut where two
// consecutive pages are at least RangeHoleBytes apart (page numbers
// differing by at least max(1, RangeHoleBytes/pageSize)); each range is
// labelled "space/0xSTART-0xEND" (space 0: "0xSTART-0xEND"), byte
// addresses, END exclusive: one past the range's last page.
func AddressRanges(pages []trace.Page, pageSize int) *Regions {
	if pageSize <= 0 {
		pageSize = trace.DefaultPageSize
	}
	hole := uint64(max(1, RangeHoleBytes/pageSize))
	order := make([]uint32, len(pages))
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int {
		pa, pb := pages[a], pages[b]
		if pa.Space != pb.Space {
			return cmp.Compare(pa.Space, pb.Space)
		}
		return cmp.Compare(pa.Page, pb.Page)
	})
	r := &Regions{of: make([]int32, len(pages))}
	start := 0
	for i := range order {
		p := pages[order[i]]
		last := i+1 == len(order)
		if !last {
			n := pages[order[i+1]]
			last = n.Space != p.Space || n.Page-p.Page >= hole
		}
		if !last {
			continue
		}
		first := pages[order[start]]
		region := int32(len(r.labels))
		label := fmt.Sprintf("%#x-%#x", first.Page*uint64(pageSize), (p.Page+1)*uint64(pageSize))
		if p.Space != 0 {
			label = fmt.Sprintf("%d/%s", p.Space, label)
		}
		r.labels = append(r.labels, label)
		r.pages = append(r.pages, int64(i+1-start))
		for _, id := range order[start : i+1] {
			r.of[id] = region
		}
		start = i + 1
	}
	return r
}
