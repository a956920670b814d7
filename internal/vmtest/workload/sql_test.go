package workload

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sqlite3 returns the host's sqlite3 shell, skipping the test without one
// (failing under CI, whose .ci/run installs it).
func sqlite3(t *testing.T) string {
	t.Helper()
	prog, err := exec.LookPath("sqlite3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("sqlite3 is not installed (.ci/run installs it)")
		}
		t.Skip("no sqlite3 on the host")
	}
	return prog
}

// TestSQLRealShell fills a real sqlite3 shell's in-memory database and
// runs the job for 4 short windows: one database page a row (page_count
// is the rows plus a few interior pages), every answer has the rows asked
// for (Run checks them), a pass in every window and lookups in some, the
// percentiles in order.
func TestSQLRealShell(t *testing.T) {
	s := SQL{HotRows: 20, FactRows: 60, WarmRows: 50, RowSize: 3000, Period: 3, Skew: 1.2, ShiftAt: 2, Seed: 5}
	sq, err := StartSQLite(sqlite3(t))
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Stop()
	if err := s.Fill(sq); err != nil {
		t.Fatalf("%v: %s", err, sq.Stop())
	}
	var wins []SQLWindow
	if err := s.Run(sq, time.Now(), 300*time.Millisecond, 4, func(w SQLWindow) { wins = append(wins, w) }); err != nil {
		t.Fatalf("%v: %s", err, sq.Stop())
	}
	line, err := sqlShell{bufio.NewWriter(sq), bufio.NewReader(sq)}.query("PRAGMA page_count;")
	if err != nil {
		t.Fatal(err)
	}
	rows := s.HotRows + s.FactRows + s.WarmRows
	if n, err := strconv.Atoi(line); err != nil || n < rows || n > rows+12 {
		t.Errorf("page_count %q: want %d rows of one page each, and a few more", line, rows)
	}
	if len(wins) != 4 {
		t.Fatalf("%d windows", len(wins))
	}
	var ops int64
	for _, w := range wins {
		ops += w.Ops
		if w.Pass <= 0 || w.P50 > w.P99 || w.P99 > w.Max {
			t.Errorf("window %+v", w)
		}
		if !strings.HasPrefix(w.CSV(300*time.Millisecond), fmt.Sprint(w.Window, ",")) || strings.Count(w.CSV(time.Second), ",") != strings.Count(SQLHeader, ",") {
			t.Errorf("csv %q", w.CSV(300*time.Millisecond))
		}
	}
	if ops == 0 {
		t.Error("no lookup in 4 windows")
	}
}

// TestSQLShellError: a job on a shell without its tables fails (the
// shell stops at the error), with the shell's message, and does not hang.
func TestSQLShellError(t *testing.T) {
	s := SQL{FactRows: 6, WarmRows: 5, RowSize: 10, Period: 2, Skew: 1.2, ShiftAt: -1}
	sq, err := StartSQLite(sqlite3(t))
	if err != nil {
		t.Fatal(err)
	}
	err = s.Run(sq, time.Now(), 100*time.Millisecond, 2, func(SQLWindow) {})
	msg := sq.Stop()
	if err == nil || !strings.Contains(msg, "no such table") {
		t.Errorf("error %v, shell's %q: want an error and no such table", err, msg)
	}
}

var sqlScan = regexp.MustCompile(`FROM (\w+) WHERE id >= (\d+) AND id < (\d+);$`)

// fakeShell answers the job's scans like sqlite3 does (count|0) and logs
// them as "table lo hi".
func fakeShell(conn net.Conn, log *[]string) {
	defer conn.Close()
	rd := bufio.NewReader(conn)
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return
		}
		m := sqlScan.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			conn.Write([]byte("?\n"))
			continue
		}
		lo, _ := strconv.Atoi(m[2])
		hi, _ := strconv.Atoi(m[3])
		*log = append(*log, fmt.Sprint(m[1], " ", lo, " ", hi))
		fmt.Fprintf(conn, "%d|0\n", hi-lo)
	}
}

// TestSQLSchedule: window w's pass is the whole hot table and partition
// w mod Period of fact, in that order, then lookups of one warm row each;
// the most looked-up row before the shift is not the one after.
func TestSQLSchedule(t *testing.T) {
	s := SQL{HotRows: 7, FactRows: 10, WarmRows: 40, RowSize: 100, Period: 3, Skew: 1.3, ShiftAt: 2, Seed: 9}
	a, b := net.Pipe()
	var log []string
	done := make(chan struct{})
	go func() { fakeShell(b, &log); close(done) }()
	var marks []int // len(log) after each window
	err := s.Run(a, time.Now(), 150*time.Millisecond, 4, func(SQLWindow) { marks = append(marks, len(log)) })
	a.Close()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	parts := []string{"fact 0 3", "fact 3 6", "fact 6 10", "fact 0 3"}
	before, after := map[string]int{}, map[string]int{}
	from := 0
	for w, to := range marks {
		q := log[from:to]
		if len(q) < 2 || q[0] != "hot 0 7" || q[1] != parts[w] {
			t.Fatalf("window %d: queries %q, want hot 0 7, %s, lookups", w, q, parts[w])
		}
		for _, l := range q[2:] {
			var lo, hi int
			if _, err := fmt.Sscanf(l, "warm %d %d", &lo, &hi); err != nil || hi != lo+1 || lo < 0 || lo >= s.WarmRows {
				t.Fatalf("window %d: lookup %q", w, l)
			}
			if w < s.ShiftAt {
				before[l]++
			} else {
				after[l]++
			}
		}
		from = to
	}
	if len(before) == 0 || len(after) == 0 {
		t.Fatal("no lookup before or after the shift")
	}
	if topKey(before) == topKey(after) {
		t.Errorf("the most looked-up row is %s before and after the shift", topKey(before))
	}
}

// TestSQLRejects: a job without fact rows, with a period beyond them or a
// Zipf exponent of 1 is an error, not a hang.
func TestSQLRejects(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	for _, s := range []SQL{
		{FactRows: 0, WarmRows: 5, RowSize: 1, Period: 1, Skew: 1.2},
		{FactRows: 2, WarmRows: 5, RowSize: 1, Period: 3, Skew: 1.2},
		{FactRows: 2, WarmRows: 5, RowSize: 1, Period: 1, Skew: 1},
	} {
		if err := s.Run(a, time.Now(), time.Millisecond, 1, func(SQLWindow) {}); err == nil {
			t.Errorf("%+v: no error", s)
		}
		if err := s.Fill(a); err == nil {
			t.Errorf("%+v: Fill: no error", s)
		}
	}
}
