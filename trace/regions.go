package trace

import (
	"cmp"
	"fmt"
	"slices"
)

// Regions names the memory region of every page of a trace, by dense ID:
// the mappings of its sidecar ([FromMappings]) or, without one, address
// ranges ([AddressRanges]). mdk headroom, stats and report split by them.
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
func AddressRanges(pages []Page, pageSize int) *Regions {
	if pageSize <= 0 {
		pageSize = DefaultPageSize
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

// FromMappings is the regions of a trace with mappings (its sidecar,
// ReadMaps): a page's region is the mapping of its space that
// contains its first byte (page * pageSize); where mappings overlap (the
// recorder saw an address range change), the one seen in the latest window
// wins, and among those the last listed. Each mapping is a region labelled
// by [Mapping.Label]. Pages in no mapping fall back to address
// ranges ([AddressRanges] of those pages), labelled "unmapped " and the
// range.
func FromMappings(pages []Page, pageSize int, ms []Mapping) *Regions {
	if pageSize <= 0 {
		pageSize = DefaultPageSize
	}
	// The elementary intervals of each space: between consecutive
	// boundaries, the winning mapping (-1: none).
	type cut struct {
		at  uint64
		win int // index in ms of the mapping from at to the next cut
	}
	bounds := map[uint32][]uint64{}
	for _, m := range ms {
		bounds[m.Space] = append(bounds[m.Space], m.Start, m.End)
	}
	cuts := map[uint32][]cut{}
	for sp, bs := range bounds {
		slices.Sort(bs)
		bs = slices.Compact(bs)
		cs := make([]cut, len(bs))
		for i, b := range bs {
			cs[i] = cut{b, -1}
		}
		cuts[sp] = cs
	}
	better := func(i, j int) bool { // mapping i wins over j
		return j < 0 || ms[i].Window > ms[j].Window || ms[i].Window == ms[j].Window && i > j
	}
	for i, m := range ms {
		cs := cuts[m.Space]
		k, _ := slices.BinarySearchFunc(cs, m.Start, func(c cut, x uint64) int { return cmp.Compare(c.at, x) })
		for ; k < len(cs) && cs[k].at < m.End; k++ {
			if better(i, cs[k].win) {
				cs[k].win = i
			}
		}
	}
	r := &Regions{of: make([]int32, len(pages))}
	region := map[int]int32{} // mapping index -> region
	var unmapped []uint32
	for id, p := range pages {
		addr := p.Page * uint64(pageSize)
		cs := cuts[p.Space]
		k, found := slices.BinarySearchFunc(cs, addr, func(c cut, x uint64) int { return cmp.Compare(c.at, x) })
		if !found {
			k--
		}
		if k < 0 || k >= len(cs) || cs[k].win < 0 || p.Page > (1<<64-1)/uint64(pageSize) {
			unmapped = append(unmapped, uint32(id))
			continue
		}
		mi := cs[k].win
		g, ok := region[mi]
		if !ok {
			g = int32(len(r.labels))
			region[mi] = g
			r.labels = append(r.labels, ms[mi].Label())
			r.pages = append(r.pages, 0)
		}
		r.of[id] = g
		r.pages[g]++
	}
	if len(unmapped) > 0 {
		sub := make([]Page, len(unmapped))
		for i, id := range unmapped {
			sub[i] = pages[id]
		}
		ar := AddressRanges(sub, pageSize)
		base := int32(len(r.labels))
		for i := range ar.labels {
			r.labels = append(r.labels, "unmapped "+ar.labels[i])
			r.pages = append(r.pages, ar.pages[i])
		}
		for i, id := range unmapped {
			r.of[id] = base + ar.of[i]
		}
	}
	return r
}
