package report

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"mdk/result"
)

// Curve is one policy's memory performance curve: its settings' results.
type Curve struct {
	Policy  string
	Results []*result.Result
}

// PlotOptions style a memory-performance-curve figure.
type PlotOptions struct {
	X       result.Stat // x statistic; "" means max_pr
	LogX    bool        // logarithmic x axis (see WritePlot for x = 0)
	Targets []float64   // promotion-rate targets as fractions, drawn as vertical lines
	Title   string
	// XOf and YOf, if set, replace the x statistic and the savings: each
	// is a fraction of a result, drawn in percent and named by XLabel and
	// YLabel (a tier's slowdown and net savings, for instance).
	XOf, YOf       func(*result.Result) float64
	XLabel, YLabel string
}

// WritePlot writes the memory performance curves as a figure in format "svg"
// or "png": one series per policy, a point per setting and a line, sorted by
// x, through the policy's Pareto frontier (the settings that no other setting
// of the policy beats on both axes: lower or equal x and more savings; for a
// one-parameter policy usually every setting),
// x = the promotion-rate statistic in percent, y = savings in percent, the
// targets as dashed vertical lines and the legend to the right of the data
// area. Text is set in Liberation Sans.
//
// On a logarithmic x axis a point with x = 0 cannot be placed; such points
// are drawn on the axis' left end, one decade below the smallest positive x
// (or target), at a tick labelled "0". Nothing between that tick and the
// next decade is data.
func WritePlot(w io.Writer, format string, curves []Curve, opts PlotOptions) error {
	st := opts.X
	if st == "" {
		st = result.MaxPR
	}
	f := &figure{
		title:  opts.Title,
		xLabel: statLabel(st) + " (%)",
		yLabel: "savings (% of alive page-windows)",
		logX:   opts.LogX,
		yFrom0: true,
	}
	xOf := func(r *result.Result) float64 { return r.Stat(st) }
	yOf := (*result.Result).Savings
	if opts.XOf != nil {
		xOf, f.xLabel = opts.XOf, opts.XLabel+" (%)"
	}
	if opts.YOf != nil {
		yOf, f.yLabel = opts.YOf, opts.YLabel
	}
	for _, c := range curves {
		s := series{name: c.Policy, points: true, line: true}
		for _, r := range c.Results {
			s.xy = append(s.xy, plotter.XY{X: 100 * xOf(r), Y: 100 * yOf(r)})
		}
		slices.SortStableFunc(s.xy, func(a, b plotter.XY) int { return cmp.Or(cmp.Compare(a.X, b.X), cmp.Compare(a.Y, b.Y)) })
		for _, i := range frontier(s.xy, func(p plotter.XY) (float64, float64) { return p.X, p.Y }) {
			s.lineXY = append(s.lineXY, s.xy[i])
		}
		f.series = append(f.series, s)
	}
	if len(opts.Targets) > 0 {
		var names []string
		for _, t := range opts.Targets {
			f.vlines = append(f.vlines, refLine{at: 100 * t})
			names = append(names, formatPercent(t))
		}
		f.vlines[0].label = "target " + strings.Join(names, ", ")
		if len(names) > 1 {
			f.vlines[0].label = "targets " + strings.Join(names, ", ")
		}
	}
	return f.write(w, format)
}

// statLabel names a statistic for an axis.
func statLabel(st result.Stat) string {
	switch st {
	case result.MaxPR:
		return "max promotion rate"
	case result.P99PR:
		return "p99 promotion rate"
	case result.P98PR:
		return "p98 promotion rate"
	case result.MeanPR:
		return "mean promotion rate"
	}
	return string(st)
}

// formatPercent prints a fraction as a percentage with the fewest digits
// that round-trip ("1%", "0.5%").
func formatPercent(f float64) string {
	return strconv.FormatFloat(100*f, 'g', 6, 64) + "%"
}

