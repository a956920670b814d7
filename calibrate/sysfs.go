package calibrate

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// MMStat is a zram device's /sys/block/zramN/mm_stat (Documentation/
// admin-guide/blockdev/zram.rst), one line of space-separated counters:
//
//	orig_data_size compr_data_size mem_used_total mem_limit mem_used_max same_pages pages_compacted huge_pages huge_pages_since
//	    69632        4096          389120         0         389120       15         0               0          0
//
// Sizes are in bytes, pages are counts. Older kernels print fewer fields;
// the first six are required.
type MMStat struct {
	OrigDataSize  int64 // bytes of the pages stored, uncompressed
	ComprDataSize int64 // bytes of their compressed data
	MemUsedTotal  int64 // bytes the device uses, metadata and fragmentation included
	SamePages     int64 // pages stored as one repeated word, without compression
}

// parseMMStat parses mm_stat's contents.
func parseMMStat(b []byte) (MMStat, error) {
	f := strings.Fields(string(b))
	if len(f) < 6 {
		return MMStat{}, fmt.Errorf("mm_stat: %d fields, want at least 6: %q", len(f), bytes.TrimSpace(b))
	}
	var v [6]int64
	for i := range v {
		x, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil || x < 0 {
			return MMStat{}, fmt.Errorf("mm_stat: field %d %q: want a non-negative integer", i+1, f[i])
		}
		v[i] = x
	}
	return MMStat{OrigDataSize: v[0], ComprDataSize: v[1], MemUsedTotal: v[2], SamePages: v[5]}, nil
}

// Swap is one line of /proc/swaps:
//
//	Filename				Type		Size		Used		Priority
//	/dev/zram0                              partition	4194300		0		100
type Swap struct {
	Name     string
	Type     string
	SizeKiB  int64
	UsedKiB  int64
	Priority int
}

// parseSwaps parses /proc/swaps. The file name may contain spaces escaped
// as \040 by the kernel; they are kept as written.
func parseSwaps(b []byte) ([]Swap, error) {
	var out []Swap
	sc := bufio.NewScanner(bytes.NewReader(b))
	line := 0
	for sc.Scan() {
		line++
		if line == 1 {
			if !strings.HasPrefix(sc.Text(), "Filename") {
				return nil, fmt.Errorf("/proc/swaps: line 1: want the Filename header, got %q", sc.Text())
			}
			continue
		}
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 5 {
			return nil, fmt.Errorf("/proc/swaps: line %d: %d fields, want 5", line, len(f))
		}
		s := Swap{Name: f[0], Type: f[1]}
		var err error
		if s.SizeKiB, err = strconv.ParseInt(f[2], 10, 64); err != nil {
			return nil, fmt.Errorf("/proc/swaps: line %d: size %q: %v", line, f[2], err)
		}
		if s.UsedKiB, err = strconv.ParseInt(f[3], 10, 64); err != nil {
			return nil, fmt.Errorf("/proc/swaps: line %d: used %q: %v", line, f[3], err)
		}
		if s.Priority, err = strconv.Atoi(f[4]); err != nil {
			return nil, fmt.Errorf("/proc/swaps: line %d: priority %q: %v", line, f[4], err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}
