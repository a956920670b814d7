//go:build linux

package e2e

import (
	"bytes"
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

// The end-to-end workflow on a real application (docs/e2e.md): memcached
// from Debian in the custom guest, driven by our Zipf load with a hot-set
// shift; a baseline recorded with mdk record --pid; mdk tune on it picks a
// setting per policy; each setting deployed with mdk agent --pid on a fresh
// memcached under the same load; mdk agent compare --predicted-from the
// recording. The parameters are environment variables (e2eParams), short
// by default (CI); scripts/e2e.sh sets the full experiment's.

// e2eParams are the workflow's parameters: MDK_E2E_<NAME> or the default.
type e2eParams struct {
	Window                time.Duration
	Windows, Keys, Value  int
	Skew, Sets            float64
	ShiftAt               int
	SLO, Policies         string
	ZramMiB, MemcachedMiB int
}

func e2eFromEnv(t *testing.T) e2eParams {
	p := e2eParams{Window: 2 * time.Second, Windows: 8, Keys: 3000, Value: 4000, Skew: 1.2, Sets: 0.05, ShiftAt: -1,
		SLO: "mean_pr<=5%", Policies: "age,paw", ZramMiB: 256, MemcachedMiB: 64}
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
	get("WINDOW", func(s string) (err error) { p.Window, err = time.ParseDuration(s); return })
	get("WINDOWS", atoi(&p.Windows))
	get("KEYS", atoi(&p.Keys))
	get("VALUE", atoi(&p.Value))
	get("SKEW", atof(&p.Skew))
	get("SETS", atof(&p.Sets))
	get("SHIFT_AT", atoi(&p.ShiftAt))
	get("SLO", func(s string) error { p.SLO = s; return nil })
	get("POLICIES", func(s string) error { p.Policies = s; return nil })
	get("ZRAM_MIB", atoi(&p.ZramMiB))
	get("MEMCACHED_MIB", atoi(&p.MemcachedMiB))
	if p.ShiftAt < 0 {
		p.ShiftAt = p.Windows / 2
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
	if _, in := vmtest.InGuest(); in {
		t.Skip("the host side")
	}
	kernel := vmtest.Kernel(t, vmtest.Custom)
	files, libPath, err := vmtest.Program("/usr/bin/memcached")
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
	vmtest.RunTest(t, vmtest.GuestTest{
		Kernel: kernel, Kind: vmtest.Custom, Binary: vmtest.BuildTest(t, "mdk/internal/e2e"), Run: "^TestGuestE2E$",
		Files: files, Env: env, Timeout: 40 * time.Minute, Memory: 1024, CPUs: 2,
	})
}

// memcached is one memcached server of the test, with its socket.
type memcached struct {
	cmd  *exec.Cmd
	sock string
}

func startMemcached(t *testing.T, dir string, p e2eParams) *memcached {
	t.Helper()
	sock := filepath.Join(dir, "mc.sock")
	os.Remove(sock)
	cmd := exec.Command("/usr/bin/memcached", "-u", "root", "-s", sock, "-m", strconv.Itoa(p.MemcachedMiB), "-t", "1", "-I", "1m")
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+os.Getenv("MDK_E2E_LIBPATH"))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	m := &memcached{cmd: cmd, sock: sock}
	t.Cleanup(m.stop)
	conn, err := kvload.DialKV(sock, 30*time.Second)
	if err != nil {
		t.Fatalf("memcached did not listen on %s: %v", sock, err)
	}
	defer conn.Close()
	t0 := time.Now()
	if err := e2eLoad(p).Fill(conn); err != nil {
		t.Fatal(err)
	}
	t.Logf("memcached pid %d: %d keys of %d bytes stored in %v", cmd.Process.Pid, p.Keys, p.Value, time.Since(t0).Round(time.Millisecond))
	return m
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
// server) and, from the moment it starts, the load for p.Windows windows;
// it logs the load's windows with the server's memory, as lines
// "e2e-load NAME CSV" (kvload.KVHeader, then rss_kb,swap_kb), and waits
// for mdk.
func loadWhile(t *testing.T, name string, m *memcached, p e2eParams, args ...string) {
	t.Helper()
	conn, err := kvload.DialKV(m.sock, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var out bytes.Buffer
	cmd := exec.Command("/work/mdk", args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	epoch := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	lerr := e2eLoad(p).Run(conn, epoch, p.Window, p.Windows, func(w kvload.KVWindow) {
		rss, swap := memStatus(m.cmd.Process.Pid)
		lines = append(lines, fmt.Sprintf("e2e-load %s %s,%d,%d", name, w.CSV(p.Window), rss, swap))
	})
	err = cmd.Wait()
	t.Logf("mdk %s:\n%s", strings.Join(args, " "), tail(out.String(), 4))
	t.Logf("e2e-load %s %s,rss_kb,swap_kb\n%s", name, kvload.KVHeader, strings.Join(lines, "\n"))
	if lerr != nil {
		t.Fatalf("load: %v", lerr)
	}
	if err != nil {
		t.Fatalf("mdk %s: %v", strings.Join(args, " "), err)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestGuestE2E is the workflow, in the guest.
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
	dir := t.TempDir()
	dur := (time.Duration(p.Windows)*p.Window + p.Window/2).String()
	win := p.Window.String()

	// 1. The baseline, no reclaim, recorded.
	rec := filepath.Join(dir, "rec.mdkt")
	m := startMemcached(t, dir, p)
	loadWhile(t, "baseline", m, p, "record", "--pid", strconv.Itoa(m.cmd.Process.Pid), "--window", win, "--duration", dur, "-o", rec)
	m.stop()

	// 2. The settings mdk tune chooses on it.
	var out bytes.Buffer
	args := []string{"tune", rec, "--slo", p.SLO, "--json"}
	for _, pol := range strings.Split(p.Policies, ",") {
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
			m := startMemcached(t, dir, p)
			loadWhile(t, pol.Policy, m, p, "agent", "--pid", strconv.Itoa(m.cmd.Process.Pid), "--policy", spec, "--window", win,
				"--duration", dur, "--psi", "0", "--log", "", "-o", run)
			m.stop()
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
