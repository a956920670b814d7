package verify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"mdk/gen"
	"mdk/internal/cli"
	"mdk/mpc"
	"mdk/policy"
	"mdk/result"
	"mdk/sim"
	"mdk/tier"
	"mdk/trace"
	"mdk/verify"
)

// ctlTrace is one trace of the controller table.
type ctlTrace struct {
	name string
	tr   *trace.Trace
}

// controllerTraces returns every gen model at cfg's size, and with real
// the traces of importer/testdata.
func controllerTraces(t *testing.T, cfg gen.Config, real bool) []ctlTrace {
	var out []ctlTrace
	for _, m := range gen.Models {
		cfg.Model = m
		tr, err := trace.ReadAll(gen.NewReader(cfg))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ctlTrace{"gen " + m, tr})
	}
	if real {
		names, trs := verify.RealTraces(t)
		for i := range names {
			out = append(out, ctlTrace{names[i], trs[i]})
		}
	}
	return out
}

// controllerGrid is the settings a controller's "best" is chosen among
// besides its defaults (docs/controllers.md): gswap's budget x K x min
// (with S=0 on a trace shorter than its default start-up delay);
// damos's min_age with no quota, under a promotion-rate goal of 0.5% or
// 2%, and under a quota of a sixteenth of the trace's pages per window;
// senpai's pressure (10 us to 10 ms of stall per 6 s interval) x max_probe,
// with min_size=0 on a trace smaller than its default floor.
func controllerGrid(name string, tr *trace.Trace) []string {
	var out []string
	switch name {
	case "gswap":
		// On a trace shorter than the start-up delay gswap never starts:
		// there the grid has none.
		delay := ""
		if time.Duration(len(tr.Windows))*tr.Header.Window < policy.GswapS {
			delay = ",S=0"
		}
		for _, b := range []string{"0.05%", "0.1%", "0.2%", "0.5%", "1%", "2%", "5%", "10%"} {
			for _, k := range []int{90, 98} {
				for _, m := range []string{"1", ""} {
					s := fmt.Sprintf("gswap:budget=%s/min,K=%d", b, k)
					if m != "" {
						s += ",min=" + m
					}
					out = append(out, s+delay)
				}
			}
		}
	case "damos":
		for _, a := range []int{0, 1, 2, 4, 8, 16} {
			out = append(out, fmt.Sprintf("damos:min_age=%d,quota=inf", a))
			for _, g := range []string{"0.5%", "2%"} {
				out = append(out, fmt.Sprintf("damos:min_age=%d,quota=inf,goal=pr<=%s", a, g))
			}
			if q := len(tr.Pages) / 16; q >= 1 && a%2 == 0 && a <= 8 && a != 4 {
				out = append(out, fmt.Sprintf("damos:min_age=%d,quota=%d", a, q))
			}
		}
	case "senpai":
		// On a trace whose pages all fit under min_size's floor senpai
		// never reclaims: there the grid has no floor.
		floor := ""
		if int64(len(tr.Pages))*int64(tr.Header.PageSize) < policy.SenpaiMinSize {
			floor = ",min_size=0"
		}
		for _, p := range []string{"10us", "30us", "100us", "300us", "1ms", "10ms"} {
			for _, mp := range []string{"1%", "10%"} {
				out = append(out, fmt.Sprintf("senpai:pressure=%s,max_probe=%s%s", p, mp, floor))
			}
		}
	}
	return out
}

// ctlRow is one row of the table: a controller (or lru) at its defaults
// or at its best setting, and its run.
type ctlRow struct {
	name, kind, spec string
	r                *result.Result
}

const bestKind = "best at max_pr <= 2%"

// zramNS is the promotion cost senpai's pressure is modelled with: the
// built-in zram tier's mean swap-in latency (measured by mdk calibrate;
// --tier zram on the command line).
func zramNS(t *testing.T) float64 {
	z, ok := tier.Builtin("zram")
	if !ok {
		t.Fatal("no built-in zram tier")
	}
	return z.PromotionNs.Mean
}

// bestOf returns the index of the run with the most savings among those
// with max_pr <= 2% (ties to the lower max_pr, then the earlier), -1 if
// none meets it.
func bestOf(rs []*result.Result) int {
	best := -1
	for j, r := range rs {
		if r.MaxPR() <= 0.02 && (best < 0 || r.Saved > rs[best].Saved || r.Saved == rs[best].Saved && r.MaxPR() < rs[best].MaxPR()) {
			best = j
		}
	}
	return best
}

