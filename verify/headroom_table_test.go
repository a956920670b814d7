package verify

import (
	"context"
	"fmt"
	"os"
	"testing"

	"mdk/gen"
	"mdk/headroom"
	"mdk/mpc"
	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

// tableTraces returns every gen model's default trace and the real traces
// of importer/testdata (realTraces).
func tableTraces(t *testing.T) []namedTrace {
	var out []namedTrace
	for _, m := range gen.Models {
		cfg := gen.DefaultConfig
		cfg.Model = m
		tr, err := trace.ReadAll(gen.NewReader(cfg))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, namedTrace{"gen " + m, tr})
	}
	return append(out, realTraces(t)...)
}

// share returns the points of class k in buckets of split dim whose label
// is one of labels, as a fraction of the class's points.
func share(c *headroom.Comparison, dim string, k headroom.Class, keep func(label string) bool) float64 {
	var in, all int64
	for _, sp := range c.Splits {
		if sp.Dim != dim {
			continue
		}
		for _, b := range sp.Buckets {
			all += b.Classes[k].Lost()
			if keep(b.Label) {
				in += b.Classes[k].Lost()
			}
		}
	}
	if all == 0 {
		return 0
	}
	return float64(in) / float64(all)
}

// TestHeadroomTable prints docs/headroom.md's decomposition: on every gen
// model and real trace, age, paw and pace at their best setting for
// max_pr <= 2% (chosen on mpc's curves, equal to the simulator's) against
// OPP at their own max_pr, in the simulator. It runs only with
// MDK_HEADROOM_TABLE=1:
//
//	MDK_HEADROOM_TABLE=1 go test ./verify -run TestHeadroomTable -v -timeout 1h
func TestHeadroomTable(t *testing.T) {
	if os.Getenv("MDK_HEADROOM_TABLE") == "" {
		t.Skip("set MDK_HEADROOM_TABLE=1 to print the table")
	}
	names := []string{"age", "paw", "pace"}
	if extra := os.Getenv("MDK_HEADROOM_POLICIES"); extra != "" {
		names = append(names, extra)
	}
	fmt.Println("| trace | policy | setting | savings | vs | OPP savings | headroom | waiting | missed | spent | missed on first touches | waiting in gaps of 16+ | spent promotions / setting's |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, n := range tableTraces(t) {
		var ss []policy.Setting
		for _, name := range names {
			ss = append(ss, policy.DefaultGrid(name, n.tr.Header.Window)...)
		}
		rs, err := mpc.Generate(context.Background(), n.tr.NewReader(), ss, mpc.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, groups := result.Group(rs)
		for _, name := range names {
			b := result.Best(groups[name], result.MaxPR, 0.02)
			if b == nil {
				continue
			}
			s, err := policy.Parse(b.Policy+":"+b.Params, n.tr.Header.Window)
			if err != nil {
				t.Fatal(err)
			}
			c, err := headroom.CompareOPP(context.Background(), n.tr, s[0], result.MaxPR, headroom.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if c.Setting.Saved != b.Saved {
				t.Fatalf("%s %s: simulator saves %d, mpc %d", n.name, policy.String(s[0]), c.Setting.Saved, b.Saved)
			}
			inf := share(c, "prior", headroom.Missed, func(l string) bool { return l == "inf" })
			long := share(c, "idle", headroom.Later, func(l string) bool {
				return len(l) > 0 && l[0] != '0' && l != "1" && l != "2-3" && l != "4-7" && l != "8-15"
			})
			sp := c.Classes[headroom.Spent].Promotions[0]
			fmt.Printf("| %s | %s | %s | %.2f%% | %s | %.2f%% | %+.2f | %+.2f | %+.2f | %+.2f | %.0f%% | %.0f%% | %d / %d |\n",
				n.name, name, b.Params, 100*c.Setting.Savings(), c.Ref.Params, 100*c.Ref.Savings(), c.Points(c.Headroom()),
				c.Points(c.Classes[headroom.Later].Lost()), c.Points(c.Classes[headroom.Missed].Lost()), c.Points(c.Classes[headroom.Spent].Lost()),
				100*inf, 100*long, sp, c.Setting.TotalPromotions())
		}
	}
}
