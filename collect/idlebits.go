package collect

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"mdk/linux"
)

// markAndRead sets r.want to the idle-bitmap bits of every present page,
// reads those words back into r.got (if read), and writes r.want to mark
// the pages idle. Words are read and written in runs; a run also covers
// gaps of up to runGap words, which cost less than a separate system call
// (zero bits in a write change nothing).
func (r *Recorder) markAndRead(read bool) error {
	clear(r.want)
	var maxWord uint64
	any := false
	for _, s := range r.spaces {
		for _, e := range s.cur {
			if e.pme&linux.PagemapPresent == 0 {
				continue
			}
			pfn := e.pme & linux.PagemapPFNMask
			w := pfn / 64
			if w >= uint64(len(r.want)) {
				n := max(w+1, uint64(len(r.want))*5/4)
				r.want = slices.Grow(r.want, int(n)-len(r.want))[:n]
				r.got = slices.Grow(r.got, int(n)-len(r.got))[:n]
			}
			r.want[w] |= 1 << (pfn % 64)
			maxWord = max(maxWord, w)
			any = true
		}
	}
	if !any {
		return nil
	}
	const runGap = 64
	const maxRun = 1 << 17 // words per system call (1 MiB)
	words := r.want[:maxWord+1]
	for i := 0; i < len(words); {
		if words[i] == 0 {
			i++
			continue
		}
		j, last := i, i // [i, last] holds the run's non-zero words
		for j = i + 1; j < len(words) && j-i < maxRun && j-last <= runGap; j++ {
			if words[j] != 0 {
				last = j
			}
		}
		if err := r.run(uint64(i), uint64(last+1), read); err != nil {
			return err
		}
		i = last + 1
	}
	return nil
}

// run reads back and marks the bitmap words [lo, hi).
func (r *Recorder) run(lo, hi uint64, read bool) error {
	n := int(hi-lo) * 8
	if cap(r.io) < n {
		r.io = make([]byte, n)
	}
	b := r.io[:n]
	off := int64(lo * 8)
	name := r.opt.FS.BitmapPath()
	if read {
		got, err := r.bitmap.ReadAt(b, off)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read %s at byte %d: %w", name, off, err)
		}
		if got < n-8 || got < n && !r.partialLastWord(hi-1) {
			return fmt.Errorf("%w: %s: short read at byte %d (%d of %d bytes): page frame beyond the kernel's last", linux.ErrFormat, name, off, got, n)
		}
		clear(b[got:]) // the partial last word reads as all accessed
		for i := range hi - lo {
			r.got[lo+i] = binary.NativeEndian.Uint64(b[i*8:])
		}
	}
	for i := range hi - lo {
		binary.NativeEndian.PutUint64(b[i*8:], r.want[lo+i])
	}
	if _, err := r.bitmap.WriteAt(b, off); err != nil {
		// The kernel marks the frames of a partial last word but does not
		// count the word as written: the write of that word returns 0, which
		// os.File.WriteAt reports as io.ErrUnexpectedEOF (and a count of 0
		// for the whole call, however much was written before).
		if !(errors.Is(err, io.ErrUnexpectedEOF) && r.partialLastWord(hi-1)) {
			return fmt.Errorf("write %s at byte %d: %w", name, off, err)
		}
	}
	return nil
}

// partialLastWord reports whether bitmap word w may be the kernel's partial
// last word: when the number of page frames (max_pfn) is not a multiple of
// 64, the kernel's page_idle_bitmap_read and _write handle the frames of the
// last, partial 64-frame word but return only the bytes of whole words, so
// that word's idle bits cannot be read back. Only the highest word holding
// a present page can be it; its pages read as accessed in every window,
// which the recorder logs once.
func (r *Recorder) partialLastWord(w uint64) bool {
	if w+1 != uint64(len(r.want)) && slices.ContainsFunc(r.want[w+1:], func(x uint64) bool { return x != 0 }) {
		return false
	}
	if !r.partialWarned {
		r.partialWarned = true
		fmt.Fprintf(r.opt.Log, "mdk record: warning: page frames %d-%d are in the kernel's partial last idle-bitmap word, whose bits it does not return: their pages are reported accessed in every window\n", w*64, w*64+63)
	}
	return true
}
