package collect

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mdk/trace"
)

// windowSets reads every window of r and returns, per window, the sorted
// page numbers accessed. It also checks the Reader contract: consecutive
// indices, distinct IDs, IDs announced before use.
func windowSets(t testing.TB, r trace.Reader) ([][]uint64, error) {
	t.Helper()
	var out [][]uint64
	announced := 0
	for {
		w, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if w.Index != len(out) {
			t.Fatalf("window index %d, want %d", w.Index, len(out))
		}
		announced += len(w.New)
		pages := r.Pages()
		if len(pages) != announced {
			t.Fatalf("window %d: Pages() has %d, %d announced", w.Index, len(pages), announced)
		}
		seen := map[uint32]bool{}
		var set []uint64
		for _, id := range w.Accessed {
			if int(id) >= announced || seen[id] {
				t.Fatalf("window %d: bad or duplicate id %d", w.Index, id)
			}
			seen[id] = true
			set = append(set, pages[id].Page)
		}
		if len(w.Born)+len(w.Freed) != 0 {
			t.Fatalf("window %d: lackey trace has births or frees", w.Index)
		}
		sort.Slice(set, func(i, j int) bool { return set[i] < set[j] })
		out = append(out, set)
	}
}

// oracleSets is an independent, slow reading of a lackey log: per window of
// n instructions, the sorted set of pages touched.
func oracleSets(t testing.TB, log string, n int64) [][]uint64 {
	t.Helper()
	var out []map[uint64]bool
	var instrs int64
	cur := -1
	for _, line := range strings.Split(log, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || len(f[0]) != 1 || !strings.Contains("ILSM", f[0]) {
			continue
		}
		as, ss, _ := strings.Cut(f[1], ",")
		addr, err1 := strconv.ParseUint(as, 16, 64)
		size, err2 := strconv.ParseUint(ss, 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("oracle: bad line %q", line)
		}
		if f[0] == "I" {
			instrs++
		}
		w := 0
		if instrs > 0 {
			w = int((instrs - 1) / n)
		}
		for cur < w {
			out = append(out, map[uint64]bool{})
			cur++
		}
		for a := addr; a < addr+size; a++ {
			out[w][a/4096] = true
		}
	}
	res := make([][]uint64, len(out))
	for i, m := range out {
		for p := range m {
			res[i] = append(res[i], p)
		}
		sort.Slice(res[i], func(a, b int) bool { return res[i][a] < res[i][b] })
	}
	return res
}

func TestLackeyReader(t *testing.T) {
	const log = `==1== Lackey, an example Valgrind tool
==1== Command: ./x
==1== 
 L 00005000,8
I  00001000,3
 S 00002ffc,8
I  00001003,4
 M 00002000,4
I  00001ffe,4
I  00003000,2
 L 00002000,1
--1-- some debug line
I  00003002,2

==1== Exit code:       0
`
	tests := []struct {
		n    int64
		want [][]uint64
	}{
		// window 0: the leading load, instructions 1-2 and their data.
		{2, [][]uint64{{1, 2, 3, 5}, {1, 2, 3}, {3}}},
		{3, [][]uint64{{1, 2, 3, 5}, {2, 3}}},
		{1, [][]uint64{{1, 2, 3, 5}, {1, 2}, {1, 2}, {2, 3}, {3}}},
		{100, [][]uint64{{1, 2, 3, 5}}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			got, err := windowSets(t, NewLackeyReader(strings.NewReader(log), "x.log", tc.n))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("windows (-want +got):\n%s", d)
			}
			if d := cmp.Diff(oracleSets(t, log, tc.n), got); d != "" {
				t.Errorf("oracle disagrees (-oracle +got):\n%s", d)
			}
		})
	}
}

func TestLackeyReaderHeaderAndEmpty(t *testing.T) {
	r := NewLackeyReader(strings.NewReader("==1== nothing\n"), "e.log", 1000)
	h := r.Header()
	if h.PageSize != 4096 || h.Window != 1000 || !strings.Contains(h.Source, "1000 instructions") {
		t.Errorf("header %+v", h)
	}
	if _, err := r.Read(); !errors.Is(err, io.EOF) {
		t.Errorf("empty log: got %v, want io.EOF", err)
	}
	if _, err := NewLackeyReader(strings.NewReader(""), "e.log", 0).Read(); err == nil || !strings.Contains(err.Error(), "at least 1 instruction") {
		t.Errorf("window 0: got %v", err)
	}
}

