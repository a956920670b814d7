package testutil

import (
	"math/rand/v2"

	"mdk/trace"
)

// RandomTrace returns a small random trace exercising every corner of SPEC
// section 1: several address spaces, births, frees, re-births and accesses
// after frees, births of alive pages, frees of dead pages, a and b of one
// page in one window, empty windows and a `windows` count past the last
// event. Sizes stay small so that page lives overlap and repeat.
func RandomTrace(rng *rand.Rand) *trace.Trace {
	h := trace.DefaultHeader()
	W := 1 + rng.IntN(14)
	if rng.IntN(4) == 0 {
		h.Windows = W + rng.IntN(4)
	}
	nPages := 1 + rng.IntN(12)
	pages := make([]trace.Page, nPages)
	for i := range pages {
		pages[i] = trace.Page{Space: uint32(rng.IntN(3)), Page: uint64(rng.IntN(40))}
	}
	pAccess := rng.Float64()
	pBirth := rng.Float64() * 0.3
	pFree := rng.Float64() * 0.3
	b := trace.NewBuilder(h)
	for w := 0; w < W; w++ {
		if rng.IntN(6) == 0 {
			continue // an empty window
		}
		for _, p := range pages {
			if rng.Float64() < pAccess {
				b.Add(w, trace.Access, p)
			}
			if rng.Float64() < pBirth {
				b.Add(w, trace.Birth, p)
			}
			if rng.Float64() < pFree {
				b.Add(w, trace.Free, p)
			}
		}
	}
	return b.Trace()
}