// palette is the Okabe-Ito colour-blind-safe palette, shared with the HTML
// report's charts (report.js) so a policy has one colour everywhere.
var palette = []color.RGBA{
	{0x00, 0x72, 0xB2, 0xff}, // blue
	{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	{0x00, 0x9E, 0x73, 0xff}, // bluish green
	{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	{0xE6, 0x9F, 0x00, 0xff}, // orange
	{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	{0x00, 0x00, 0x00, 0xff}, // black
	{0xF0, 0xE4, 0x42, 0xff}, // yellow
}

var glyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}, draw.PlusGlyph{}, draw.CrossGlyph{}}

// sans is the figures' typeface; gonum/plot registers the Liberation fonts.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// series is one named line or point set of a figure.
type series struct {
	name   string
	xy     plotter.XYs
	lineXY plotter.XYs // the line's points if not xy
	points bool
	line   bool
}

// frontier returns the indexes of the Pareto frontier of points sorted by
// x ascending: each point whose y is above every y at a lower or equal x.
// Of points with equal x only the highest can be on it.
func frontier[T any](pts []T, xy func(T) (float64, float64)) []int {
	var out []int
	best := math.Inf(-1)
	for i := 0; i < len(pts); i++ {
		x, y := xy(pts[i])
		// The highest y among the points with this x.
		j := i
		for k := i + 1; k < len(pts); k++ {
			xk, yk := xy(pts[k])
			if xk != x {
				break
			}
			if yk > y {
				j, y = k, yk
			}
			i = k
		}
		if y > best {
			out = append(out, j)
			best = y
		}
	}
	return out
}

// refLine is a labelled reference line.
type refLine struct {
	at    float64
	label string
}

// figure is what every static chart of the report is drawn from.
type figure struct {
	title, xLabel, yLabel string
	logX, logY            bool
	yFrom0                bool
	series                []series
	vlines, hlines        []refLine
	// bars, if set, makes a grouped bar chart over the nominal x labels
	// barLabels (series' Y values are the bar heights; X is ignored).
	barLabels []string
}

const (
	figWidth  = 7 * vg.Inch
	figHeight = 4 * vg.Inch
)

// write renders f as "svg" or "png".
func (f *figure) write(w io.Writer, format string) error {
	var c vg.CanvasWriterTo
	switch format {
	case "svg":
		c = vgsvg.New(figWidth, figHeight)
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(figWidth, figHeight), vgimg.UseDPI(200), vgimg.UseBackgroundColor(color.White))}
	default:
		return fmt.Errorf("report: unknown figure format %q (want svg or png)", format)
	}
	if err := f.draw(draw.New(c)); err != nil {
		return err
	}
	_, err := c.WriteTo(w)
	return err
}

func (f *figure) draw(dc draw.Canvas) error {
	p := plot.New()
	p.Title.Text = f.title
	p.Title.TextStyle.Font = font.From(sans, 13)
	p.Title.Padding = vg.Points(6)
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = font.From(sans, 11)
		ax.Tick.Label.Font = font.From(sans, 10)
		ax.Padding = vg.Points(2)
	}
	p.X.Tick.Marker = niceTicks{}
	p.Y.Tick.Marker = niceTicks{}
	p.X.Label.Text = f.xLabel
	p.Y.Label.Text = f.yLabel
	p.Add(plotter.NewGrid())

	leg := plot.NewLegend()
	leg.TextStyle.Font = font.From(sans, 10)
	leg.Top, leg.Left = true, true
	leg.ThumbnailWidth = vg.Points(20)
	leg.Padding = vg.Points(3)

	// Data range, for the log floor and the reference lines.
	xmin, xmax := math.Inf(1), math.Inf(-1)
	minPos := math.Inf(1)
	note := func(x float64) {
		xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
		if x > 0 {
			minPos = math.Min(minPos, x)
		}
	}
	for _, s := range f.series {
		for _, pt := range s.xy {
			note(pt.X)
		}
	}
	for _, l := range f.vlines {
		note(l.at)
	}
	floor := 0.0
	if f.logX {
		if math.IsInf(minPos, 1) {
			minPos = 1
		}
		floor = math.Pow(10, math.Floor(math.Log10(minPos))-1)
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = zeroLogTicks{floor: floor}
	}
	fixX := func(x float64) float64 {
		if f.logX && x <= 0 {
			return floor
		}
		return x
	}

	if f.barLabels != nil {
		p.NominalX(f.barLabels...)
		n := len(f.series)
		width := vg.Points(math.Max(2, 300/float64(max(1, n*len(f.barLabels)))))
		for i, s := range f.series {
			vals := make(plotter.Values, len(s.xy))
			for k, pt := range s.xy {
				vals[k] = pt.Y
			}
			b, err := plotter.NewBarChart(vals, width)
			if err != nil {
				return err
			}
			b.Color = palette[i%len(palette)]
			b.LineStyle.Width = 0
			b.Offset = vg.Length(float64(i)-float64(n-1)/2) * width
			p.Add(b)
			leg.Add(s.name, b)
		}
	}
	for i, s := range f.series {
		if f.barLabels != nil {
			break
		}
		xy := make(plotter.XYs, len(s.xy))
		for k, pt := range s.xy {
			xy[k] = plotter.XY{X: fixX(pt.X), Y: pt.Y}
		}
		col := palette[i%len(palette)]
		var thumbs []plot.Thumbnailer
		if s.line {
			lxy := xy
			if s.lineXY != nil {
				lxy = make(plotter.XYs, len(s.lineXY))
				for k, pt := range s.lineXY {
					lxy[k] = plotter.XY{X: fixX(pt.X), Y: pt.Y}
				}
			}
			l, err := plotter.NewLine(lxy)
			if err != nil {
				return fmt.Errorf("report: series %s: %w", s.name, err)
			}
			l.Color = col
			l.Width = vg.Points(1.5)
			p.Add(l)
			thumbs = append(thumbs, l)
		}
		if s.points {
			sc, err := plotter.NewScatter(xy)
			if err != nil {
				return fmt.Errorf("report: series %s: %w", s.name, err)
			}
			sc.Color = col
			sc.Shape = glyphs[i%len(glyphs)]
			sc.Radius = vg.Points(2.5)
			p.Add(sc)
			thumbs = append(thumbs, sc)
		}
		leg.Add(s.name, thumbs...)
	}
	if f.yFrom0 {
		p.Y.Min = math.Min(p.Y.Min, 0)
	}
	if f.logX {
		p.X.Min = floor
		if p.X.Max <= floor {
			p.X.Max = floor * 100
		}
	}
	for _, l := range f.vlines {
		x := fixX(l.at)
		p.X.Min, p.X.Max = math.Min(p.X.Min, x), math.Max(p.X.Max, x)
		ln, err := plotter.NewLine(plotter.XYs{{X: x, Y: p.Y.Min}, {X: x, Y: p.Y.Max}})
		if err != nil {
			return err
		}
		ln.Color = color.Gray{0x70}
		ln.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		ln.Width = vg.Points(1)
		p.Add(ln)
		if l.label != "" {
			leg.Add(l.label, ln)
		}
	}
	for _, l := range f.hlines {
		ln, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: l.at}, {X: p.X.Max, Y: l.at}})
		if err != nil {
			return err
		}
		ln.Color = color.Gray{0x70}
		ln.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(ln)
		leg.Add(l.label, ln)
	}

	// The legend goes in a column right of the plot, outside the data area.
	var legW vg.Length
	for _, s := range f.series {
		legW = max(legW, leg.TextStyle.Width(s.name))
	}
	for _, l := range append(slices.Clone(f.vlines), f.hlines...) {
		legW = max(legW, leg.TextStyle.Width(l.label))
	}
	legW += leg.ThumbnailWidth + vg.Points(16)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	p.Draw(draw.Crop(dc, 0, -legW, 0, 0))
	lc := draw.Crop(dc, dc.Size().X-legW+vg.Points(8), 0, 0, -vg.Points(24))
	leg.Draw(lc)
	return nil
}

