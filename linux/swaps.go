package linux

import (
	"fmt"

	"github.com/prometheus/procfs"
)

// Swap is one line of /proc/swaps, sizes in bytes:
//
//	Filename				Type		Size		Used		Priority
//	/dev/zram1                              partition	65532		0		100
type Swap struct {
	Filename  string // as the kernel writes it (spaces escaped as \040)
	Type      string // "partition" or "file"
	SizeBytes int64
	UsedBytes int64
	Priority  int
}

// FreeBytes is the swap space still free.
func (s Swap) FreeBytes() int64 { return s.SizeBytes - s.UsedBytes }

// Swaps reads /proc/swaps with prometheus/procfs.
func (fsys FS) Swaps() ([]Swap, error) {
	p, err := procfs.NewFS(fsys.Proc)
	if err != nil {
		return nil, err
	}
	sw, err := p.Swaps()
	if err != nil {
		return nil, fmt.Errorf("%w: %s/swaps: %v", ErrFormat, fsys.Proc, err)
	}
	out := make([]Swap, 0, len(sw))
	for _, s := range sw {
		if s.Size < 0 || s.Used < 0 || s.Used > s.Size {
			return nil, fmt.Errorf("%w: %s/swaps: %s: size %d KiB, used %d KiB", ErrFormat, fsys.Proc, s.Filename, s.Size, s.Used)
		}
		out = append(out, Swap{Filename: s.Filename, Type: s.Type, SizeBytes: int64(s.Size) << 10, UsedBytes: int64(s.Used) << 10, Priority: s.Priority})
	}
	return out, nil
}

// SwapFree returns the free bytes of every swap device together.
func (fsys FS) SwapFree() (int64, error) {
	sw, err := fsys.Swaps()
	if err != nil {
		return 0, err
	}
	var free int64
	for _, d := range sw {
		free += d.FreeBytes()
	}
	return free, nil
}

// CheckSwap returns ErrNoSwap when no swap device is active.
func (fsys FS) CheckSwap() error {
	sw, err := fsys.Swaps()
	if err != nil {
		return fmt.Errorf("read swaps: %w", err)
	}
	for _, d := range sw {
		if d.SizeBytes > 0 {
			return nil
		}
	}
	return ErrNoSwap
}
