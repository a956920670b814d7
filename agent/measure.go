package agent

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"mdk/linux"
)

// measure reads every target's pagemap once (or takes the tracker's read,
// [Snapshot]) and counts, for every alive page, what became of the agent's
// and the kernel's reclaims (the measure stage), and how many of them the
// model has absent (a.absentAlive: the model's saved page-windows). It
// returns the pages the agent had put out that came back without an access.
func (a *agent) measure(row *Row) ([]skip, error) {
	if err := a.snapshot(row); err != nil {
		return nil, err
	}
	var back []skip
	a.absentAlive = 0
	for id := range a.pages {
		p := &a.pages[id]
		if !p.Alive || a.tgts[a.tgt[id]].gone {
			p.accessed = false
			continue
		}
		row.Alive++
		if p.absent {
			a.absentAlive++
		}
		e := a.entries[id]
		present := e&linux.PagemapPresent != 0
		switch {
		case p.out && present:
			p.out = false
			if p.accessed {
				row.Promotions++
			} else {
				// Back without an access (swapoff, readahead): from the end
				// of the previous window, as if not reclaimed.
				row.SwapInOther++
				back = append(back, skip{uint32(id), CauseBack})
			}
		case p.out:
			row.Saved++
		case !present && e&linux.PagemapSwapped != 0:
			p.kout = true
			row.KernelOut++
		case present && p.kout:
			p.kout = false
			row.KernelIn++
		}
		p.accessed = false
	}
	return back, nil
}

// snapshot fills a.entries with the pagemap entry of every page: from the
// tracker's own read of this window when it made one, else by reading each
// target's pagemap, one read per run of nearby pages.
func (a *agent) snapshot(row *Row) error {
	if cap(a.entries) < len(a.pages) {
		a.entries = make([]uint64, len(a.pages), 2*len(a.pages))
	}
	a.entries = a.entries[:len(a.pages)]
	if s, ok := a.tr.(Snapshot); ok {
		gone := make([]bool, len(a.tgts))
		s.Pagemap(a.entries, gone)
		for t := range a.tgts {
			a.tgts[t].gone = a.tgts[t].gone || gone[t]
		}
		return nil
	}
	for t := range a.tgts {
		if a.tgts[t].gone || t >= len(a.order) {
			continue
		}
		if err := a.readRuns(t, a.order[t], row); err != nil {
			if errors.Is(err, linux.ErrNoProcess) {
				a.tgts[t].gone = true
				continue
			}
			return err
		}
	}
	return nil
}

// readRuns reads the entries of pages ids (in virtual page order) of target
// t into a.entries[id]: one read per span of pages, a span bridging gaps of
// up to spanGap pages (reading a few unneeded entries costs less than a
// system call).
func (a *agent) readRuns(t int, ids []uint32, row *Row) error {
	pm := a.tgts[t].pagemap
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && a.vpn[ids[j]]-a.vpn[ids[j-1]] <= spanGap {
			j++
		}
		first := a.vpn[ids[i]]
		n := int(a.vpn[ids[j-1]]-first) + 1
		if cap(a.buf) < n {
			a.buf = make([]uint64, n)
		}
		b := a.buf[:n]
		if err := pm.Read(first, b); err != nil {
			if isGone(err) {
				return fmt.Errorf("%w: %v", linux.ErrNoProcess, err)
			}
			return err
		}
		a.pagemapReads++
		row.Syscalls += int64((n + linux.PagemapChunk - 1) / linux.PagemapChunk)
		row.Scanned += int64(n)
		for _, id := range ids[i:j] {
			a.entries[id] = b[a.vpn[id]-first]
		}
		i = j
	}
	return nil
}

// spanGap is the widest gap of unneeded pages a pagemap read spans: 64
// entries, 512 bytes.
const spanGap = 64

func isGone(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, linux.ErrNoProcess) || strings.Contains(err.Error(), "no such process")
}
