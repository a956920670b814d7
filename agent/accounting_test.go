package agent

import (
	"fmt"
	"strings"
	"testing"
)

// checkAccounting checks a run's side-by-side against its measured.csv
// rows, every check between numbers that come from different files or
// computations, so that each can fail:
//
//   - each row adds up: decided = skipped + reclaimed, reclaimed = out +
//     refused (measured.csv alone);
//   - the comparison read the rows it compares: its decided, promotions,
//     saved and kernel columns are measured.csv's;
//   - the refusals skipped.csv lists in a window are measured.csv's
//     refused count;
//   - measured.csv's promotions and saved page-windows equal the
//     simulator's prediction less the effects compare derived from
//     skipped.csv, plus the residual; with the measured side taken from
//     measured.csv rather than from the comparison, a comparison that
//     misread a column does not pass by construction.
func checkAccounting(rows []Row, c *Comparison) []string {
	var errs []string
	if len(rows) != len(c.Windows) {
		return []string{fmt.Sprintf("%d rows, %d compared windows", len(rows), len(c.Windows))}
	}
	var totP, totS int64
	for w, d := range c.Windows {
		r := rows[w]
		skipped := r.SkippedDry + r.SkippedSLO + r.SkippedPSI + r.SkippedLimit + r.SkippedSwap + r.SkippedGone
		if r.Decided != skipped+r.Reclaimed || r.Reclaimed != r.Out+r.Refused {
			errs = append(errs, fmt.Sprintf("window %d: decided %d = skipped %d + reclaimed %d, reclaimed = out %d + refused %d does not add up", w, r.Decided, skipped, r.Reclaimed, r.Out, r.Refused))
		}
		if d.Decided != r.Decided || d.Promotions != r.Promotions || d.Saved != r.Saved || d.KernelOut != r.KernelOut || d.KernelIn != r.KernelIn {
			errs = append(errs, fmt.Sprintf("window %d: the comparison's measured side %+v is not measured.csv's %+v", w, d, r))
		}
		if d.Refused != r.Refused {
			errs = append(errs, fmt.Sprintf("window %d: skipped.csv lists %d refusals, measured.csv %d", w, d.Refused, r.Refused))
		}
		if r.Promotions != d.PredPromotions-d.RefusedPromotions-d.SkippedPromotions-d.BackPromotions+d.ResidualPromotions ||
			r.Saved != d.PredSaved-d.RefusedSaved-d.SkippedSaved-d.BackSaved+d.ResidualSaved {
			errs = append(errs, fmt.Sprintf("window %d: the causes do not account for the difference: %+v", w, d))
		}
		totP += d.ResidualPromotions
		totS += d.ResidualSaved
	}
	if t := c.Total; t.ResidualPromotions != totP || t.ResidualSaved != totS || t.Window != len(c.Windows) {
		errs = append(errs, fmt.Sprintf("total residuals %d, %d over %d windows; the windows' sum %d, %d over %d", t.ResidualPromotions, t.ResidualSaved, t.Window, totP, totS, len(c.Windows)))
	}
	return errs
}

// TestCheckAccountingCanFail feeds checkAccounting a consistent run and
// broken ones: a comparison that read measured.csv's saved column as 0, a
// row that does not add up, a refusal skipped.csv does not list.
func TestCheckAccountingCanFail(t *testing.T) {
	rows := []Row{{Window: 0, Decided: 3, Reclaimed: 3, Out: 2, Refused: 1, Promotions: 0, Saved: 0},
		{Window: 1, Decided: 1, SkippedDry: 1, Promotions: 1, Saved: 1}}
	good := func() *Comparison {
		c := &Comparison{Windows: []WindowDiff{
			{Window: 0, Decided: 3, PredDecided: 3, Refused: 1},
			{Window: 1, Decided: 1, PredDecided: 1, PredPromotions: 1, Promotions: 1, PredSaved: 2, RefusedSaved: 1, Saved: 1},
		}}
		c.Total = WindowDiff{Window: 2}
		return c
	}
	if errs := checkAccounting(rows, good()); len(errs) != 0 {
		t.Fatalf("a consistent run: %v", errs)
	}
	for name, broken := range map[string]func([]Row, *Comparison) ([]Row, *Comparison){
		"saved read as 0": func(r []Row, c *Comparison) ([]Row, *Comparison) {
			c.Windows[1].Saved = 0
			c.Windows[1].ResidualSaved = -1 // the remainder, as compare defines it
			c.Total.ResidualSaved = -1
			return r, c
		},
		"row does not add up": func(r []Row, c *Comparison) ([]Row, *Comparison) {
			r = append([]Row(nil), r...)
			r[0].Out = 1
			return r, c
		},
		"refusal not listed": func(r []Row, c *Comparison) ([]Row, *Comparison) {
			c.Windows[0].Refused = 0
			return r, c
		},
		"total residual": func(r []Row, c *Comparison) ([]Row, *Comparison) {
			c.Total.ResidualPromotions = 5
			return r, c
		},
	} {
		r, c := broken(rows, good())
		if errs := checkAccounting(r, c); len(errs) == 0 {
			t.Errorf("%s: checkAccounting found nothing", name)
		} else {
			t.Logf("%s: %s", name, strings.Join(errs, "; "))
		}
	}
}
