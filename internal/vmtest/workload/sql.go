package workload

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// SQL is a batch job with repeated passes for the sqlite3 shell (Debian's
// sqlite3, reading SQL on its standard input, one result line per query)
// over an in-memory database, so that every database page lives in
// sqlite's page cache, anonymous memory of the sqlite3 process. Three
// tables of rows of RowSize bytes of text (hex digits: 4 bits of entropy a
// byte, about as a text payload compresses), one row a database page for
// RowSize between about 2,100 and 4,000:
//
//   - hot, HotRows rows, scanned whole in every window (the job's state
//     that each pass reads: reuse every window);
//   - fact, FactRows rows in Period partitions of consecutive ids, one
//     partition scanned in every window, partition w mod Period in window
//     w (periodic reuse: each fact page is read once every Period windows);
//   - warm, WarmRows rows, read by point lookups of Zipf-popular ids
//     (exponent Skew over ranks shuffled over the ids once by Seed) for the
//     rest of each window, closed loop; from window ShiftAt on rank r is
//     id perm[(r + WarmRows/2) mod WarmRows] instead of perm[r] (the lookups'
//     hot set moves part way).
//
// A scan reads every byte of each row's text (sum(instr(payload, 'x')):
// hex has no 'x'), a lookup the row's. The window's pass (the hot scan
// and the partition's) runs at the window's start; if it ends after the
// window's end the next window's pass starts late.
type SQL struct {
	HotRows, FactRows, WarmRows int
	RowSize                     int
	Period                      int // windows per pass over fact
	Skew                        float64
	ShiftAt                     int // window of the lookups' hot-set shift; < 0: none
	Seed                        uint64
}

// SQLWindow is what the job measured in one window of its clock: the
// pass's duration (the hot table's and the fact partition's scans) and
// the lookups that followed it: their count and latency percentiles.
type SQLWindow struct {
	Window        int
	Start         time.Time
	Pass          time.Duration
	Ops           int64
	P50, P99, Max time.Duration
}

// SQLHeader is the CSV header of [SQLWindow] lines.
const SQLHeader = "window,start_unix_ns,pass_ms,ops,ops_per_sec,p50_us,p99_us,max_us"

// CSV formats w as a line of [SQLHeader] for windows of length d.
func (w SQLWindow) CSV(d time.Duration) string {
	us := func(x time.Duration) string { return strconv.FormatFloat(float64(x)/1e3, 'f', 1, 64) }
	return fmt.Sprintf("%d,%d,%.1f,%d,%.1f,%s,%s,%s", w.Window, w.Start.UnixNano(), float64(w.Pass)/1e6, w.Ops, float64(w.Ops)/d.Seconds(), us(w.P50), us(w.P99), us(w.Max))
}

func (s SQL) check() error {
	if s.HotRows < 0 || s.FactRows <= 0 || s.WarmRows <= 1 || s.RowSize <= 0 || s.Period <= 0 || s.Period > s.FactRows || s.Skew <= 1 {
		return fmt.Errorf("sql: want hot rows >= 0, fact rows > 0, warm rows > 1, a row size > 0, 0 < period <= fact rows, skew > 1: %+v", s)
	}
	return nil
}

// sqlShell is one sqlite3 shell: statements written to w, result lines
// read from r.
type sqlShell struct {
	w *bufio.Writer
	r *bufio.Reader
}

