package linux

import "testing"

func TestRefusalOf(t *testing.T) {
	for _, tc := range []struct {
		flags, count uint64
		want         Refusal
	}{
		{1 << KPFLRU, 1, RefusedUnknown},
		{1<<KPFLRU | 1<<KPFMlocked, 1, RefusedLocked},
		{1<<KPFLRU | 1<<KPFUnevictable, 1, RefusedLocked},
		{1<<KPFLRU | 1<<KPFTHP, 1, RefusedHuge},
		{1 << KPFLRU, 2, RefusedShared},
		{0, 1, RefusedNotLRU},
	} {
		if got := RefusalOf(tc.flags, tc.count); got != tc.want {
			t.Errorf("RefusalOf(%#x, %d) = %v, want %v", tc.flags, tc.count, got, tc.want)
		}
	}
	var nilFlags *PageFlags
	if got := nilFlags.Refusal(PagemapPresent | 5); got != RefusedUnreadable {
		t.Errorf("no kpageflags: %v", got)
	}
}
