package headroom

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"mdk/result"
)

// Top returns the split's buckets with the n largest shares of the
// headroom (missed and later page-windows lost, plus spent promotions; ties
// in key order) in key order, and the others summed into one bucket
// labelled "other (K)" (nil if none). n <= 0 keeps every bucket.
func (sp Split) Top(n int) (top []*Bucket, other *Bucket) {
	if n <= 0 || len(sp.Buckets) <= n {
		return sp.Buckets, nil
	}
	weight := func(b *Bucket) int64 {
		return b.Classes[Missed].Lost() + b.Classes[Later].Lost() + b.Classes[Spent].Promotions[0]
	}
	idx := make([]int, len(sp.Buckets))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(weight(sp.Buckets[b]), weight(sp.Buckets[a])) })
	keep := idx[:n]
	slices.Sort(keep)
	for _, i := range keep {
		top = append(top, sp.Buckets[i])
	}
	other = &Bucket{Label: fmt.Sprintf("other (%d)", len(sp.Buckets)-n)}
	for _, i := range idx[n:] {
		for k := range NumClasses {
			other.Classes[k].add(sp.Buckets[i].Classes[k])
		}
	}
	return top, other
}

// lostShare returns the share of the reference's savings in b that the
// setting does not get (all classes), in percent, and whether the
// reference saves anything there.
func lostShare(b *Bucket) (float64, bool) {
	var lost, ref int64
	for _, x := range b.Classes {
		lost += x.Lost()
		ref += x.Saved[1]
	}
	if ref == 0 {
		return 0, false
	}
	return 100 * float64(lost) / float64(ref), true
}

var dimTitles = map[string]string{
	"prior":   "prior reuse distance d at the touch (windows)",
	"idle":    "idle length g (windows)",
	"age":     "life's age at the touch (windows)",
	"touches": "life's touches up to the gap's",
	"window":  "window of the touch",
	"space":   "address space",
	"region":  "memory region",
}

// WriteText prints c for a person: the two runs, the classes with their
// share of the headroom, then every split of the missed, later and spent
// gaps (buckets without any left out); space and region keep their top
// largest buckets (0: all).
func WriteText(w io.Writer, c *Comparison, top int) error {
	s, r := c.Setting, c.Ref
	name := func(x *result.Result) string { return x.Policy + ":" + x.Params }
	var b strings.Builder
	fmt.Fprintf(&b, "setting    %-18s saved %d of %d page-windows (%.2f%%), %d promotions, max_pr %s\n",
		name(s), s.Saved, s.Alive, 100*s.Savings(), s.TotalPromotions(), result.FormatFloat(s.MaxPR()))
	fmt.Fprintf(&b, "reference  %-18s saved %d of %d page-windows (%.2f%%), %d promotions, max_pr %s\n",
		name(r), r.Saved, r.Alive, 100*r.Savings(), r.TotalPromotions(), result.FormatFloat(r.MaxPR()))
	fmt.Fprintf(&b, "headroom   %+.2f pts (%d page-windows)\n\n", c.Points(c.Headroom()), c.Headroom())
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "class\tgaps\tsaved setting\tsaved ref\tpromotions setting\tpromotions ref\theadroom")
	row := func(label string, x Tally) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%+.2f pts\n", label, x.Gaps, x.Saved[0], x.Saved[1], x.Promotions[0], x.Promotions[1], c.Points(x.Lost()))
	}
	for k := range NumClasses {
		row(k.String(), c.Classes[k])
	}
	row("total", c.Total())
	tw.Flush()
	for _, sp := range c.Splits {
		bs := sp.Buckets
		if sp.Dim == "space" || sp.Dim == "region" {
			var other *Bucket
			if bs, other = sp.Top(top); other != nil {
				bs = append(slices.Clone(bs), other)
			}
		}
		title := dimTitles[sp.Dim]
		if sp.Dim == "region" {
			title += ": " + c.RegionsFrom
		}
		fmt.Fprintf(&b, "\nby %s:\n", title)
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, sp.Dim+"\tmissed gaps\tmissed\tlater gaps\tlater\tspent gaps\tspent promotions\tspent\tlost of ref")
		for _, bk := range bs {
			m, l, sx := bk.Classes[Missed], bk.Classes[Later], bk.Classes[Spent]
			if m.Gaps+l.Gaps+sx.Gaps == 0 {
				continue // nothing to act on here
			}
			share := "-"
			if x, ok := lostShare(bk); ok {
				share = fmt.Sprintf("%.1f%%", x)
			}
			fmt.Fprintf(tw, "%s\t%d\t%+.2f pts\t%d\t%+.2f pts\t%d\t%d\t%+.2f pts\t%s\n", bk.Label,
				m.Gaps, c.Points(m.Lost()), l.Gaps, c.Points(l.Lost()), sx.Gaps, sx.Promotions[0], c.Points(sx.Lost()), share)
		}
		tw.Flush()
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// JSON is the comparison as mdk headroom --json prints it.
type JSON struct {
	Setting  result.Record           `json:"setting"`
	Ref      result.Record           `json:"reference"`
	Headroom int64                   `json:"headroom_page_windows"`
	Points   float64                 `json:"headroom_pts"`
	Classes  map[string]Tally        `json:"classes"`
	Splits   map[string][]JSONBucket `json:"splits"`
}

// JSONBucket is one bucket of a split in [JSON].
type JSONBucket struct {
	Label   string           `json:"label"`
	Classes map[string]Tally `json:"classes"`
}

func classMap(ts [NumClasses]Tally) map[string]Tally {
	m := map[string]Tally{}
	for k := range NumClasses {
		m[k.Key()] = ts[k]
	}
	return m
}

// WriteJSON prints c as one [JSON] object.
func WriteJSON(w io.Writer, c *Comparison) error {
	j := JSON{
		Setting: c.Setting.Record(false), Ref: c.Ref.Record(false),
		Headroom: c.Headroom(), Points: c.Points(c.Headroom()),
		Classes: classMap(c.Classes), Splits: map[string][]JSONBucket{},
	}
	for _, sp := range c.Splits {
		bs := []JSONBucket{}
		for _, b := range sp.Buckets {
			bs = append(bs, JSONBucket{Label: b.Label, Classes: classMap(b.Classes)})
		}
		j.Splits[sp.Dim] = bs
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}
