package agent

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mdk/policy"
)

// TestMemoryOf: alive and saved pages in bytes, net = rss + zram, net saved
// = swap - zram, the integer means, the last window; a window whose
// targets' memory is unknown makes rss, swap and net unknown in the mean.
func TestMemoryOf(t *testing.T) {
	rows := []Row{
		{Saved: 0, RSS: 40 << 20, Swap: 0, ZramMem: 0},
		{Saved: 1000, RSS: 36 << 20, Swap: 4000 * 4096, ZramMem: 1 << 20},
		{Saved: 3000, RSS: 28 << 20, Swap: 12000 * 4096, ZramMem: 3 << 20},
	}
	m := memoryOf(rows, []int64{10000, 10000, 10001}, 4096)
	want := []MemoryWindow{
		{Window: 0, Alive: 10000 * 4096, RSS: 40 << 20, Net: 40 << 20},
		{Window: 1, Alive: 10000 * 4096, RSS: 36 << 20, Swap: 4000 * 4096, Zram: 1 << 20, Net: 37 << 20, Saved: 1000 * 4096, NetSaved: 4000*4096 - 1<<20},
		{Window: 2, Alive: 10001 * 4096, RSS: 28 << 20, Swap: 12000 * 4096, Zram: 3 << 20, Net: 31 << 20, Saved: 3000 * 4096, NetSaved: 12000*4096 - 3<<20},
	}
	if diff := cmp.Diff(want, m.Windows); diff != "" {
		t.Errorf("windows (-want +got):\n%s", diff)
	}
	mean := MemoryWindow{Window: 3, Alive: (30001 * 4096) / 3, RSS: (104 << 20) / 3, Swap: 16000 * 4096 / 3, Zram: (4 << 20) / 3,
		Net: (108 << 20) / 3, Saved: 4000 * 4096 / 3, NetSaved: (16000*4096 - 4<<20) / 3}
	if m.Mean != mean || m.Last != want[2] || !m.Known {
		t.Errorf("mean %+v last %+v known %v; want %+v, %+v, true", m.Mean, m.Last, m.Known, mean, want[2])
	}
	rows[1].RSS, rows[1].Swap = -1, -1
	m = memoryOf(rows, []int64{10000, 10000, 10001}, 4096)
	if m.Known || m.Windows[1].Net != -1 || m.Windows[1].NetSaved != -1 || m.Mean.NetSaved != -1 || m.Mean.RSS != -1 || m.Mean.Swap != -1 || m.Mean.Net != -1 || m.Mean.Zram != (4<<20)/3 {
		t.Errorf("a window unknown: %+v", m)
	}
	var b bytes.Buffer
	m.WriteText(&b)
	if !strings.Contains(b.String(), "n/a") || !strings.Contains(b.String(), "did not record the targets' memory") {
		t.Errorf("text:\n%s", b.String())
	}
}

// TestCompareMemory: mdk agent compare carries measured.csv's rss_bytes,
// swap_bytes and zram_mem_bytes into its memory table, in every format
// (the CSV's columns after the comparison's own, the JSON's "memory", the
// text's table in MiB), also --predicted-from; a run without the columns
// (an older mdk's) has them unknown.
func TestCompareMemory(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	tr := randomAccessTrace(rng, 300, 8, 0)
	dir := writeRunFrom(t, rng, tr, "age:A=1")
	path := filepath.Join(dir, MeasuredFile)
	f, _ := os.Open(path)
	rows, err := ReadMeasured(f, path)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var m strings.Builder
	m.WriteString(strings.Join(Columns(), ",") + "\n")
	for w := range rows {
		rows[w].RSS, rows[w].Swap, rows[w].ZramMem = int64(50-w)<<20, int64(w)<<20, int64(w)<<18
		m.WriteString(strings.Join(rows[w].csvRecord(), ",") + "\n")
	}
	os.WriteFile(path, []byte(m.String()), 0o644)

	ss, err := policy.Parse("age:A=1", tr.Header.Window)
	if err != nil {
		t.Fatal(err)
	}
	setting := ss[0]
	c, err := Compare(dir, setting)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Memory.Known || len(c.Memory.Windows) != 8 {
		t.Fatalf("memory %+v", c.Memory)
	}
	for w, d := range c.Memory.Windows {
		if d.RSS != int64(50-w)<<20 || d.Swap != int64(w)<<20 || d.Zram != int64(w)<<18 || d.Net != d.RSS+d.Zram || d.NetSaved != d.Swap-d.Zram ||
			d.Saved != rows[w].Saved*4096 || d.Alive != c.Predicted.AlivePerWindow[w]*4096 {
			t.Errorf("window %d: %+v", w, d)
		}
	}
	var b bytes.Buffer
	if err := c.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.Index(recs[0], "rss_bytes")
	if i < 0 || recs[0][i+1] != "swap_bytes" || recs[3][i] != strconv.FormatInt(48<<20, 10) {
		t.Errorf("CSV header %q, window 2 %q", recs[0], recs[3])
	}
	b.Reset()
	c.WriteText(&b)
	if !strings.Contains(b.String(), "memory as the kernel counts it") || !strings.Contains(b.String(), "48.0") {
		t.Errorf("text lacks the memory table:\n%s", b.String())
	}
	p, err := ComparePredicted(dir, "rec", tr, setting)
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	p.WriteJSON(&b)
	var got struct{ Memory Memory }
	if err := json.Unmarshal(b.Bytes(), &got); err != nil || !cmp.Equal(got.Memory, c.Memory) {
		t.Errorf("predicted JSON's memory %+v, %v; want the comparison's", got.Memory, err)
	}

	// An older run: no rss_bytes or swap_bytes column.
	var old strings.Builder
	cols := Columns()
	keep := func(s []string) []string {
		var out []string
		for j, v := range s {
			if cols[j] != "rss_bytes" && cols[j] != "swap_bytes" {
				out = append(out, v)
			}
		}
		return out
	}
	old.WriteString(strings.Join(keep(cols), ",") + "\n")
	for w := range rows {
		old.WriteString(strings.Join(keep(rows[w].csvRecord()), ",") + "\n")
	}
	os.WriteFile(path, []byte(old.String()), 0o644)
	c, err = Compare(dir, setting)
	if err != nil {
		t.Fatal(err)
	}
	if c.Memory.Known || c.Memory.Windows[3].RSS != -1 || c.Memory.Windows[3].Zram != 3<<18 {
		t.Errorf("older run's memory %+v", c.Memory)
	}
}