// zeroLogTicks are decade ticks for a log axis whose lowest decade, floor,
// stands for x = 0 and is labelled "0".
type zeroLogTicks struct{ floor float64 }

func (t zeroLogTicks) Ticks(lo, hi float64) []plot.Tick {
	// The "0" tick, then gonum's decade ticks from the next decade up
	// (minor ticks between "0" and the first real decade mean nothing).
	out := []plot.Tick{{Value: t.floor, Label: "0"}}
	for _, tk := range (plot.LogTicks{Prec: -1}).Ticks(t.floor*10, hi) {
		if tk.Value >= t.floor*10*(1-1e-9) && tk.Value <= hi*(1+1e-9) {
			out = append(out, tk)
		}
	}
	return out
}

var _ plot.Ticker = zeroLogTicks{}

// niceTicks are 4 to 10 labelled ticks at 1, 2, 2.5 or 5 times a power of
// ten, with unlabelled minor ticks between them.
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	span := hi - lo
	var step float64
	for e := math.Floor(math.Log10(span)) - 1; step == 0; e++ {
		for _, m := range []float64{1, 2, 2.5, 5} {
			if st := m * math.Pow(10, e); span/st <= 8 {
				step = st
				break
			}
		}
	}
	prec := max(0, -int(math.Floor(math.Log10(step)))+1)
	var ticks []plot.Tick
	for i := math.Ceil(lo / step); i*step <= hi*(1+1e-12); i++ {
		v := i * step
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		label := strconv.FormatFloat(v, 'f', prec, 64)
		if strings.Contains(label, ".") {
			label = strings.TrimRight(strings.TrimRight(label, "0"), ".")
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: label})
		if m := v + step/2; m <= hi {
			ticks = append(ticks, plot.Tick{Value: m})
		}
	}
	if m := math.Ceil(lo/step)*step - step/2; m >= lo {
		ticks = append(ticks, plot.Tick{Value: m})
	}
	return ticks
}