func TestLackeyReaderErrors(t *testing.T) {
	tests := []struct {
		name, log, want string
		unexpectedEOF   bool
	}{
		{"garbage", "I  1000,4\nhello world\n", "x:2: expected \"I  addr,size\"", false},
		{"no comma", "I  1000,4\nI  1000 4\n", "x:2: expected ',' after the address", false},
		{"bad hex", " L zz,4\n", "x:1: expected a hexadecimal address", false},
		{"no size", " S 1000,\n", "x:1: expected a decimal size", false},
		{"zero size", " S 1000,0\n", "x:1: access size must be at least 1", false},
		{"huge size", " S 1000,99999999\n", "x:1: access size larger than", false},
		{"overflow", "I  10000000000000000,4\n", "x:1: address does not fit in 64 bits", false},
		{"wrap", "I  ffffffffffffffff,2\n", "x:1: access runs past the end", false},
		{"trailing", "I  1000,4 x\n", "x:1: unexpected text after the size", false},
		{"truncated", "I  1000,4\nI  10", "x:2: last line has no newline", true},
		{"short", "I  1000,4\nI\n", "x:2: expected", false},
		{"bad chatter", "==12 hello\n", "x:1: expected", false},
		{"long", "I  1000,4\n" + strings.Repeat("0", 70000) + "\n", "x:2: line longer than", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := windowSets(t, NewLackeyReader(strings.NewReader(tc.log), "x", 1))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("got error %v, want prefix %q", err, tc.want)
			}
			if errors.Is(err, io.ErrUnexpectedEOF) != tc.unexpectedEOF {
				t.Errorf("errors.Is(err, io.ErrUnexpectedEOF) = %v", !tc.unexpectedEOF)
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Errorf("error is %T, want *SyntaxError", err)
			}
		})
	}
}

// TestLackeyReaderErrorKeepsPrefix checks that the windows before a bad line
// come out intact.
func TestLackeyReaderErrorKeepsPrefix(t *testing.T) {
	log := "I  1000,4\nI  2000,4\nI  3000,4\nbad\n"
	got, err := windowSets(t, NewLackeyReader(strings.NewReader(log), "x", 1))
	if err == nil || !strings.HasPrefix(err.Error(), "x:4:") {
		t.Fatalf("got %v", err)
	}
	if d := cmp.Diff([][]uint64{{1}, {2}}, got); d != "" {
		t.Errorf("prefix (-want +got):\n%s", d)
	}
}

// lackeyLog runs prog under lackey and returns its log.
func lackeyLog(t testing.TB, prog ...string) string {
	t.Helper()
	vg := requireValgrind(t)
	log := filepath.Join(t.TempDir(), "lackey.log")
	args := append([]string{"--tool=lackey", "--trace-mem=yes", "--log-file=" + log}, prog...)
	if out, err := exec.Command(vg, args...).CombinedOutput(); err != nil {
		t.Fatalf("valgrind: %v\n%s", err, out)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// guestInstrs returns the "guest instrs" count of lackey's summary, an
// independent count of the instructions it traced.
func guestInstrs(t testing.TB, log string) int64 {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		if _, v, ok := strings.Cut(sc.Text(), "guest instrs:"); ok {
			n, err := strconv.ParseInt(strings.ReplaceAll(strings.TrimSpace(v), ",", ""), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no guest instrs line in the lackey summary")
	return 0
}

// TestLackeyReaderRealLog reads lackey's log of /bin/true and checks it
// against the oracle and against lackey's own instruction count.
func TestLackeyReaderRealLog(t *testing.T) {
	log := lackeyLog(t, "/bin/true")
	instrs := guestInstrs(t, log)
	const n = 10000
	lr := NewLackeyReader(strings.NewReader(log), "true.log", n)
	got, err := windowSets(t, lr)
	if err != nil {
		t.Fatal(err)
	}
	if want := int((instrs + n - 1) / n); len(got) != want {
		t.Errorf("%d windows, want ceil(%d/%d) = %d", len(got), instrs, n, want)
	}
	if d := cmp.Diff(oracleSets(t, log, n), got); d != "" {
		t.Errorf("oracle disagrees (-oracle +got):\n%s", d)
	}
}
