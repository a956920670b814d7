package trace

// GapHistogram counts one window's gaps by idle length and by the class of
// their prior reuse distance, for engines that need no more than that (the
// curve generator's built-in policies). Within one window every closed gap
// ends in that window and every open gap reported there ends in the next (or
// at W, from Finish), so idle length and class describe a gap completely for
// them. A [HistWalker] counts its gaps here with no call and no Gap value per
// gap (which were most of the cost of a pass); [GapHistogram.Add] counts the
// gaps a Walker reports one by one.
type GapHistogram struct {
	classes  int
	class    func(d int) int // class of a prior reuse distance (Inf included)
	classOf  []int32         // class[d] for d < len(classOf)
	infClass int32
	closed   []int64 // [idle*classes + class]
	open     []int64
	ctouch   []int // cells of closed that are not zero
	otouch   []int
}

// GapCount is N gaps of one idle length and prior class.
type GapCount struct {
	Idle, Class int32
	N           int64
}

// NewGapHistogram returns a histogram with the given number of classes;
// class maps a prior reuse distance (trace.Inf for a life's first touch) to
// a class in [0, classes).
func NewGapHistogram(classes int, class func(d int) int) *GapHistogram {
	return &GapHistogram{classes: classes, class: class, infClass: int32(class(Inf))}
}

// Grow makes room for window w: idle lengths and prior reuse distances up
// to w. Call it before walking window w.
func (h *GapHistogram) Grow(w int) {
	for d := len(h.classOf); d <= w; d++ {
		h.classOf = append(h.classOf, int32(h.class(d)))
	}
	if need := (w + 1) * h.classes; len(h.closed) < need {
		h.closed = append(h.closed, make([]int64, need-len(h.closed))...)
		h.open = append(h.open, make([]int64, need-len(h.open))...)
	}
}

// add counts a gap of the given idle length and prior class.
func (h *GapHistogram) add(closed bool, idle, class int) {
	i := idle*h.classes + class
	if closed {
		if h.closed[i] == 0 {
			h.ctouch = append(h.ctouch, i)
		}
		h.closed[i]++
		return
	}
	if h.open[i] == 0 {
		h.otouch = append(h.otouch, i)
	}
	h.open[i]++
}

// Drain appends the counts of the closed (or open) gaps to dst, clears them,
// and returns dst.
func (h *GapHistogram) Drain(closed bool, dst []GapCount) []GapCount {
	cells, touched := h.open, &h.otouch
	if closed {
		cells, touched = h.closed, &h.ctouch
	}
	n := h.classes
	for _, i := range *touched {
		dst = append(dst, GapCount{Idle: int32(i / n), Class: int32(i % n), N: cells[i]})
		cells[i] = 0
	}
	*touched = (*touched)[:0]
	return dst
}

// Add counts g, for callers that receive gaps one by one (OnGap).
func (h *GapHistogram) Add(g Gap) {
	c := int(h.infClass)
	if g.Prior != Inf {
		c = int(h.classOf[g.Prior])
	}
	h.add(g.Closed, g.Idle, c)
}
