package calibrate

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// mapping is one line of /proc/PID/maps (proc(5)):
//
//	55d5c2a4e000-55d5c2a6f000 rw-p 00000000 00:00 0                          [heap]
//	7f1c2c000000-7f1c2c021000 rw-p 00000000 00:00 0
//	7f1c33a00000-7f1c33a28000 r--p 00000000 fd:01 1055                       /usr/lib/x86_64-linux-gnu/libc.so.6
type mapping struct {
	Start, End uint64
	Perms      string
	Inode      uint64
	Path       string
}

// anon reports whether m is private anonymous memory a process wrote
// itself (heap, stacks, anonymous mappings): what a swap tier holds.
func (m mapping) anon() bool {
	if len(m.Perms) < 4 || m.Perms[0] != 'r' || m.Perms[1] != 'w' || m.Perms[3] != 'p' || m.Inode != 0 {
		return false
	}
	return m.Path == "" || m.Path == "[heap]" || m.Path == "[stack]" || strings.HasPrefix(m.Path, "[anon:")
}

// parseMaps parses /proc/PID/maps; name is used in errors.
func parseMaps(b []byte, name string) ([]mapping, error) {
	var out []mapping
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 5 {
			return nil, fmt.Errorf("%s: line %d: %d fields, want at least 5", name, line, len(f))
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			return nil, fmt.Errorf("%s: line %d: address range %q: want START-END", name, line, f[0])
		}
		var m mapping
		var err error
		if m.Start, err = strconv.ParseUint(lo, 16, 64); err != nil {
			return nil, fmt.Errorf("%s: line %d: start %q: want hex", name, line, lo)
		}
		if m.End, err = strconv.ParseUint(hi, 16, 64); err != nil || m.End < m.Start {
			return nil, fmt.Errorf("%s: line %d: end %q: want hex at or above the start", name, line, hi)
		}
		m.Perms = f[1]
		if m.Inode, err = strconv.ParseUint(f[4], 10, 64); err != nil {
			return nil, fmt.Errorf("%s: line %d: inode %q: want a decimal number", name, line, f[4])
		}
		if len(f) > 5 {
			m.Path = strings.Join(f[5:], " ")
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

// pagePicker draws page addresses of a process's anonymous mappings, each
// page equally likely; seed makes the draws repeatable. Memory is O(number
// of mappings), whatever their size.
type pagePicker struct {
	ms     []mapping // anonymous only
	cum    []uint64  // cum[i]: pages in ms[:i+1]
	size   uint64
	rng    *rand.Rand
	total  uint64
	picked map[uint64]bool
}

func newPagePicker(ms []mapping, pageSize uint64, seed uint64) *pagePicker {
	p := &pagePicker{size: pageSize, rng: rand.New(rand.NewPCG(seed, seed^0x6a09e667f3bcc909)), picked: map[uint64]bool{}}
	for _, m := range ms {
		if !m.anon() || m.End-m.Start < pageSize {
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
