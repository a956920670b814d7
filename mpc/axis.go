package mpc

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"mdk/trace"
)

// tableSize bounds the lookup tables that map a gap's idle length or prior
// reuse distance to a position on a parameter axis in O(1); larger values
// fall back to binary search.
const tableSize = 1 << 12

// intAxis is the sorted distinct values of one integer parameter (windows;
// trace.Inf allowed).
type intAxis struct {
	vals  []int
	le    []int32 // le[v] = #{x <= v} for 0 <= v < tableSize
	lt    []int32 // lt[v] = #{x < v}
	ltInf int     // #{x < trace.Inf}: the class of a life's first touch
}

// An intAxis is never changed once built, so the engines of the streams of
// one run (a sampled run's 11, for one) share the axes of the same values:
// axisCache holds the last axesCached built, by their values.
var axisCache struct {
	sync.Mutex
	m map[string]*intAxis
}

const axesCached = 64

// newIntAxis returns the axis of xs's distinct values, shared with any
// other of the same values.
func newIntAxis(xs []int) *intAxis {
	vals := slices.Clone(xs)
	slices.Sort(vals)
	vals = slices.Compact(vals)
	var key strings.Builder
	for _, v := range vals {
		key.WriteString(strconv.Itoa(v))
		key.WriteByte(',')
	}
	axisCache.Lock()
	defer axisCache.Unlock()
	if a, ok := axisCache.m[key.String()]; ok {
		return a
	}
	if len(axisCache.m) >= axesCached || axisCache.m == nil {
		axisCache.m = map[string]*intAxis{}
	}
	a := buildIntAxis(vals)
	axisCache.m[key.String()] = a
	return a
}

// buildIntAxis builds the axis of vals, sorted and distinct.
func buildIntAxis(vals []int) *intAxis {
	a := &intAxis{vals: vals, le: make([]int32, tableSize), lt: make([]int32, tableSize)}
	// One walk along the sorted values: le counts those <= v, lt those < v.
	le, lt := 0, 0
	for v := 0; v < tableSize; v++ {
		for lt < len(vals) && vals[lt] < v {
			lt++
		}
		for le < len(vals) && vals[le] <= v {
			le++
		}
		a.le[v], a.lt[v] = int32(le), int32(lt)
	}
	a.ltInf = a.searchLT(trace.Inf)
	return a
}

func (a *intAxis) searchLE(v int) int {
	return sort.Search(len(a.vals), func(i int) bool { return a.vals[i] > v })
}
func (a *intAxis) searchLT(v int) int {
	return sort.Search(len(a.vals), func(i int) bool { return a.vals[i] >= v })
}

// countLE returns #{x <= v}.
func (a *intAxis) countLE(v int) int {
	if v >= 0 && v < tableSize {
		return int(a.le[v])
	}
	if v < 0 {
		return 0
	}
	return a.searchLE(v)
}

// countLT returns #{x < v}.
func (a *intAxis) countLT(v int) int {
	if v >= 0 && v < tableSize {
		return int(a.lt[v])
	}
	if v == trace.Inf {
		return a.ltInf
	}
	if v < 0 {
		return 0
	}
	return a.searchLT(v)
}

// index returns the position of x in the axis.
func (a *intAxis) index(x int) int { return a.searchLT(x) }

// floatAxis is the sorted distinct values of a real parameter.
type floatAxis struct {
	vals []float64
	le   []int32 // le[v+1] = #{x <= v} for integer -1 <= v < tableSize-1
}

func newFloatAxis(xs []float64) *floatAxis {
	vals := slices.Clone(xs)
	slices.Sort(vals)
	vals = slices.Compact(vals)
	a := &floatAxis{vals: vals, le: make([]int32, tableSize)}
	le := 0 // #{x <= v}, along the sorted values
	nan := slices.ContainsFunc(vals, math.IsNaN)
	for v := -1; v < tableSize-1; v++ {
		if nan { // unordered: search as countLE would
			a.le[v+1] = int32(a.searchLE(float64(v)))
			continue
		}
		for le < len(vals) && vals[le] <= float64(v) {
			le++
		}
		a.le[v+1] = int32(le)
	}
	return a
}

func (a *floatAxis) searchLE(c float64) int {
	return sort.Search(len(a.vals), func(i int) bool { return a.vals[i] > c })
}

// countLE returns #{x <= c}.
func (a *floatAxis) countLE(c float64) int {
	if c >= -1 && c < tableSize-1 {
		if i := int(c); float64(i) == c {
			return int(a.le[i+1])
		}
	}
	return a.searchLE(c)
}

func (a *floatAxis) index(x float64) int {
	return sort.Search(len(a.vals), func(i int) bool { return a.vals[i] >= x })
}
