//go:build !linux

package trace

// stateMem is the heap elsewhere: grow always refuses.
type stateMem struct{}

func (m *stateMem) grow(n int) ([]byte, bool) { return nil, false }
func (m *stateMem) release()                  {}

func words[S uint32 | uint64](b []byte, n int) []S { return nil }
