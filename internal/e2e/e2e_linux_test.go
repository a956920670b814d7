//go:build linux

package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"mdk/agent"
	"mdk/internal/testutil"
	"mdk/internal/vmtest"
	kvload "mdk/internal/vmtest/workload"
)

// The end-to-end workflow on real applications (docs/e2e.md): memcached
// from Debian in the custom guest, driven by our Zipf load with a hot-set
// shift, or Debian's sqlite3 shell running workload.SQL's batch job with
// periodic passes; a baseline recorded with mdk record --pid; mdk tune on
// it picks a setting per policy; each setting deployed with mdk agent
// --pid on a fresh application under the same load; mdk agent compare
// --predicted-from the recording. The parameters are environment variables
// (e2eParams), short by default (CI); internal/vmtest/e2e.sh sets the full
// experiment's.

// e2eParams are the workflow's parameters: MDK_E2E_<NAME> or the default.
// App is the application (memcached or sqlite); Policies are policy specs
// separated by spaces (a spec may hold commas); Keys, Value, Sets,
// MemcachedMiB, Net and MemcachedOpts (more arguments, separated by
// spaces) are memcached's, SQL* sqlite's, Skew and ShiftAt
// both loads'.
type e2eParams struct {
	App                   string
	Window                time.Duration
	Windows, Keys, Value  int
	Skew, Sets            float64
	ShiftAt               int
	SLO, Policies         string
	ZramMiB, MemcachedMiB int
	Net, MemcachedOpts    string
	SQLHot, SQLFact       int
	SQLWarm, SQLRow       int
	SQLPeriod             int
}

func e2eFromEnv(t *testing.T) e2eParams {
	p := e2eParams{App: "memcached", Window: 2 * time.Second, Windows: 8, Keys: 3000, Value: 4000, Skew: 1.2, Sets: 0.05, ShiftAt: -1,
		SLO: "mean_pr<=5%", Policies: "age paw", ZramMiB: 256, MemcachedMiB: 64, Net: "tcp",
		SQLHot: 300, SQLFact: 1200, SQLWarm: 1500, SQLRow: 3000, SQLPeriod: 4}
	get := func(name string, f func(string) error) {
		if v := os.Getenv("MDK_E2E_" + name); v != "" {
			if err := f(v); err != nil {
				t.Fatalf("MDK_E2E_%s=%q: %v", name, v, err)
			}
		}
	}
	atoi := func(p *int) func(string) error {
		return func(s string) (err error) { *p, err = strconv.Atoi(s); return }
	}
	atof := func(p *float64) func(string) error {
		return func(s string) (err error) { *p, err = strconv.ParseFloat(s, 64); return }
	}
	str := func(p *string) func(string) error {
		return func(s string) error { *p = s; return nil }
	}
	get("APP", str(&p.App))
	get("WINDOW", func(s string) (err error) { p.Window, err = time.ParseDuration(s); return })
	get("WINDOWS", atoi(&p.Windows))
	get("KEYS", atoi(&p.Keys))
	get("VALUE", atoi(&p.Value))
	get("SKEW", atof(&p.Skew))
	get("SETS", atof(&p.Sets))
	get("SHIFT_AT", atoi(&p.ShiftAt))
	get("SLO", str(&p.SLO))
	get("POLICIES", str(&p.Policies))
	get("ZRAM_MIB", atoi(&p.ZramMiB))
	get("MEMCACHED_MIB", atoi(&p.MemcachedMiB))
	get("NET", str(&p.Net))
	get("MEMCACHED_OPTS", str(&p.MemcachedOpts))
	get("SQL_HOT", atoi(&p.SQLHot))
	get("SQL_FACT", atoi(&p.SQLFact))
	get("SQL_WARM", atoi(&p.SQLWarm))
	get("SQL_ROW", atoi(&p.SQLRow))
	get("SQL_PERIOD", atoi(&p.SQLPeriod))
	if p.ShiftAt < 0 {
		p.ShiftAt = p.Windows / 2
	}
	if p.App != "memcached" && p.App != "sqlite" {
		t.Fatalf("MDK_E2E_APP=%q: want memcached or sqlite", p.App)
	}
	if p.Net != "tcp" && p.Net != "unix" {
		t.Fatalf("MDK_E2E_NET=%q: want tcp or unix", p.Net)
	}
	return p
}

