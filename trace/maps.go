package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Mapping is one memory mapping of a traced address space, as
// /proc/PID/maps lists it (docs/trace-format.md, "Mappings sidecar").
type Mapping struct {
	Window     int    // the first window in which the recorder saw it
	Space      uint32 // the trace's address space
	Start, End uint64 // byte addresses, End exclusive
	Perms      string // four characters, "rw-p"
	Offset     uint64 // file offset of Start
	Path       string // file path, "[heap]", "[stack]", ...; "" for anonymous memory
}

// Label names the mapping for a person: its path (or "[anon]") and its
// address range.
func (m Mapping) Label() string {
	p := m.Path
	if p == "" {
		p = "[anon]"
	}
	if m.Space != 0 {
		return fmt.Sprintf("%d/%s %#x-%#x", m.Space, p, m.Start, m.End)
	}
	return fmt.Sprintf("%s %#x-%#x", p, m.Start, m.End)
}

// MapsSuffix is appended to a trace's path to name its mappings sidecar:
// job.mdkt's mappings are in job.mdkt.maps.
const MapsSuffix = ".maps"

// mapsMagic is the sidecar's first line.
const mapsMagic = "mdk-maps 1"

// MaxMappings bounds the mappings a sidecar may hold (the kernel's default
// vm.max_map_count is 65530 per process).
const MaxMappings = 1 << 20

// WriteMaps writes ms in the sidecar format: the line "mdk-maps 1", then
// one line per mapping, "WINDOW SPACE START END PERMS OFFSET PATH" with
// START, END and OFFSET in hex without 0x, PATH the rest of the line (empty
// for anonymous memory).
func WriteMaps(w io.Writer, ms []Mapping) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, mapsMagic)
	for _, m := range ms {
		if err := m.validate(); err != nil {
			return err
		}
		fmt.Fprintf(bw, "%d %d %x %x %s %x", m.Window, m.Space, m.Start, m.End, m.Perms, m.Offset)
		if m.Path != "" {
			fmt.Fprintf(bw, " %s", m.Path)
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

func (m Mapping) validate() error {
	switch {
	case m.Window < 0:
		return fmt.Errorf("window %d is negative", m.Window)
	case m.End <= m.Start:
		return fmt.Errorf("mapping %#x-%#x is empty", m.Start, m.End)
	case len(m.Perms) != 4 || strings.ContainsAny(m.Perms, " \t\n"):
		return fmt.Errorf("permissions %q: want four characters such as rw-p", m.Perms)
	case strings.ContainsAny(m.Path, "\n"):
		return fmt.Errorf("path %q has a newline", m.Path)
	}
	return nil
}

// ReadMaps reads a mappings sidecar. An error names the file (name) and
// line.
func ReadMaps(r io.Reader, name string) ([]Mapping, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<16)
	var ms []Mapping
	line := 0
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, args...))
	}
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if line == 1 {
			if string(b) != mapsMagic {
				return nil, bad("want %q, the mappings sidecar's first line", mapsMagic)
			}
			continue
		}
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		f := bytes.SplitN(b, []byte(" "), 7)
		if len(f) < 6 {
			return nil, bad("want WINDOW SPACE START END PERMS OFFSET [PATH]")
		}
		var m Mapping
		win, err1 := strconv.ParseUint(string(f[0]), 10, 31)
		space, err2 := strconv.ParseUint(string(f[1]), 10, 32)
		start, err3 := strconv.ParseUint(string(f[2]), 16, 64)
		end, err4 := strconv.ParseUint(string(f[3]), 16, 64)
		off, err5 := strconv.ParseUint(string(f[5]), 16, 64)
		if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
			return nil, bad("want decimal WINDOW and SPACE, hex START, END and OFFSET: %q", b)
		}
		m = Mapping{Window: int(win), Space: uint32(space), Start: start, End: end, Perms: string(f[4]), Offset: off}
		if len(f) == 7 {
			m.Path = string(f[6])
		}
		if err := m.validate(); err != nil {
			return nil, bad("%v", err)
		}
		if len(ms) == MaxMappings {
			return nil, bad("more than %d mappings", MaxMappings)
		}
		ms = append(ms, m)
	}
	if err := sc.Err(); err != nil {
		line++
		return nil, bad("%v", err)
	}
	if line == 0 {
		return nil, fmt.Errorf("%s: empty, want %q", name, mapsMagic)
	}
	return ms, nil
}

// ReadMapsFile reads the sidecar at path; a missing file is (nil, nil).
func ReadMapsFile(path string) ([]Mapping, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadMaps(f, path)
}
