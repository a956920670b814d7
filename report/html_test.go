package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"html"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mdk/gen"
	"mdk/mpc"
	"mdk/policy"
	"mdk/result"
	"mdk/stats"
)

var (
	testOnce sync.Once
	testData *Data
	testErr  error
)

// testConfig is a small synthetic trace of every workload model.
func testConfig() gen.Config {
	cfg := gen.DefaultConfig
	cfg.Pages = 3000
	cfg.Windows = 300
	cfg.Seed = 7
	return cfg
}

// testReport returns the data of a report on testConfig's trace with every
// policy's default grid (computed once).
func testReport(t testing.TB) *Data {
	t.Helper()
	testOnce.Do(func() {
		cfg := testConfig()
		s, err := stats.Compute(gen.NewReader(cfg))
		if err != nil {
			testErr = err
			return
		}
		var ss []policy.Setting
		for _, name := range []string{"age", "vmin", "opp", "paw", "pace"} {
			ss = append(ss, policy.DefaultGrid(name, cfg.Window)...)
		}
		rs, err := mpc.Generate(context.Background(), gen.NewReader(cfg), ss, mpc.Options{})
		if err != nil {
			testErr = err
			return
		}
		testData = &Data{
			Trace: "gen-test.mdkt", SHA256: strings.Repeat("ab", 32), Command: "mdk report gen-test.mdkt -o r.html",
			Version: "test", Date: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Stats: s, Results: rs,
		}
	})
	if testErr != nil {
		t.Fatal(testErr)
	}
	return testData
}

func testResults(t testing.TB) []*result.Result { return testReport(t).Results }

var (
	tableRe = regexp.MustCompile(`(?s)<table id="([a-z]+)".*?</table>`)
	rowRe   = regexp.MustCompile(`(?s)<tr( data-policy="([^"]*)" data-params="([^"]*)")?>(.*?)</tr>`)
	cellRe  = regexp.MustCompile(`<td[^>]*?data-v="([^"]*)"(?: data-col="([a-z]+)")?`)
)

// tableRow is one body row of a report table, read back from the HTML.
type tableRow struct {
	policy, params string
	values         []string          // every cell's data-v, in order
	cols           map[string]string // cells with a data-col name
}

// readTable returns the body rows of the table with the given id.
func readTable(t *testing.T, page, id string) []tableRow {
	t.Helper()
	for _, m := range tableRe.FindAllStringSubmatch(page, -1) {
		if m[1] != id {
			continue
		}
		body := m[0][strings.Index(m[0], "<tbody>"):]
		var rows []tableRow
		for _, r := range rowRe.FindAllStringSubmatch(body, -1) {
			row := tableRow{policy: html.UnescapeString(r[2]), params: html.UnescapeString(r[3]), cols: map[string]string{}}
			for _, c := range cellRe.FindAllStringSubmatch(r[4], -1) {
				v := html.UnescapeString(c[1])
				row.values = append(row.values, v)
				if c[2] != "" {
					row.cols[c[2]] = v
				}
			}
			rows = append(rows, row)
		}
		return rows
	}
	t.Fatalf("no table %q in the page", id)
	return nil
}

// checkTablesAgainstCSV checks that the report's tables hold exactly the
// numbers of result.WriteCSV for the same results, and that every row of
// the best-setting table is the best by an independent scan of the CSV.
func checkTablesAgainstCSV(t *testing.T, page string, rs []*result.Result, st result.Stat, targets []float64) {
	t.Helper()
	var buf bytes.Buffer
	if err := result.WriteCSV(&buf, rs); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header, want := recs[0], recs[1:]
	var got [][]string
	for _, r := range readTable(t, page, "all") {
		got = append(got, r.values)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("every-setting table differs from the CSV (-csv +table):\n%s", diff)
	}
	col := func(name string) int {
		for i, h := range header {
			if h == name {
				return i
			}
		}
		t.Fatalf("no CSV column %q", name)
		return -1
	}
	stc, savc := col(string(st)), col("savings")
	num := func(s string) float64 {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("CSV number %q: %v", s, err)
		}
		return f
	}
	best := readTable(t, page, "best")
	policies := map[string]bool{}
	for _, r := range want {
		policies[r[0]] = true
	}
	if len(best) != len(policies)*len(targets) {
		t.Fatalf("best table has %d rows, want %d policies x %d targets", len(best), len(policies), len(targets))
	}
	for _, b := range best {
		target := num(b.values[0])
		// Independent scan: the most savings with the statistic <= target.
		bestSav := -1.0
		for _, r := range want {
			if r[0] == b.policy && num(r[stc]) <= target {
				bestSav = max(bestSav, num(r[savc]))
			}
		}
		if bestSav < 0 {
			if b.params != "" || len(b.values) != 1 {
				t.Errorf("%s at %v: table shows %q, but no setting meets the target", b.policy, target, b.params)
			}
			continue
		}
		var row []string
		for _, r := range want {
			if r[0] == b.policy && r[1] == b.params {
				row = r
			}
		}
		if row == nil {
			t.Fatalf("%s at %v: setting %q is not in the CSV", b.policy, target, b.params)
		}
		if b.cols["savings"] != row[savc] || b.cols["stat"] != row[stc] {
			t.Errorf("%s:%s at %v: table savings %s, %s %s; CSV %s, %s", b.policy, b.params, target, b.cols["savings"], st, b.cols["stat"], row[savc], row[stc])
		}
		if num(row[savc]) != bestSav || num(row[stc]) > target {
			t.Errorf("%s at %v: table picks %s with savings %s, but the CSV's best meeting the target saves %v", b.policy, target, b.params, row[savc], bestSav)
		}
	}
}

