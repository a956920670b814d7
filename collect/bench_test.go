package collect

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"mdk/internal/testutil"

	"mdk/linux"
)

// BenchmarkRecorderScan measures one scan (maps + pagemap read, idle bits
// read back and re-marked, comparison with the previous scan) of a process
// with the given number of present pages, on the fake tree with a plain
// bitmap file.
func BenchmarkRecorderScan(b *testing.B) {
	for _, pages := range []int{1 << 16, 1 << 20} {
		b.Run(fmt.Sprintf("pages=%d", pages), func(b *testing.B) {
			root := b.TempDir()
			proc, sys := filepath.Join(root, "proc"), filepath.Join(root, "sys")
			os.MkdirAll(filepath.Join(proc, "1"), 0o755)
			os.MkdirAll(filepath.Join(sys, "kernel/mm/page_idle"), 0o755)
			// Four mappings; frames spread like a real machine's (random, 16 GiB).
			const maxPFN = 4 << 20
			rng := testutil.Rand(1)
			var maps bytes.Buffer
			pm := make([]byte, 0, (pages+0x1000)*8)
			vpn := uint64(0x1000)
			pm = append(pm, make([]byte, vpn*8)...)
			for m := 0; m < 4; m++ {
				n := pages / 4
				fmt.Fprintf(&maps, "%x-%x rw-p 00000000 00:00 0\n", vpn*4096, (vpn+uint64(n))*4096)
				for i := 0; i < n; i++ {
					pm = binary.NativeEndian.AppendUint64(pm, linux.PagemapPresent|(1+rng.Uint64N(maxPFN-1)))
				}
				vpn += uint64(n)
			}
			os.WriteFile(filepath.Join(proc, "1/maps"), maps.Bytes(), 0o644)
			os.WriteFile(filepath.Join(proc, "1/pagemap"), pm, 0o644)
			os.WriteFile(filepath.Join(sys, "kernel/mm/page_idle/bitmap"), make([]byte, maxPFN/8), 0o644)
			r, err := NewRecorder(Options{FS: linux.NewFS(proc, sys), PIDs: []int{1}, Window: 1})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			// Scans 0 and 1 announce every page; measure the steady state.
			for k := range 2 {
				if _, err := r.scan(k); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			k := 2
			for b.Loop() {
				if _, err := r.scan(k); err != nil {
					b.Fatal(err)
				}
				k++
			}
			perScan := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(perScan*1e3*float64(1<<20)/float64(pages), "ms/Mpages")
			b.ReportMetric(float64(pages)*float64(b.N)/b.Elapsed().Seconds(), "pages/s")
		})
	}
}

// syntheticLackey returns a lackey log of about n lines shaped like a real
// one: runs of instruction fetches through a few code pages, loads and
// stores on a stack and a heap, some chatter.
func syntheticLackey(n int) []byte {
	rng := testutil.Rand(2)
	var b bytes.Buffer
	b.WriteString("==1== Lackey, an example Valgrind tool\n==1== Command: synthetic\n")
	pc := uint64(0x401000)
	for i := 0; i < n; i++ {
		if rng.IntN(3) == 0 {
			kind := "LSM"[rng.IntN(3)]
			addr := uint64(0x1fff000000) + rng.Uint64N(1<<14)
			if rng.IntN(4) == 0 {
				addr = 0x4a00000 + rng.Uint64N(1<<24)
			}
			b.WriteString(" ")
			b.WriteByte(kind)
			b.WriteString(" ")
			b.WriteString(strconv.FormatUint(addr, 16))
			b.WriteString(",8\n")
			continue
		}
		pc += 1 + rng.Uint64N(7)
		if rng.IntN(50) == 0 {
			pc = 0x401000 + rng.Uint64N(1<<20)
		}
		fmt.Fprintf(&b, "I  %08x,%d\n", pc, 1+rng.IntN(7))
	}
	b.WriteString("==1== Exit code:       0\n")
	return b.Bytes()
}

// BenchmarkLackeyReader measures lackey log ingestion.
func BenchmarkLackeyReader(b *testing.B) {
	const lines = 1 << 20
	data := syntheticLackey(lines)
	lr := NewLackeyReader(bytes.NewReader(data), "bench", 1_000_000).(*LackeyReader)
	br := bytes.NewReader(data)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		br.Reset(data)
		lr.Reset(br, "bench", 1_000_000)
		for {
			_, err := lr.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

// TestLackeyReaderAllocs pins the steady state: after a first pass has
// built the page table, re-reading the same log allocates only per window.
func TestLackeyReaderAllocs(t *testing.T) {
	data := syntheticLackey(100000)
	lr := NewLackeyReader(bytes.NewReader(data), "a", 10000).(*LackeyReader)
	br := bytes.NewReader(data)
	read := func() {
		br.Reset(data)
		lr.Reset(br, "a", 10000)
		for {
			if _, err := lr.Read(); err != nil {
				return
			}
		}
	}
	read()
	if a := testing.AllocsPerRun(5, read); a > 200 {
		t.Errorf("%v allocations for 100000 lines", a)
	}
}