// controllerRows runs each controller of the table on tr at its defaults
// and over its grid (sim.RunControlled, two runs at a time), and lru over
// its default grid (mpc's one-pass curve, its best run again by sim.Run and
// required equal), and returns the rows: lru's best, then each
// controller's defaults and best.
func controllerRows(t *testing.T, tr *trace.Trace) []ctlRow {
	ctx := context.Background()
	w := tr.Header.Window
	var rows []ctlRow
	lru := policy.DefaultGrid("lru", w)
	rs, err := mpc.Generate(ctx, tr.NewReader(), lru, mpc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if b := bestOf(rs); b >= 0 {
		want := sim.Run(tr, lru[b])
		if want.Saved != rs[b].Saved || !slices.Equal(want.Promotions, rs[b].Promotions) {
			t.Fatalf("lru:%s: mpc's one pass saves %d with promotions %v, the simulator %d with %v", rs[b].Params, rs[b].Saved, rs[b].Promotions, want.Saved, want.Promotions)
		}
		rows = append(rows, ctlRow{"lru", bestKind, "lru:" + rs[b].Params, rs[b]})
	}
	o := policy.ControllerOptions{Window: w}
	for _, name := range []string{"senpai", "gswap", "damos"} {
		if name == "senpai" {
			o.PromotionNS = zramNS(t)
		} else {
			o.PromotionNS = 0
		}
		specs := append([]string{name}, controllerGrid(name, tr)...)
		runs := make([]*result.Result, len(specs))
		errs := make([]error, len(specs))
		var wg sync.WaitGroup
		for i := range 2 { // two at a time: the table is CPU-bound
			wg.Go(func() {
				for j := i; j < len(specs); j += 2 {
					c, err := policy.ParseController(specs[j], o)
					if err == nil {
						var got *sim.Controlled
						if got, err = sim.RunControlled(ctx, tr, c); err == nil {
							runs[j] = got.Result
						}
					}
					errs[j] = err
				}
			})
		}
		wg.Wait()
		for j, err := range errs {
			if err != nil {
				t.Fatalf("%s: %v", specs[j], err)
			}
		}
		rows = append(rows, ctlRow{name, "defaults", name + ":" + runs[0].Params, runs[0]})
		if b := bestOf(runs); b >= 0 { // the defaults first: ties go to them
			rows = append(rows, ctlRow{name, bestKind, specs[b], runs[b]})
		}
		if name == "damos" {
			checkDamosIsAge(t, tr, specs, runs)
		}
	}
	return rows
}

// checkDamosIsAge: damos with no quota and no goal is age at min_age,
// window by window (docs/policies.md, "damos": esz = 0 pages out every due
// page).
func checkDamosIsAge(t *testing.T, tr *trace.Trace, specs []string, runs []*result.Result) {
	for j, s := range specs {
		var a int
		if _, err := fmt.Sscanf(s, "damos:min_age=%d,quota=inf", &a); err != nil || s != fmt.Sprintf("damos:min_age=%d,quota=inf", a) {
			continue // a quota or a goal
		}
		want := sim.Run(tr, policy.AGE{A: a})
		if runs[j].Saved != want.Saved || !slices.Equal(runs[j].Promotions, want.Promotions) {
			t.Errorf("%s saves %d with promotions %v; age:A=%d saves %d with %v", s, runs[j].Saved, runs[j].Promotions, a, want.Saved, want.Promotions)
		}
	}
}

// coveringPPM is the smallest whole-ppm rate r whose OPP budgets
// floor(r x |A_w|) cover r's promotions in every window: max over the
// windows of ceil(promotions_w x 1e6 / |A_w|). OPP at it is the optimum of
// every policy within those budgets (SPEC section 2), r's run included.
func coveringPPM(r *result.Result) int64 {
	var ppm int64
	for w, p := range r.Promotions {
		if a := r.Accessed[w]; a > 0 {
			ppm = max(ppm, (p*policy.MaxPPM+a-1)/a)
		}
	}
	return ppm
}

// ctlCell is the best run of one policy at a max_pr, and its savings.
type ctlCell struct {
	r    *result.Result
	text string
}

// controllerTable computes tr's rows and, beside each, age's and paw's best
// settings of their default grids at the row's realised max_pr and OPP at
// the row's covering rate (mpc's curves), and checks what must hold: OPP
// saves at least as much as the row and as age's and paw's cells, and each
// controller's defaults are what `mdk sim` prints for them. It returns the
// table's lines.
func controllerTable(t *testing.T, name string, tr *trace.Trace) []string {
	rows := controllerRows(t, tr)
	w := tr.Header.Window
	var ss []policy.Setting
	ss = append(ss, policy.DefaultGrid("age", w)...)
	ss = append(ss, policy.DefaultGrid("paw", w)...)
	for _, r := range rows {
		ss = append(ss, policy.OPP{PPM: coveringPPM(r.r)})
	}
	rs, err := mpc.Generate(context.Background(), tr.NewReader(), ss, mpc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opp := rs[len(rs)-len(rows):]
	_, groups := result.Group(rs[:len(rs)-len(rows)])
	cell := func(policy string, x float64) ctlCell {
		b := result.Best(groups[policy], result.MaxPR, x)
		if b == nil {
			return ctlCell{text: "none meets it"}
		}
		return ctlCell{b, fmt.Sprintf("%.2f%% (%s)", 100*b.Savings(), b.Params)}
	}
	path := filepath.Join(t.TempDir(), "trace.mdkt")
	writeTrace(t, path, tr)
	var lines []string
	for i, r := range rows {
		x := r.r.MaxPR()
		age, paw := cell("age", x), cell("paw", x)
		for _, c := range []ctlRow{r, {name: "age", spec: "age:" + paramsOf(age.r), r: age.r}, {name: "paw", spec: "paw:" + paramsOf(paw.r), r: paw.r}} {
			if c.r != nil && c.r.Saved > opp[i].Saved {
				t.Errorf("%s: %s saves %d page-windows at max_pr %g, more than opp:%s's %d: OPP is not the optimum", name, c.spec, c.r.Saved, c.r.MaxPR(), opp[i].Params, opp[i].Saved)
			}
		}
		if r.kind == "defaults" {
			checkSimCLI(t, path, r)
		}
		lines = append(lines, fmt.Sprintf("| %s | %s, %s | `%s` | %.4f%% | %.2f%% | %s | %s | %.2f%% (%s) | %+.2f pts |",
			name, r.name, r.kind, r.spec, 100*x, 100*r.r.Savings(), age.text, paw.text, 100*opp[i].Savings(), opp[i].Params, 100*(opp[i].Savings()-r.r.Savings())))
	}
	return lines
}

func paramsOf(r *result.Result) string {
	if r == nil {
		return ""
	}
	return r.Params
}

// writeTrace writes tr to path in the binary format.
func writeTrace(t *testing.T, path string, tr *trace.Trace) {
	var buf bytes.Buffer
	w, err := trace.NewBinaryWriter(&buf, tr.Header)
	if err == nil {
		_, err = trace.Copy(w, tr.NewReader())
	}
	if err == nil {
		err = w.Close()
	}
	if err == nil {
		err = os.WriteFile(path, buf.Bytes(), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// checkSimCLI: `mdk sim TRACE SPEC --json` (with --tier zram for senpai)
// prints the row's point: its promotions per window and its saved
// page-windows.
func checkSimCLI(t *testing.T, path string, r ctlRow) {
	args := []string{"sim", path, r.name, "--json"}
	if r.name == "senpai" {
		args = append(args, "--tier", "zram")
	}
	var stdout, stderr bytes.Buffer
	if code := cli.Run(context.Background(), args, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("mdk %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
	}
	var got struct {
		Params     string  `json:"params"`
		Saved      int64   `json:"saved_page_windows"`
		MaxPR      float64 `json:"max_pr"`
		Promotions []int64 `json:"per_window_promotions"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("mdk %s: %v", strings.Join(args, " "), err)
	}
	if r.name+":"+got.Params != r.spec || got.Saved != r.r.Saved || got.MaxPR != r.r.MaxPR() || !slices.Equal(got.Promotions, r.r.Promotions) {
		t.Errorf("mdk %s prints %s:%s saving %d at max_pr %g, the table %s saving %d at %g", strings.Join(args, " "), r.name, got.Params, got.Saved, got.MaxPR, r.spec, r.r.Saved, r.r.MaxPR())
	}
}

// TestControllerTable computes docs/controllers.md's table and checks it
// (controllerTable): on every gen model and real trace, lru at its best
// capacity of its default grid, and each production controller at its
// published defaults and at its best setting for max_pr <= 2% among
// controllerGrid's (simulated by sim.RunControlled), each beside age's and
// paw's best settings (their default grids on mpc's curves) at the
// controller's realised max_pr and OPP at its covering rate. By default it
// runs on small gen traces (2,000 pages, 60 windows) and prints nothing;
// with MDK_CONTROLLER_TABLE=1 on the gen models at 10,000 pages (mdk gen's
// other defaults: 240 windows of 30 s) and the real traces, and prints the
// table:
//
//	MDK_CONTROLLER_TABLE=1 go test ./verify -run TestControllerTable -v -timeout 2h
//
// MDK_CONTROLLER_TRACES=gzip,w106 keeps the traces whose names contain one
// of the words.
func TestControllerTable(t *testing.T) {
	full := os.Getenv("MDK_CONTROLLER_TABLE") != ""
	cfg := gen.DefaultConfig
	cfg.Pages = 10000
	if !full {
		cfg.Pages, cfg.Windows = 2000, 60
	}
	if full {
		fmt.Println("| trace | controller | setting | max_pr | savings | age at that max_pr | paw | OPP | OPP − controller |")
		fmt.Println("|---|---|---|---|---|---|---|---|---|")
	}
	for _, n := range controllerTraces(t, cfg, full) {
		if only := os.Getenv("MDK_CONTROLLER_TRACES"); only != "" && !slices.ContainsFunc(strings.Split(only, ","), func(s string) bool { return strings.Contains(n.name, s) }) {
			continue
		}
		lines := controllerTable(t, n.name, n.tr)
		if full {
			fmt.Println(strings.Join(lines, "\n"))
		}
	}
}
