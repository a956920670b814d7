package agent

import (
	"fmt"
	"strings"

	"mdk/trace"
)

// record writes window k's row to the run files, the JSON log and the
// metrics (the record stage).
func (a *agent) record(out *runFiles, win *trace.Window, row *Row, skipped []skip) error {
	if err := out.write(win, row, skipped); err != nil {
		return err
	}
	if a.opt.Log != nil {
		b, _ := row.MarshalJSON()
		if _, err := a.opt.Log.Write(append(b, '\n')); err != nil {
			return fmt.Errorf("write log: %w", err)
		}
	}
	if a.opt.Metrics != nil {
		a.opt.Metrics.observe(row)
	}
	return nil
}

// counters are the kernel counters whose increase a row reports.
type counters struct{ majflt, pswpin, pswpout, refault int64 }

// counters reads the cross-check counters; -1 for those not available.
func (a *agent) counters() counters {
	c := counters{majflt: -1, pswpin: -1, pswpout: -1, refault: -1}
	var maj int64
	ok := false
	for t, pid := range a.tr.Targets() {
		if t < len(a.tgts) && a.tgts[t].gone {
			continue
		}
		n, err := a.opt.FS.MajorFaults(pid)
		if err != nil {
			continue
		}
		maj += n
		ok = true
	}
	if ok {
		c.majflt = maj
	}
	if kv, err := a.opt.FS.VMStat("pswpin", "pswpout"); err == nil {
		if v, ok := kv["pswpin"]; ok {
			c.pswpin = v
		}
		if v, ok := kv["pswpout"]; ok {
			c.pswpout = v
		}
	}
	if a.opt.Cgroup != "" {
		if kv, err := a.opt.FS.MemoryStat(a.opt.Cgroup, "workingset_refault_anon"); err == nil {
			if v, ok := kv["workingset_refault_anon"]; ok {
				c.refault = v
			}
		}
	}
	return c
}

func delta(now, before int64) int64 {
	if now < 0 || before < 0 {
		return -1
	}
	return now - before
}

// crossCheck fills the kernel's counters, the targets' memory and the zram
// memory use.
func (a *agent) crossCheck(row *Row) {
	c := a.counters()
	row.MajFlt = delta(c.majflt, a.prev.majflt)
	row.PswpIn = delta(c.pswpin, a.prev.pswpin)
	row.PswpOut = delta(c.pswpout, a.prev.pswpout)
	row.RefaultAnon = delta(c.refault, a.prev.refault)
	a.prev = c
	row.RSS, row.Swap = -1, -1
	for t, pid := range a.tr.Targets() {
		if t < len(a.tgts) && a.tgts[t].gone {
			continue
		}
		rss, swap, err := a.opt.FS.MemStatus(pid)
		if err != nil {
			continue
		}
		if row.RSS < 0 {
			row.RSS, row.Swap = 0, 0
		}
		row.RSS += rss
		row.Swap += swap
	}
	sw, _ := a.opt.FS.Swaps()
	for _, d := range sw {
		dev, ok := strings.CutPrefix(d.Filename, "/dev/")
		if !ok || !strings.HasPrefix(dev, "zram") {
			continue
		}
		z, err := a.opt.FS.ZramStat(dev)
		if err != nil {
			continue
		}
		row.ZramOrig += z.OrigDataBytes
		row.ZramCompr += z.ComprDataBytes
		row.ZramMem += z.MemUsedBytes
	}
}
