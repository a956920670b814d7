package sim

import (
	"context"
	"fmt"

	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

// Controlled is one controlled run: its result (Policy and Params are the
// controller's) and every switch of its setting, in window order.
type Controlled struct {
	Result   *result.Result
	Switches []policy.Switch
	// Settings holds the spec of the setting in force at the end of each
	// window (after that window's switch, if any): what governed window
	// w's decisions.
	Settings []string
	// Run is the controller's run, for what it records of itself (auto's
	// retunes).
	Run policy.ControlRun
	// Decided counts the pages reclaimed at the end of each window.
	Decided []int64
}

// RunControlled simulates controller c on trace t, window by window
// (docs/policies.md, "Controllers"). At the end of window k, after k's
// accesses and births and its counts, the controller sees window k and
// that window's outcome and names the setting in force from then on; then
// every resident alive page whose gap is due under that setting
// (k - last touch >= the setting's delay for it, [policy.Online]) is
// reclaimed (under a [policy.Limited] setting at most its limit, the least
// recently used first: [policy.Ration]), or, under a capacity limit
// ([policy.Capacity]: the setting a senpai controller names), every
// resident page past the limit; then k's frees apply. A reclaimed page stays absent until its
// next access, whatever the controller does later.
func RunControlled(ctx context.Context, t *trace.Trace, c policy.Controller) (*Controlled, error) {
	W := len(t.Windows)
	pages := make([]page, len(t.Pages))
	evs := make([]Events, W)
	for w := range t.Windows {
		evs[w] = WindowEvents(&t.Windows[w])
	}
	res := &result.Result{
		Policy:         c.Policy(),
		Params:         c.Params(),
		Promotions:     make([]int64, W),
		Accessed:       make([]int64, W),
		PageSize:       int64(t.Header.PageSize),
		SavedPerWindow: make([]int64, W),
		AlivePerWindow: make([]int64, W),
	}
	out := &Controlled{Result: res, Settings: make([]string, W), Decided: make([]int64, W)}
	run := c.NewRun(t.Header)
	out.Run = run
	cur := run.Start()
	resident := make([]bool, len(pages))
	sc := newScan(len(pages))
	for k := 0; k < W; k++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ev := evs[k]
		res.Accessed[k] = int64(len(t.Windows[k].Accessed))
		// 1. Accesses: an absent alive page is promoted.
		for _, id := range ev.Accessed {
			p := &pages[id]
			if p.Alive && !resident[id] {
				res.Promotions[k]++
			}
			resident[id] = true
			p.Touch(k)
		}
		// 2. Births start a life.
		for _, id := range ev.Born {
			if p := &pages[id]; !p.Alive {
				p.Touch(k)
				resident[id] = true
			}
		}
		// 3. Counts.
		for id := range pages {
			if pages[id].Alive {
				res.AlivePerWindow[k]++
				if !resident[id] {
					res.SavedPerWindow[k]++
				}
			}
		}
		// 4. The controller names the setting of this scan point on.
		next, err := run.EndWindow(&t.Windows[k], policy.Outcome{
			Promotions: res.Promotions[k], Accessed: res.Accessed[k],
			Saved: res.SavedPerWindow[k], Alive: res.AlivePerWindow[k],
		})
		if err != nil {
			return nil, fmt.Errorf("%s at the end of window %d: %w", c.Policy(), k, err)
		}
		if from, to := policy.SpecOf(cur), policy.SpecOf(next); from != to {
			out.Switches = append(out.Switches, policy.Switch{Window: k, From: from, To: to})
		}
		cur = next
		out.Settings[k] = policy.SpecOf(cur)
		// 5. Decisions: every resident page whose gap is due; under a
		//    limit, at most that many, the least recently used first; under a
		//    capacity limit, the resident pages past the limit.
		sc.start(ev.Freed, pages)
		if c, ok := cur.(policy.Capacity); ok {
			out.Decided[k] += int64(len(capacity(k, pages, resident, c, sc, nil)))
		} else {
			var st policy.PageState
			var due []uint32
			var nres int64
			for id := range pages {
				p := &pages[id]
				if !p.Alive || !resident[id] {
					continue
				}
				nres++
				st = policy.PageState{Page: uint32(id), Now: k, LastTouch: p.Last, Prior: p.Prior, Features: p.Features}
				if d, ok := cur.Due(&st); ok && k-p.Last >= d {
					due = append(due, uint32(id))
				}
			}
			if l, ok := cur.(policy.Limited); ok {
				if n, ok := l.Limit(nres); ok {
					due = policy.Ration(due, func(id uint32) (int, int) { return pages[id].Last, pages[id].Prior }, n)
				}
			}
			for _, id := range due {
				resident[id] = false
			}
			out.Decided[k] = int64(len(due))
		}
		sc.done(ev.Freed)
		// 6. Frees end lives after this window.
		for _, id := range ev.Freed {
			if p := &pages[id]; p.Alive {
				p.Free()
				resident[id] = false
			}
		}
	}
	for k := range W {
		res.Saved += res.SavedPerWindow[k]
		res.Alive += res.AlivePerWindow[k]
	}
	return out, nil
}
