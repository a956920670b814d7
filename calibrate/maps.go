package calibrate

import (
	"math/rand/v2"
	"slices"
	"strings"

	"mdk/linux"
)

// isAnon reports whether m is private anonymous memory a process wrote
// itself (heap, stacks, anonymous mappings): what a swap tier holds.
func isAnon(m linux.Mapping) bool {
	if len(m.Perms) < 4 || m.Perms[0] != 'r' || m.Perms[1] != 'w' || m.Perms[3] != 'p' || m.Inode != 0 {
		return false
	}
	return m.Path == "" || m.Path == "[heap]" || m.Path == "[stack]" || strings.HasPrefix(m.Path, "[anon:")
}

// pagePicker draws page addresses of a process's anonymous mappings, each
// page equally likely; seed makes the draws repeatable. Memory is O(number
// of mappings), whatever their size.
type pagePicker struct {
	ms     []linux.Mapping // anonymous only
	cum    []uint64        // cum[i]: pages in ms[:i+1]
	size   uint64
	rng    *rand.Rand
	total  uint64
	picked map[uint64]bool
}

func newPagePicker(ms []linux.Mapping, pageSize uint64, seed uint64) *pagePicker {
	p := &pagePicker{size: pageSize, rng: rand.New(rand.NewPCG(seed, seed^0x6a09e667f3bcc909)), picked: map[uint64]bool{}}
	for _, m := range ms {
		if !isAnon(m) || m.End-m.Start < pageSize {
			continue
		}
		p.total += (m.End - m.Start) / pageSize
		p.ms = append(p.ms, m)
		p.cum = append(p.cum, p.total)
	}
	return p
}

// Pages returns the number of pages the picker draws from.
func (p *pagePicker) Pages() uint64 { return p.total }

// Next returns a page address not returned before, or false when every page
// was.
func (p *pagePicker) Next() (uint64, bool) {
	if uint64(len(p.picked)) >= p.total {
		return 0, false
	}
	for {
		k := p.rng.Uint64N(p.total)
		if p.picked[k] {
			continue
		}
		p.picked[k] = true
		i, _ := slices.BinarySearch(p.cum, k+1)
		prev := uint64(0)
		if i > 0 {
			prev = p.cum[i-1]
		}
		return p.ms[i].Start + (k-prev)*p.size, true
	}
}
