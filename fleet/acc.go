package fleet

import (
	"fmt"
	"math"
	"math/big"
)

// Acc is one fleet key's accumulator: the sums over the jobs merged into it.
// Keys are [SettingKey] (one per requested setting, then one per
// controller), [TunedKey] (one per
// policy: each job with its own tuned setting) and [OPPKey] (each job with
// OPP's yardstick). Every field is an integer count or an exact rational, so
// [Acc.Merge] is associative and commutative and the fleet numbers do not
// depend on how a runner groups or orders the jobs. Acc encodes to JSON
// (big.Rat as "num/den").
type Acc struct {
	Key    string `json:"key"`
	Policy string `json:"policy"` // "" for OPPKey
	Params string `json:"params"` // the setting's; "" for TunedKey and OPPKey
	Index  int    `json:"index"`  // the setting's or policy's index in the plan

	Jobs           int64 `json:"jobs"`            // jobs merged in (failed jobs never are)
	FootprintBytes int64 `json:"footprint_bytes"` // Σ peak alive pages x page size
	// Found counts, for TunedKey, the jobs with a setting meeting the SLO on
	// their training windows (the others keep all their memory: saved 0).
	Found int64 `json:"found"`
	// Switches, for a controller's SettingKey, sums the jobs' switches.
	Switches int64 `json:"switches,omitempty"`

	// SamplePPM is the sample rate of the jobs merged in, when they were
	// all sampled at one rate with the same number of sub-samples (then
	// each Part has Groups); SampleMixed is set, and the groups dropped,
	// once jobs of different rates or groups are merged.
	SamplePPM   int64 `json:"sample_ppm,omitempty"`
	SampleMixed bool  `json:"sample_mixed,omitempty"`

	Whole Part `json:"whole"` // SettingKey only: whole traces
	Train Part `json:"train"` // SettingKey only
	Eval  Part `json:"eval"`
}

// Part sums one part (whole traces, training or evaluation windows) over
// jobs.
type Part struct {
	// SavedBytes is Σ S x page_size / W over jobs (S, W of the part): the
	// jobs' average saved bytes, summed exactly. AliveBytes likewise with L.
	SavedBytes *big.Rat `json:"saved_bytes"`
	AliveBytes *big.Rat `json:"alive_bytes"`
	// SavedPageWindows and AlivePageWindows are ΣS and ΣL.
	SavedPageWindows int64 `json:"saved_page_windows"`
	AlivePageWindows int64 `json:"alive_page_windows"`
	// Breaking counts the jobs whose statistic on the part breaks the SLO.
	Breaking int64 `json:"breaking"`
	// Groups, on sampled jobs (SettingKey only), are the same sums of each
	// sub-sample's estimates: the random-group error bounds' input.
	Groups []GroupSums `json:"groups,omitempty"`
}

// GroupSums are one sub-sample's sums over jobs: saved and alive bytes as
// in Part, and the footprint.
type GroupSums struct {
	SavedBytes     *big.Rat `json:"saved_bytes"`
	AliveBytes     *big.Rat `json:"alive_bytes"`
	FootprintBytes int64    `json:"footprint_bytes"`
}

// SettingKey, TunedKey and OPPKey name the fleet keys. They sort in plan
// order.
func SettingKey(i int) string { return fmt.Sprintf("setting/%06d", i) }
func TunedKey(i int) string   { return fmt.Sprintf("tuned/%06d", i) }

const OPPKey = "opp"

func ratAdd(a, b *big.Rat) *big.Rat {
	switch {
	case a == nil && b == nil:
		return nil
	case a == nil:
		return new(big.Rat).Set(b)
	case b == nil:
		return new(big.Rat).Set(a)
	}
	return new(big.Rat).Add(a, b)
}

// add adds one job's part: S and L page-windows over w windows of pageSize
// bytes, and whether the job breaks the SLO there.
func (p *Part) add(saved, alive int64, w int, pageSize int64, breaks bool) {
	if w > 0 {
		p.SavedBytes = ratAdd(p.SavedBytes, big.NewRat(saved*pageSize, int64(w)))
		p.AliveBytes = ratAdd(p.AliveBytes, big.NewRat(alive*pageSize, int64(w)))
	}
	p.SavedPageWindows += saved
	p.AlivePageWindows += alive
	if breaks {
		p.Breaking++
	}
}

// addGroups adds one sampled job's sub-sample estimates: saved[g] and
// alive[g] page-windows over w windows, footprint fp[g] bytes.
func (p *Part) addGroups(saved, alive, fp []int64, w int, pageSize int64) {
	if w <= 0 {
		return
	}
	p.Groups = make([]GroupSums, len(saved))
	for g := range saved {
		p.Groups[g] = GroupSums{SavedBytes: big.NewRat(saved[g]*pageSize, int64(w)),
			AliveBytes: big.NewRat(alive[g]*pageSize, int64(w)), FootprintBytes: fp[g]}
	}
}

