package vmtest

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
)

// initramfs is the content of a guest's initial RAM filesystem: directories,
// files (from the host or in memory) and symbolic links, by guest path.
type initramfs struct {
	dirs  map[string]bool
	files map[string]fileSrc
	links map[string]string
}

type fileSrc struct {
	host string // host file to copy, or
	data []byte // contents
	mode uint32 // permission bits
}

func newInitramfs() *initramfs {
	return &initramfs{dirs: map[string]bool{}, files: map[string]fileSrc{}, links: map[string]string{}}
}

func (r *initramfs) mkdirAll(p string) {
	for p = path.Clean(p); p != "/" && p != "."; p = path.Dir(p) {
		r.dirs[p] = true
	}
}

func (r *initramfs) addFile(guest string, src fileSrc) {
	guest = path.Clean("/" + guest)
	r.mkdirAll(path.Dir(guest))
	r.files[guest] = src
}

// write writes the filesystem as a gzip-compressed cpio archive in the
// "newc" format the kernel unpacks (Documentation/driver-api/early-userspace/buffer-format.rst).
func (r *initramfs) write(w io.Writer) error {
	zw := gzip.NewWriter(w)
	ino := uint32(1)
	hdr := func(name string, mode uint32, size int) error {
		ino++
		_, err := fmt.Fprintf(zw, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
			ino, mode, 0, 0, 1, 0, size, 0, 0, 0, 0, len(name)+1, 0)
		if err == nil {
			_, err = io.WriteString(zw, name+"\x00")
		}
		if err == nil {
			err = pad(zw, 110+len(name)+1)
		}
		return err
	}
	var names []string
	for d := range r.dirs {
		names = append(names, d)
	}
	sort.Strings(names) // parents before children
	for _, d := range names {
		if err := hdr(strings.TrimPrefix(d, "/"), 0o040755, 0); err != nil {
			return err
		}
	}
	names = names[:0]
	for f := range r.files {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		src := r.files[f]
		data := src.data
		if src.host != "" {
			var err error
			if data, err = os.ReadFile(src.host); err != nil {
				return err
			}
		}
		mode := src.mode
		if mode == 0 {
			mode = 0o644
		}
		if err := hdr(strings.TrimPrefix(f, "/"), 0o100000|mode, len(data)); err != nil {
			return err
		}
		if _, err := zw.Write(data); err != nil {
			return err
		}
		if err := pad(zw, len(data)); err != nil {
			return err
		}
	}
	names = names[:0]
	for l := range r.links {
		names = append(names, l)
	}
	sort.Strings(names)
	for _, l := range names {
		target := r.links[l]
		if err := hdr(strings.TrimPrefix(l, "/"), 0o120777, len(target)); err != nil {
			return err
		}
		if _, err := io.WriteString(zw, target); err != nil {
			return err
		}
		if err := pad(zw, len(target)); err != nil {
			return err
		}
	}
	if err := hdr("TRAILER!!!", 0, 0); err != nil {
		return err
	}
	return zw.Close()
}

// pad writes the zero bytes that align an n-byte field to 4 bytes.
func pad(w io.Writer, n int) error {
	if k := (4 - n%4) % 4; k > 0 {
		_, err := w.Write(make([]byte, k))
		return err
	}
	return nil
}
