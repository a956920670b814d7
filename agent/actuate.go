package agent

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"mdk/linux"
)

// target is one process the agent reclaims pages of: its pidfd (actuate)
// and its pagemap (measure, confirm).
type target struct {
	proc    *linux.Process
	pagemap *linux.Pagemap
	gone    bool // the process exited
}

// openTarget opens target pid; a dry run, which never reclaims, needs no
// right to reclaim (linux.OpenPidfd).
func openTarget(fsys linux.FS, pid int, dryRun bool) (target, error) {
	open := linux.OpenProcess
	if dryRun {
		open = linux.OpenPidfd
	}
	p, err := open(pid)
	if err != nil {
		return target{}, err
	}
	pm, err := fsys.OpenPagemap(pid)
	if err != nil {
		p.Close()
		return target{}, fmt.Errorf("open pagemap of %d: %w", pid, err)
	}
	return target{proc: p, pagemap: pm}, nil
}

func (t target) close() error {
	return errors.Join(t.pagemap.Close(), t.proc.Close())
}

// actuate pages out the decided pages, per target, with
// process_madvise(MADV_PAGEOUT) (the actuate stage), and confirms each
// target's pages right after (the confirm stage). It returns the pages not
// reclaimed: their target gone, or refused by the kernel.
func (a *agent) actuate(row *Row, decided []uint32) ([]skip, error) {
	var skipped []skip
	for t := range a.tgts {
		var ids []uint32
		var vpns []uint64
		for _, id := range decided {
			if int(a.tgt[id]) == t {
				ids = append(ids, id)
				vpns = append(vpns, a.vpn[id])
			}
		}
		if len(ids) == 0 {
			continue
		}
		gone := func() {
			a.tgts[t].gone = true
			for _, id := range ids {
				skipped = append(skipped, skip{id, CauseGone})
			}
			row.SkippedGone += int64(len(ids))
		}
		if a.tgts[t].gone {
			gone()
			continue
		}
		st, err := a.tgts[t].proc.PageOut(vpns)
		row.Syscalls += int64(st.Syscalls)
		if errors.Is(err, linux.ErrNoProcess) {
			gone()
			continue
		}
		if err != nil {
			return nil, err
		}
		row.Reclaimed += int64(len(ids))
		sk, err := a.confirm(t, row, ids)
		if err != nil {
			return nil, err
		}
		skipped = append(skipped, sk...)
	}
	return skipped, nil
}

// confirm re-reads the pagemap entries of target t's pages ids, just
// advised: a page not present is out; one still present was refused, with
// the reason kpageflags gives.
func (a *agent) confirm(t int, row *Row, ids []uint32) ([]skip, error) {
	slices.SortFunc(ids, func(x, y uint32) int { return cmp.Compare(a.vpn[x], a.vpn[y]) })
	if err := a.readRuns(t, ids, row); err != nil {
		if errors.Is(err, linux.ErrNoProcess) {
			a.tgts[t].gone = true
			return nil, nil
		}
		return nil, err
	}
	var skipped []skip
	for _, id := range ids {
		e := a.entries[id]
		if e&linux.PagemapPresent == 0 {
			a.pages[id].out = true
			a.pages[id].kout = false
			row.Out++
			continue
		}
		r := a.flags.Refusal(e)
		if a.flags != nil {
			row.Syscalls += 2
		}
		row.Refused++
		row.RefusedBy[r]++
		skipped = append(skipped, skip{id, "refused:" + r.String()})
	}
	return skipped, nil
}