// e2eSlack is the tracker slack the test allows, per window, in pages, for
// promotions and for saved page-windows alike: what neither the refused
// pages, the safety limits nor the pages swapped back in explain (the idle
// tracker sees an access in another window than the kernel did).
const e2eSlack = 64

// TestE2EInGuest boots the custom kernel with memcached and its shared
// libraries in the initramfs and runs TestGuestE2E there.
func TestE2EInGuest(t *testing.T) {
	e2eInGuest(t, "memcached", "/usr/bin/memcached")
}

// TestE2ESQLiteInGuest is the same workflow on the second application,
// the sqlite3 shell running the batch job of workload.SQL.
func TestE2ESQLiteInGuest(t *testing.T) {
	e2eInGuest(t, "sqlite", "/usr/bin/sqlite3")
}

// e2eInGuest boots the custom kernel with prog and its shared libraries
// in the initramfs and runs TestGuestE2E there for app; MDK_E2E_*
// variables pass through, but for MDK_E2E_APP, app.
func e2eInGuest(t *testing.T, app, prog string) {
	if _, in := vmtest.InGuest(); in {
		t.Skip("the host side")
	}
	kernel := vmtest.Kernel(t, vmtest.Custom)
	files, libPath, err := vmtest.Program(prog)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	passwd := filepath.Join(t.TempDir(), "passwd")
	os.WriteFile(passwd, []byte("root:x:0:0:root:/root:/bin/sh\n"), 0o644)
	files["/etc/passwd"] = passwd
	files["/work/mdk"] = vmtest.BuildGo(t, "mdk/cmd/mdk")
	env := map[string]string{"MDK_E2E_LIBPATH": libPath}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "MDK_E2E_") {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
	}
	env["MDK_E2E_APP"] = app
	// Three runs of the windows (and the fills, tune, the comparisons):
	// four times their length and 20 minutes, 40 minutes at least, in
	// emulation on a loaded machine; the guest's test binary gets the same
	// limit (its default is go test's 10 minutes).
	p := e2eFromEnv(t)
	timeout := max(3*4*time.Duration(p.Windows+2)*p.Window+20*time.Minute, 40*time.Minute)
	vmtest.RunTest(t, vmtest.GuestTest{
		Kernel: kernel, Kind: vmtest.Custom, Binary: vmtest.BuildTest(t, "mdk/internal/e2e"), Run: "^TestGuestE2E$",
		Args:  []string{"-test.timeout", timeout.String()},
		Files: files, Env: env, Timeout: timeout, Memory: 1024, CPUs: 2,
	})
}

// app is one application of the workflow, started and filled, with its
// load.
type app interface {
	pid() int
	// header is the CSV header of the load's window lines.
	header() string
	// load runs the load for p.Windows windows from epoch and calls line
	// with each window's CSV line.
	load(epoch time.Time, p e2eParams, line func(string)) error
	stop()
}

// startApp starts p.App and fills it.
func startApp(t *testing.T, dir string, p e2eParams) app {
	t.Helper()
	if p.App == "sqlite" {
		return startSQLite(t, p)
	}
	return startMemcached(t, dir, p)
}

// memcached is one memcached server of the test, with its address (a
// unix socket or 127.0.0.1:PORT).
type memcached struct {
	cmd  *exec.Cmd
	addr string
}

func startMemcached(t *testing.T, dir string, p e2eParams) *memcached {
	t.Helper()
	args := append([]string{"-u", "root", "-m", strconv.Itoa(p.MemcachedMiB), "-t", "1", "-I", "1m"}, strings.Fields(p.MemcachedOpts)...)
	addr := "127.0.0.1:11211"
	if p.Net == "tcp" {
		args = append(args, "-l", "127.0.0.1", "-p", "11211", "-U", "0")
	} else {
		addr = filepath.Join(dir, "mc.sock")
		os.Remove(addr)
		args = append(args, "-s", addr)
	}
	cmd := exec.Command("/usr/bin/memcached", args...)
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+os.Getenv("MDK_E2E_LIBPATH"))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	m := &memcached{cmd: cmd, addr: addr}
	t.Cleanup(m.stop)
	conn, err := kvload.DialKV(addr, 30*time.Second)
	if err != nil {
		t.Fatalf("memcached did not listen on %s: %v", addr, err)
	}
	defer conn.Close()
	t0 := time.Now()
	if err := e2eLoad(p).Fill(conn); err != nil {
		t.Fatal(err)
	}
	t.Logf("memcached pid %d on %s: %d keys of %d bytes stored in %v", cmd.Process.Pid, addr, p.Keys, p.Value, time.Since(t0).Round(time.Millisecond))
	return m
}

