package policy

import (
	"cmp"
	"math"
	"strconv"
	"time"
)

// LRU is a capacity limit (docs/policies.md, "lru"): at the end of every
// window at most a number of pages stay resident, the most recently touched
// ([MoreRecent]); the others are reclaimed, least recently touched first.
// The limit is C pages, or, with Share, SharePPM parts per million of the
// peak alive page count so far ([LRU.Limit]). C = Inf never reclaims.
//
// It is what memory.high or memory.max does to an anonymous working set,
// idealised: the limit is enforced at the scan points, on pages that outlive
// the window, with no cost of reclaim itself.
type LRU struct {
	C        int64 // pages, or Inf; ignored with Share
	SharePPM int64 // with Share: the limit as a share of the peak, in ppm
	Share    bool
}

func (p LRU) Policy() string { return "lru" }

// Params prints C as pages ("C=1000"), a share ("C=50%") or "C=inf".
func (p LRU) Params() string {
	switch {
	case p.Share:
		return "C=" + FormatRate(p.SharePPM)
	case p.C >= Inf:
		return "C=inf"
	}
	return "C=" + strconv.FormatInt(p.C, 10)
}

// NewDecider returns the setting itself: the simulator ranks a window's
// pages by [Capacity], not page by page.
func (p LRU) NewDecider([]int64) Decider { return p }

// Reclaim is never true: an LRU decides a scan point's pages together
// ([Capacity]); a caller that decides page by page must not run it.
func (p LRU) Reclaim(*PageState) bool { return false }

// Due is never: LRU's decisions are a ranking ([Capacity]), not a delay.
// It is an [Online] setting so that a controller (senpai) can name it.
func (p LRU) Due(*PageState) (int, bool) { return 0, false }

// Limit returns the number of pages that may stay resident at a scan point
// whose peak alive page count so far (the largest alive count of any window
// up to this one, this one included) is peak: C, or floor(SharePPM x peak /
// 1e6).
func (p LRU) Limit(peak int64) int64 {
	if p.Share {
		return p.SharePPM * peak / MaxPPM
	}
	return p.C
}

// Capacity is a setting that limits the resident pages instead of deciding
// page by page (lru, and the setting a senpai controller names). At the end
// of window k its candidates are the alive resident pages not freed in k;
// the Limit(peak) most recent of them by [MoreRecent] stay resident and the
// others are reclaimed; peak is the largest alive page count of the windows
// 0..k. Callers (the simulator, a controlled run, the agent) rank with
// [RankLRU].
type Capacity interface {
	Online
	Limit(peak int64) int64
}

// MoreRecent reports whether page a ranks above page b in LRU order
// (docs/policies.md, "lru"): the later last touch; on a tie, the later
// touch before it (a smaller prior reuse distance; a life's first touch,
// with none, ranks lowest); on a tie, the smaller dense page ID.
func MoreRecent(a, b *PageState) bool { return cmpRecency(a, b) < 0 }

// cmpRecency orders pages most recent first.
func cmpRecency(a, b *PageState) int {
	if c := cmp.Compare(b.LastTouch, a.LastTouch); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Prior, b.Prior); c != 0 {
		return c
	}
	return cmp.Compare(a.Page, b.Page)
}

// RankLRU returns the candidates a capacity of keep reclaims: all but the
// keep most recent by [MoreRecent], in no particular order (nil when keep
// >= the number of candidates). cands is not modified. It selects on
// compact keys (16 bytes a page) rather than sorting: O(n) expected for n
// candidates (quickselect).
func RankLRU(cands []PageState, keep int64) []PageState {
	if keep >= int64(len(cands)) {
		return nil
	}
	keep = max(keep, 0)
	keys := make([]rankKey, len(cands))
	for i := range cands {
		c := &cands[i]
		prior := uint64(min(max(c.Prior, 0), math.MaxUint32))
		keys[i] = rankKey{hi: uint64(math.MaxInt32-int64(c.LastTouch))<<32 | prior, page: c.Page, i: int32(i)}
	}
	selectKeys(keys, int(keep))
	out := make([]PageState, 0, len(cands)-int(keep))
	for _, k := range keys[keep:] {
		out = append(out, cands[k.i])
	}
	return out
}

// selectKeys reorders keys so that keys[:k] are the k smallest (most
// recent), in some order: quickselect with a median-of-three pivot.
func selectKeys(keys []rankKey, k int) {
	lo, hi := 0, len(keys)-1
	for lo < hi {
		m := lo + (hi-lo)/2
		if keys[m].less(keys[lo]) {
			keys[m], keys[lo] = keys[lo], keys[m]
		}
		if keys[hi].less(keys[lo]) {
			keys[hi], keys[lo] = keys[lo], keys[hi]
		}
		if keys[hi].less(keys[m]) {
			keys[hi], keys[m] = keys[m], keys[hi]
		}
		pivot := keys[m]
		i, j := lo, hi
		for i <= j {
			for keys[i].less(pivot) {
				i++
			}
			for pivot.less(keys[j]) {
				j--
			}
			if i <= j {
				keys[i], keys[j] = keys[j], keys[i]
				i++
				j--
			}
		}
		// keys[lo..j] <= pivot <= keys[i..hi], keys[j+1..i-1] == pivot.
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return
		}
	}
}

// rankKey orders pages most recent first: hi holds the last touch
// (inverted) and the prior reuse distance, then the page ID breaks ties.
type rankKey struct {
	hi   uint64
	page uint32
	i    int32
}

func (a rankKey) less(b rankKey) bool { return a.hi < b.hi || a.hi == b.hi && a.page < b.page }

// lruGrid is lru's default grid: C from 0% to 100% of the peak by 2.5%
// (41 settings, the most aggressive first; 100% never reclaims).
func lruGrid(time.Duration) []Setting {
	var out []Setting
	for ppm := int64(0); ppm <= MaxPPM; ppm += 25000 {
		out = append(out, LRU{SharePPM: ppm, Share: true})
	}
	return out
}

var (
	_ Setting  = LRU{}
	_ Capacity = LRU{}
)
