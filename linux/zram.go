package linux

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ZramStat is /sys/block/zramN/mm_stat (Documentation/admin-guide/blockdev/zram.rst),
// one line of space-separated counters:
//
//	orig_data_size compr_data_size mem_used_total mem_limit mem_used_max same_pages pages_compacted huge_pages huge_pages_since
//	    69632        4096          389120         0         389120       15         0               0          0
//
// Sizes are in bytes, pages are counts. Older kernels print fewer fields;
// the first six are required.
type ZramStat struct {
	OrigDataBytes  int64 // uncompressed size of the data stored
	ComprDataBytes int64 // compressed size of the data stored
	MemUsedBytes   int64 // memory the device allocated, overhead included
	SamePages      int64 // pages filled with one value, stored without memory
	HugePages      int64 // incompressible pages, stored uncompressed (0 when not printed)
}

// ParseZramStat parses the text of mm_stat; name is used in errors, which
// give the field.
func ParseZramStat(b []byte, name string) (ZramStat, error) {
	f := strings.Fields(string(b))
	if len(f) < 6 {
		return ZramStat{}, fmt.Errorf("%w: %s: expected at least 6 numbers, got %d", ErrFormat, name, len(f))
	}
	v := make([]int64, len(f))
	for i, s := range f {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return ZramStat{}, fmt.Errorf("%w: %s: field %d: expected a non-negative integer, got %q", ErrFormat, name, i+1, s)
		}
		v[i] = n
	}
	z := ZramStat{OrigDataBytes: v[0], ComprDataBytes: v[1], MemUsedBytes: v[2], SamePages: v[5]}
	if len(v) >= 8 {
		z.HugePages = v[7]
	}
	return z, nil
}

// ZramStat reads the mm_stat of the zram device dev ("zram1").
func (fsys FS) ZramStat(dev string) (ZramStat, error) {
	path := filepath.Join(fsys.Sys, "block", dev, "mm_stat")
	b, err := os.ReadFile(path)
	if err != nil {
		return ZramStat{}, err
	}
	return ParseZramStat(b, path)
}

// ZramControl returns the directory of zram's hot_add and hot_remove.
func (fsys FS) ZramControl() string { return filepath.Join(fsys.Sys, "class/zram-control") }

// ZramHotAdd creates a zram device (reading hot_add) and returns its
// number N (/dev/zramN). The error wraps ErrNotSupported when the zram
// module is not loaded.
func (fsys FS) ZramHotAdd() (int, error) {
	path := filepath.Join(fsys.ZramControl(), "hot_add")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("%w: no %s (is the zram module loaded? modprobe zram)", ErrNotSupported, fsys.ZramControl())
	}
	if err != nil {
		return 0, fmt.Errorf("zram hot_add: %w", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: %s printed %q, want a device number", ErrFormat, path, b)
	}
	return n, nil
}

// ZramHotRemove removes zram device n (writing hot_remove).
func (fsys FS) ZramHotRemove(n int) error {
	return writeFile(filepath.Join(fsys.ZramControl(), "hot_remove"), strconv.Itoa(n))
}

func (fsys FS) zramFile(n int, name string) string {
	return filepath.Join(fsys.Sys, "block", "zram"+strconv.Itoa(n), name)
}

// ZramSetAlgorithm sets the compressor of zram device n (before its size).
func (fsys FS) ZramSetAlgorithm(n int, algo string) error {
	return writeFile(fsys.zramFile(n, "comp_algorithm"), algo)
}

// ZramAlgorithm returns the compressor zram device n uses: the bracketed
// one of comp_algorithm ("lzo [lzo-rle] lz4"), "" if none is.
func (fsys FS) ZramAlgorithm(n int) (string, error) {
	b, err := os.ReadFile(fsys.zramFile(n, "comp_algorithm"))
	if err != nil {
		return "", err
	}
	for _, f := range strings.Fields(string(b)) {
		if strings.HasPrefix(f, "[") {
			return strings.Trim(f, "[]"), nil
		}
	}
	return "", nil
}

// ZramSetDisksize sets the size of zram device n, in bytes.
func (fsys FS) ZramSetDisksize(n int, bytes int64) error {
	return writeFile(fsys.zramFile(n, "disksize"), strconv.FormatInt(bytes, 10))
}

// ZswapEnabled reports whether zswap is on
// (/sys/module/zswap/parameters/enabled is "Y"); false when not built.
func (fsys FS) ZswapEnabled() bool {
	s, err := readString(filepath.Join(fsys.Sys, "module/zswap/parameters/enabled"))
	return err == nil && s == "Y"
}