// merge adds q to p; keepGroups says whether the sub-sample sums are
// comparable (one rate, one number of groups) and kept.
func (p Part) merge(q Part, keepGroups bool) Part {
	m := Part{
		SavedBytes:       ratAdd(p.SavedBytes, q.SavedBytes),
		AliveBytes:       ratAdd(p.AliveBytes, q.AliveBytes),
		SavedPageWindows: p.SavedPageWindows + q.SavedPageWindows,
		AlivePageWindows: p.AlivePageWindows + q.AlivePageWindows,
		Breaking:         p.Breaking + q.Breaking,
	}
	if keepGroups && len(p.Groups) == len(q.Groups) && len(p.Groups) > 0 {
		m.Groups = make([]GroupSums, len(p.Groups))
		for g := range m.Groups {
			m.Groups[g] = GroupSums{SavedBytes: ratAdd(p.Groups[g].SavedBytes, q.Groups[g].SavedBytes),
				AliveBytes:     ratAdd(p.Groups[g].AliveBytes, q.Groups[g].AliveBytes),
				FootprintBytes: p.Groups[g].FootprintBytes + q.Groups[g].FootprintBytes}
		}
	}
	return m
}

// Merge returns the sum of two accumulators of the same key. It does not
// modify either.
func (a Acc) Merge(b Acc) Acc {
	if a.Key != b.Key {
		panic("fleet: merging accumulators of different keys " + a.Key + " and " + b.Key)
	}
	a.Jobs += b.Jobs
	a.FootprintBytes += b.FootprintBytes
	a.Found += b.Found
	a.Switches += b.Switches
	mixed := a.SampleMixed || b.SampleMixed || a.SamplePPM != b.SamplePPM ||
		len(a.Whole.Groups) != len(b.Whole.Groups) || len(a.Train.Groups) != len(b.Train.Groups) || len(a.Eval.Groups) != len(b.Eval.Groups)
	a.Whole = a.Whole.merge(b.Whole, !mixed)
	a.Train = a.Train.merge(b.Train, !mixed)
	a.Eval = a.Eval.merge(b.Eval, !mixed)
	if mixed {
		a.SampleMixed, a.SamplePPM = true, 0
	}
	return a
}

// Accs returns the job's contribution to every fleet key, in key order: one
// per setting and controller (its curve's points), and with an SLO one per policy and one for OPP. A failed job
// contributes nothing.
func (p *Plan) Accs(jr *JobResult) []Acc {
	if jr.Error != "" {
		return nil
	}
	fp := jr.FootprintBytes()
	base := func(key, pol, params string, i int) Acc {
		return Acc{Key: key, Policy: pol, Params: params, Index: i, Jobs: 1, FootprintBytes: fp}
	}
	var out []Acc
	for i, pt := range jr.Curve {
		a := base(SettingKey(i), pt.Policy, pt.Params, i)
		a.Switches = int64(pt.Switches)
		a.Whole.add(pt.Saved, jr.AlivePageWindows, jr.Windows, jr.PageSize, pt.Breaks)
		if p.SLO != nil {
			a.Train.add(pt.TrainSaved, jr.TrainAlive, jr.Train.Len(), jr.PageSize, pt.TrainBreaks)
			a.Eval.add(pt.EvalSaved, jr.EvalAlive, jr.Eval.Len(), jr.PageSize, pt.EvalBreaks)
		}
		if k := len(jr.Groups); k >= 2 && len(pt.Groups) == k {
			a.SamplePPM = int64(math.Round(jr.SampleRate * 1e6))
			col := func(f func(g int) int64) []int64 {
				v := make([]int64, k)
				for g := range v {
					v[g] = f(g)
				}
				return v
			}
			fp := col(func(g int) int64 { return jr.Groups[g].PeakAlivePages * jr.PageSize })
			a.Whole.addGroups(col(func(g int) int64 { return pt.Groups[g].Saved }),
				col(func(g int) int64 { return jr.Groups[g].AlivePageWindows }), fp, jr.Windows, jr.PageSize)
			if p.SLO != nil {
				a.Train.addGroups(col(func(g int) int64 { return pt.Groups[g].TrainSaved }),
					col(func(g int) int64 { return jr.Groups[g].TrainAlive }), fp, jr.Train.Len(), jr.PageSize)
				a.Eval.addGroups(col(func(g int) int64 { return pt.Groups[g].EvalSaved }),
					col(func(g int) int64 { return jr.Groups[g].EvalAlive }), fp, jr.Eval.Len(), jr.PageSize)
			}
		}
		out = append(out, a)
	}
	if p.SLO == nil {
		return out
	}
	ew := jr.Eval.Len()
	for i, c := range jr.Tuned {
		a := base(TunedKey(i), c.Policy, "", i)
		if c.Found {
			a.Found = 1
			a.Eval.add(c.Eval.SavedPageWindows, c.Eval.AlivePageWindows, ew, jr.PageSize, !c.Eval.MeetsSLO)
		} else {
			a.Eval.add(0, jr.EvalAlive, ew, jr.PageSize, false)
		}
		out = append(out, a)
	}
	a := base(OPPKey, "", "", 0)
	if jr.OPP != nil {
		a.Found = 1
		a.Eval.add(jr.OPP.Eval.SavedPageWindows, jr.OPP.Eval.AlivePageWindows, ew, jr.PageSize, !jr.OPP.Eval.MeetsSLO)
	} else {
		a.Eval.add(0, jr.EvalAlive, ew, jr.PageSize, false)
	}
	return append(out, a)
}