func (m *memcached) pid() int       { return m.cmd.Process.Pid }
func (m *memcached) header() string { return kvload.KVHeader }

func (m *memcached) load(epoch time.Time, p e2eParams, line func(string)) error {
	conn, err := kvload.DialKV(m.addr, 10*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	return e2eLoad(p).Run(conn, epoch, p.Window, p.Windows, func(w kvload.KVWindow) { line(w.CSV(p.Window)) })
}

func (m *memcached) stop() {
	if m.cmd.Process != nil && m.cmd.ProcessState == nil {
		m.cmd.Process.Kill()
		m.cmd.Wait()
	}
}

func e2eLoad(p e2eParams) kvload.KV {
	return kvload.KV{Keys: p.Keys, ValueSize: p.Value, Skew: p.Skew, SetFraction: p.Sets, ShiftAt: p.ShiftAt, Seed: 23}
}

// sqlite is one sqlite3 shell of the test, its in-memory database filled.
type sqlite struct {
	sq *kvload.SQLite
}

func sqlJob(p e2eParams) kvload.SQL {
	return kvload.SQL{HotRows: p.SQLHot, FactRows: p.SQLFact, WarmRows: p.SQLWarm, RowSize: p.SQLRow, Period: p.SQLPeriod,
		Skew: p.Skew, ShiftAt: p.ShiftAt, Seed: 23}
}

func startSQLite(t *testing.T, p e2eParams) *sqlite {
	t.Helper()
	sq, err := kvload.StartSQLite("/usr/bin/sqlite3", "LD_LIBRARY_PATH="+os.Getenv("MDK_E2E_LIBPATH"))
	if err != nil {
		t.Fatal(err)
	}
	s := &sqlite{sq: sq}
	t.Cleanup(s.stop)
	t0 := time.Now()
	if err := sqlJob(p).Fill(sq); err != nil {
		t.Fatalf("%v: %s", err, sq.Stop())
	}
	t.Logf("sqlite3 pid %d: %d+%d+%d rows of %d bytes stored in %v", sq.Cmd.Process.Pid, p.SQLHot, p.SQLFact, p.SQLWarm, p.SQLRow, time.Since(t0).Round(time.Millisecond))
	return s
}

func (s *sqlite) pid() int       { return s.sq.Cmd.Process.Pid }
func (s *sqlite) header() string { return kvload.SQLHeader }
func (s *sqlite) stop()          { s.sq.Stop() }

func (s *sqlite) load(epoch time.Time, p e2eParams, line func(string)) error {
	err := sqlJob(p).Run(s.sq, epoch, p.Window, p.Windows, func(w kvload.SQLWindow) { line(w.CSV(p.Window)) })
	if err != nil {
		return fmt.Errorf("%v: %s", err, s.sq.Stop())
	}
	return nil
}

// memStatus returns VmRSS and VmSwap of pid in kB.
func memStatus(pid int) (rss, swap int64) {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "VmRSS:" {
			rss, _ = strconv.ParseInt(f[1], 10, 64)
		}
		if len(f) >= 2 && f[0] == "VmSwap:" {
			swap, _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	return rss, swap
}

// loadWhile runs mdk with args (a recording or an agent run of the
// application) and, from the moment it starts, the load for p.Windows
// windows; it logs the load's windows with the application's memory, as
// lines "e2e-load NAME CSV" (the app's header, then rss_kb,swap_kb), and
// waits for mdk.
func loadWhile(t *testing.T, name string, a app, p e2eParams, args ...string) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command("/work/mdk", args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	epoch := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	// One window more than mdk's: mdk's first window starts after its
	// start-up and first scan, up to a window after epoch, and its last
	// window is under load to its end.
	lp := p
	lp.Windows++
	lerr := a.load(epoch, lp, func(csv string) {
		rss, swap := memStatus(a.pid())
		lines = append(lines, fmt.Sprintf("e2e-load %s %s,%d,%d", name, csv, rss, swap))
	})
	err := cmd.Wait()
	t.Logf("mdk %s:\n%s", strings.Join(args, " "), tail(out.String(), 4))
	t.Logf("e2e-load %s %s,rss_kb,swap_kb\n%s", name, a.header(), strings.Join(lines, "\n"))
	if lerr != nil {
		t.Fatalf("load: %v", lerr)
	}
	if err != nil {
		t.Fatalf("mdk %s: %v", strings.Join(args, " "), err)
	}
}

// dumpFile logs path's bytes, base64, as lines "e2e-file NAME BASE64" of
// at most 60,000 characters, when MDK_E2E_DUMP is set: internal/vmtest/e2e.sh
// takes the traces and the agent's outputs out of the guest so.
func dumpFile(t *testing.T, name, path string) {
	t.Helper()
	if os.Getenv("MDK_E2E_DUMP") == "" {
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("dump %s: %v", name, err)
		return
	}
	enc := base64.StdEncoding.EncodeToString(b)
	var sb strings.Builder
	for len(enc) > 0 {
		n := min(len(enc), 60000)
		fmt.Fprintf(&sb, "e2e-file %s %s\n", name, enc[:n])
		enc = enc[n:]
	}
	t.Logf("dump of %s (%d bytes)\n%s", path, len(b), sb.String())
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestGuestE2E is the workflow, in the guest, on MDK_E2E_APP.
func TestGuestE2E(t *testing.T) {
	vmtest.RequireGuest(t)
	p := e2eFromEnv(t)
	t.Logf("parameters: %+v", p)
	testutil.SetupZram(t, int64(p.ZramMiB)<<20)
	// The same addresses in every run, so that the recording's pages are
	// the run's (the Jaccard of the accessed sets); MGLRU off, as idle
	// tracking needs (docs/record.md).
	os.WriteFile("/proc/sys/kernel/randomize_va_space", []byte("0\n"), 0o644)
	os.WriteFile("/sys/kernel/mm/lru_gen/enabled", []byte("n\n"), 0o644)
	if p.App == "memcached" && p.Net == "tcp" {
		// The loopback interface is down at boot; busybox brings it up.
		if out, err := exec.Command("/bin/ifconfig", "lo", "127.0.0.1", "up").CombinedOutput(); err != nil {
			t.Fatalf("ifconfig lo up: %v: %s", err, out)
		}
	}
	dir := t.TempDir()
	dur := (time.Duration(p.Windows)*p.Window + p.Window/2).String()
	win := p.Window.String()

	// 1. The baseline, no reclaim, recorded.
	rec := filepath.Join(dir, "rec.mdkt")
	a := startApp(t, dir, p)
	loadWhile(t, "baseline", a, p, "record", "--pid", strconv.Itoa(a.pid()), "--window", win, "--duration", dur, "-o", rec)
	a.stop()
	logCurves(t, "recording", rec, p)
	dumpFile(t, "rec.mdkt", rec)

	// 2. The settings mdk tune chooses on it.
	var out bytes.Buffer
	args := []string{"tune", rec, "--slo", p.SLO, "--json"}
	for _, pol := range strings.Fields(p.Policies) {
		args = append(args, "-p", pol)
	}
	cmd := exec.Command("/work/mdk", args...)
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mdk %s: %v", strings.Join(args, " "), err)
	}
	var tuned struct {
		Policies []struct {
			Policy, Params string
			Found          bool
		} `json:"policies"`
	}
	if err := json.Unmarshal(out.Bytes(), &tuned); err != nil {
		t.Fatalf("mdk tune --json: %v", err)
	}

	// 3. Each deployed on a fresh server under the same load, and 4. compared.
	for _, pol := range tuned.Policies {
		if !pol.Found {
			t.Errorf("%s: mdk tune found no setting meeting %s", pol.Policy, p.SLO)
			continue
		}
		spec := pol.Policy + ":" + pol.Params
		t.Run(pol.Policy, func(t *testing.T) {
			run := filepath.Join(dir, "run-"+pol.Policy)
			a := startApp(t, dir, p)
			loadWhile(t, pol.Policy, a, p, "agent", "--pid", strconv.Itoa(a.pid()), "--policy", spec, "--window", win,
				"--duration", dur, "--psi", "0", "--log", "", "-o", run)
			a.stop()
			logCurves(t, pol.Policy, filepath.Join(run, "trace.mdkt"), p)
			for _, f := range []string{"trace.mdkt", "measured.csv", "skipped.csv", "run.json"} {
				dumpFile(t, "run-"+pol.Policy+"/"+f, filepath.Join(run, f))
			}
			for _, format := range []string{"text", "json"} {
				var out bytes.Buffer
				cmd := exec.Command("/work/mdk", "agent", "compare", run, "--predicted-from", rec, "--format", format)
				cmd.Stdout, cmd.Stderr = &out, os.Stderr
				if err := cmd.Run(); err != nil {
					t.Fatalf("mdk agent compare --predicted-from: %v", err)
				}
				if format == "text" {
					t.Logf("e2e-compare %s\n%s", spec, out.String())
					continue
				}
				var got struct {
					Total   agent.PredictedWindow   `json:"total"`
					Windows []agent.PredictedWindow `json:"windows"`
				}
				if err := json.Unmarshal(out.Bytes(), &got); err != nil {
					t.Fatal(err)
				}
				checkE2E(t, spec, got.Windows, got.Total)
			}
		})
	}
}

// logCurves logs the best setting of age and paw at a ladder of targets
// of the SLO's statistic on trace (the recording's curves, or a run's
// observed trace's), as "e2e-curves NAME" and the table: the paper's
// direction is read off them (docs/e2e.md).
func logCurves(t *testing.T, name, trace string, p e2eParams) {
	t.Helper()
	stat, _, _ := strings.Cut(p.SLO, "<=")
	out, err := exec.Command("/work/mdk", "mpc", trace, "-p", "age", "-p", "paw", "--x", stat, "--target", "1%,2%,5%,10%,20%,40%").CombinedOutput()
	if err != nil {
		t.Fatalf("mdk mpc %s: %v: %s", trace, err, out)
	}
	t.Logf("e2e-curves %s\n%s", name, out)
}

// checkE2E asserts the decomposition's identities in every window and in
// total, and that the measurement is the counterfactual up to the refused
// pages, the limits, the pages swapped back in and e2eSlack pages of
// tracker slack per window.
func checkE2E(t *testing.T, spec string, ws []agent.PredictedWindow, tot agent.PredictedWindow) {
	t.Helper()
	if len(ws) == 0 {
		t.Fatalf("%s: no window", spec)
	}
	var sum agent.PredictedWindow
	for _, w := range ws {
		if w.Causes() != sub(w.Recorded, w.Measured) {
			t.Errorf("%s window %d: causes %+v, recorded - measured %+v", spec, w.Window, w.Causes(), sub(w.Recorded, w.Measured))
		}
		expl := sub(sub(sub(w.Counterfactual, w.Refused), w.Limits), w.Back)
		if d := sub(w.Measured, expl); abs(d.Promotions) > e2eSlack || abs(d.Saved) > e2eSlack {
			t.Errorf("%s window %d: measured %+v, counterfactual less refusals, limits and swap-ins %+v: beyond %d pages of slack", spec, w.Window, w.Measured, expl, e2eSlack)
		}
		sum.Recorded = add(sum.Recorded, w.Recorded)
		sum.Measured = add(sum.Measured, w.Measured)
	}
	if tot.Causes() != sub(tot.Recorded, tot.Measured) || sum.Recorded != tot.Recorded || sum.Measured != tot.Measured {
		t.Errorf("%s total: causes %+v, recorded - measured %+v, windows' sums %+v %+v", spec, tot.Causes(), sub(tot.Recorded, tot.Measured), sum.Recorded, sum.Measured)
	}
	if tot.Measured.Saved == 0 || tot.Counterfactual.Saved == 0 {
		t.Errorf("%s: %d saved page-windows measured, %d predicted: the run reclaimed nothing, the test checks nothing", spec, tot.Measured.Saved, tot.Counterfactual.Saved)
	}
}

func add(a, b agent.Pair) agent.Pair {
	return agent.Pair{Promotions: a.Promotions + b.Promotions, Saved: a.Saved + b.Saved}
}
func sub(a, b agent.Pair) agent.Pair {
	return agent.Pair{Promotions: a.Promotions - b.Promotions, Saved: a.Saved - b.Saved}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