func TestGenerateTables(t *testing.T) {
	d := testReport(t)
	for _, st := range []result.Stat{result.MaxPR, result.P98PR} {
		targets := []float64{0.01, 0.02, 0.05}
		var buf bytes.Buffer
		if err := Generate(&buf, d, Options{X: st, Targets: targets}); err != nil {
			t.Fatal(err)
		}
		checkTablesAgainstCSV(t, buf.String(), d.Results, st, targets)
	}
}

func TestGenerateSelfContained(t *testing.T) {
	d := testReport(t)
	var a, b bytes.Buffer
	if err := Generate(&a, d, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Generate(&b, d, Options{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two reports of the same data differ")
	}
	page := a.String()
	for _, bad := range []string{`<script src`, `<link`, `<img src="http`, `@import`, `url(http`} {
		if strings.Contains(page, bad) {
			t.Errorf("report loads something from outside: it contains %q", bad)
		}
	}
	for _, want := range []string{d.SHA256, d.Command, "2026-01-02T03:04:05Z", "Content-Security-Policy", "default-src 'none'"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestGenerateSettings(t *testing.T) {
	d := testReport(t)
	var buf bytes.Buffer
	if err := Generate(&buf, d, Options{Settings: []string{"age:A=3", "opp:r=1%"}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<option value="0">age:A=3</option>`, `<option value="1">opp:r=1%</option>`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("report lacks %s", want)
		}
	}
	err := Generate(&buf, d, Options{Settings: []string{"age:A=999999"}})
	if err == nil || !strings.Contains(err.Error(), "age:A=999999") {
		t.Errorf("unknown setting: err = %v, want one naming it", err)
	}
	if err := Generate(&buf, d, Options{X: "p50_pr"}); err == nil {
		t.Error("unknown statistic: no error")
	}
	if err := Generate(&buf, &Data{Stats: d.Stats}, Options{}); err == nil {
		t.Error("no results: no error")
	}
}

// longData returns report data shaped like a long trace: W windows, n
// settings per policy, the per-window arrays shared between settings to
// keep the test's memory small (the report reads them, never writes).
func longData(W, n int) *Data {
	accessed := make([]int64, W)
	alive := make([]int64, W)
	saved := make([]int64, W)
	prom := make([]int64, W)
	var A, L, S int64
	for w := range W {
		accessed[w] = 20000 + int64(w*7919%5000)
		alive[w] = 100000 + int64(w%977)
		saved[w] = alive[w] / 3
		prom[w] = accessed[w] * int64(w%101) / 10000
		A += accessed[w]
		L += alive[w]
		S += saved[w]
	}
	var rs []*result.Result
	for _, name := range []string{"age", "vmin", "opp", "paw", "pace"} {
		for k := range n {
			rs = append(rs, &result.Result{
				Policy: name, Params: "k=" + strconv.Itoa(k), Promotions: prom, Accessed: accessed,
				Saved: S - int64(k), Alive: L, PageSize: 4096, SavedPerWindow: saved, AlivePerWindow: alive,
			})
		}
	}
	hist := make([]stats.Bucket, 20)
	for b := range hist {
		hist[b] = stats.Bucket{Min: b, Max: b, Count: int64(1000000 >> b)}
	}
	s := &stats.Stats{Windows: W, Window: "30s", WindowSeconds: 30, PageSize: 4096, AccessRecords: A,
		AlivePageWindows: L, ClosedGapHist: hist, OpenGapHist: hist}
	return &Data{Trace: "long", Command: "test", Version: "test", Stats: s, Results: rs}
}

// TestGenerateSizeBound: however long the trace, the page stays small.
func TestGenerateSizeBound(t *testing.T) {
	for _, W := range []int{10_000, 100_000} {
		var buf bytes.Buffer
		if err := Generate(&buf, longData(W, 20), Options{}); err != nil {
			t.Fatal(err)
		}
		if buf.Len() > 5<<20 {
			t.Errorf("W=%d: report is %d bytes, want under 5 MiB", W, buf.Len())
		}
		t.Logf("W=%d: %d bytes", W, buf.Len())
	}
}

func BenchmarkGenerate(b *testing.B) {
	for _, W := range []int{240, 10_700, 100_000} {
		d := longData(W, 50)
		b.Run("windows="+strconv.Itoa(W), func(b *testing.B) {
			var n int
			for b.Loop() {
				var buf bytes.Buffer
				if err := Generate(&buf, d, Options{}); err != nil {
					b.Fatal(err)
				}
				n = buf.Len()
			}
			b.ReportMetric(float64(n), "html-bytes")
			b.ReportMetric(float64(W)*float64(b.N)/b.Elapsed().Seconds(), "windows/sec")
		})
	}
}