// query sends one statement and returns its one result line.
func (sh sqlShell) query(q string) (string, error) {
	sh.w.WriteString(q)
	sh.w.WriteString("\n")
	if err := sh.w.Flush(); err != nil {
		return "", fmt.Errorf("sql: %s: %w", q, err)
	}
	line, err := sh.r.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("sql: %s: no answer (the shell exited?): %w", q, err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// scan reads rows [lo, hi) of table and checks their count.
func (sh sqlShell) scan(table string, lo, hi int) error {
	q := fmt.Sprintf("SELECT count(*), sum(instr(payload, 'x')) FROM %s WHERE id >= %d AND id < %d;", table, lo, hi)
	line, err := sh.query(q)
	if err != nil {
		return err
	}
	if want := fmt.Sprintf("%d|", hi-lo); !strings.HasPrefix(line, want) {
		return fmt.Errorf("sql: %s: answer %q, want %d rows", q, line, hi-lo)
	}
	return nil
}

// Fill creates the in-memory database's tables on the shell conn (stdout
// to read, stdin to write).
func (s SQL) Fill(conn io.ReadWriter) error {
	if err := s.check(); err != nil {
		return err
	}
	sh := sqlShell{bufio.NewWriter(conn), bufio.NewReader(conn)}
	var q strings.Builder
	for _, t := range []struct {
		name string
		rows int
	}{{"hot", s.HotRows}, {"fact", s.FactRows}, {"warm", s.WarmRows}} {
		fmt.Fprintf(&q, "CREATE TABLE %s(id INTEGER PRIMARY KEY, payload TEXT);\n", t.name)
		if t.rows > 0 {
			// randomblob(n) hex-encoded: 2n letters of 16.
			fmt.Fprintf(&q, "INSERT INTO %s SELECT value, substr(hex(randomblob(%d)), 1, %d) FROM generate_series(0, %d);\n", t.name, (s.RowSize+1)/2, s.RowSize, t.rows-1)
		}
	}
	q.WriteString("SELECT 'filled';")
	line, err := sh.query(q.String())
	if err != nil {
		return err
	}
	if line != "filled" {
		return fmt.Errorf("sql: filling: answer %q", line)
	}
	return nil
}

// Run runs the job for windows windows of length d from epoch (window w is
// [epoch + w*d, epoch + (w+1)*d)) on the shell conn and calls report after
// each.
func (s SQL) Run(conn io.ReadWriter, epoch time.Time, d time.Duration, windows int, report func(SQLWindow)) error {
	if err := s.check(); err != nil {
		return err
	}
	if d <= 0 {
		return fmt.Errorf("sql: want a window > 0")
	}
	sh := sqlShell{bufio.NewWriter(conn), bufio.NewReader(conn)}
	rows := newZipfPicker(s.Seed, s.WarmRows, s.Skew, s.ShiftAt)
	if t := time.Until(epoch); t > 0 {
		time.Sleep(t)
	}
	var lat []time.Duration
	for w := range windows {
		start := epoch.Add(time.Duration(w) * d)
		end := start.Add(d)
		win := SQLWindow{Window: w, Start: start}
		if t := time.Until(start); t > 0 {
			time.Sleep(t)
		}
		t0 := time.Now()
		if s.HotRows > 0 {
			if err := sh.scan("hot", 0, s.HotRows); err != nil {
				return err
			}
		}
		p := w % s.Period
		if err := sh.scan("fact", p*s.FactRows/s.Period, (p+1)*s.FactRows/s.Period); err != nil {
			return err
		}
		win.Pass = time.Since(t0)
		var err error
		win.Ops, win.P50, win.P99, win.Max, err = closedLoop(end, &lat, func() error {
			id := rows.pick(w)
			return sh.scan("warm", id, id+1)
		})
		if err != nil {
			return err
		}
		report(win)
	}
	return nil
}

// SQLite is a running sqlite3 shell on an in-memory database: the [SQL]
// job's connection (its standard output to read, its standard input to
// write).
type SQLite struct {
	Cmd *exec.Cmd
	io.Reader
	io.Writer
	stderr bytes.Buffer
}

// StartSQLite starts the shell prog (e.g. /usr/bin/sqlite3) with env added
// to the environment, on an in-memory database, stopping at the first
// error (-bail).
func StartSQLite(prog string, env ...string) (*SQLite, error) {
	sq := &SQLite{Cmd: exec.Command(prog, "-bail", ":memory:")}
	sq.Cmd.Env = append(os.Environ(), env...)
	sq.Cmd.Stderr = &sq.stderr
	var err error
	if sq.Writer, err = sq.Cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if sq.Reader, err = sq.Cmd.StdoutPipe(); err != nil {
		return nil, err
	}
	if err := sq.Cmd.Start(); err != nil {
		return nil, err
	}
	return sq, nil
}

// Stop ends the shell (end of input, then a kill) and returns what it
// wrote on its standard error, the reason of an error of the job.
func (sq *SQLite) Stop() string {
	if sq.Cmd.ProcessState == nil {
		if c, ok := sq.Writer.(io.Closer); ok {
			c.Close()
		}
		sq.Cmd.Process.Kill()
		sq.Cmd.Wait()
	}
	return strings.TrimSpace(sq.stderr.String())
}
