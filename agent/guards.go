package agent

// A guard is one safety limit of the guards stage: of the decided pages
// still going on (in page order), it lets the first keep(a, row, n) through
// and skips the rest with its cause, counted in its field of the row.
type guard struct {
	cause string
	count func(*Row) *int64
	keep  func(a *agent, row *Row, n int) int
}

// guards are applied in this order; a guard that keeps nothing leaves the
// next ones nothing to keep.
var guards = []guard{
	{CauseDry, func(r *Row) *int64 { return &r.SkippedDry }, func(a *agent, _ *Row, n int) int {
		return none(a.opt.DryRun, n)
	}},
	{CauseSLO, func(r *Row) *int64 { return &r.SkippedSLO }, func(a *agent, _ *Row, n int) int {
		return none(a.opt.SLO > 0 && a.sloBad >= a.opt.SLOWindows, n)
	}},
	{CausePSI, func(r *Row) *int64 { return &r.SkippedPSI }, func(a *agent, row *Row, n int) int {
		return none(a.opt.PSIThreshold > 0 && row.PSISome > a.opt.PSIThreshold, n)
	}},
	{CauseLimit, func(r *Row) *int64 { return &r.SkippedLimit }, func(a *agent, _ *Row, n int) int {
		return min(n, a.opt.MaxPages)
	}},
	{CauseSwap, func(r *Row) *int64 { return &r.SkippedSwap }, func(a *agent, row *Row, n int) int {
		ps := int64(a.tr.Header().PageSize)
		if ps <= 0 {
			return n
		}
		return int(min(int64(n), max((row.SwapFree-a.opt.SwapFloorBytes)/ps, 0)))
	}},
}

// none is 0 when stop, else n.
func none(stop bool, n int) int {
	if stop {
		return 0
	}
	return n
}

// guard reads what the guards need (free swap, memory pressure) into the
// row and applies every guard: it returns the pages that may be reclaimed
// and those skipped.
func (a *agent) guard(row *Row, decided []uint32) ([]uint32, []skip) {
	row.SwapFree, row.PSISome = a.swapFree(), a.psi()
	var skipped []skip
	for _, g := range guards {
		n := g.keep(a, row, len(decided))
		for _, id := range decided[n:] {
			skipped = append(skipped, skip{id, g.cause})
		}
		*g.count(row) += int64(len(decided) - n)
		decided = decided[:n]
	}
	return decided, skipped
}

// sloCheck updates the SLO guard with the window's measured promotion rate.
func (a *agent) sloCheck(row *Row) {
	if a.opt.SLO <= 0 {
		return
	}
	pr := 0.0
	if row.Accessed > 0 {
		pr = float64(row.Promotions) / float64(row.Accessed)
	}
	if pr > a.opt.SLO {
		a.sloBad++
	} else {
		a.sloBad = 0
	}
}

// swapFree returns the free bytes of all swap devices, 0 if unreadable.
func (a *agent) swapFree() int64 {
	free, err := a.opt.FS.SwapFree()
	if err != nil {
		return 0
	}
	return free
}

// psi returns the "some avg10" percentage of the pressure file, -1 when it
// cannot be read.
func (a *agent) psi() float64 {
	v, err := a.opt.FS.MemoryPressure(a.opt.PSIPath)
	if err != nil {
		return -1
	}
	return v
}
