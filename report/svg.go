package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot/plotter"

	"mdk/internal/outfile"
	"mdk/result"
)

// WriteSVGs writes each chart of the report of data as its own SVG figure
// in dir (created if missing) and returns the files' paths, in report
// order: mpc.svg, then per timeline setting timeline-SETTING-pr.svg and
// timeline-SETTING-pages.svg, the agent run's agent-promotions.svg and
// agent-saved.svg, with a recording predicted-promotions.svg,
// predicted-saved.svg and predicted-memory.svg, then working-set.svg and
// gaps.svg.
// Per-window series are down-sampled like the HTML report's.
func WriteSVGs(dir string, data *Data, opts Options) ([]string, error) {
	if data == nil || data.Stats == nil || len(data.Results) == 0 {
		return nil, fmt.Errorf("report: no results to draw")
	}
	opts = opts.withDefaults()
	chosen, _, err := chooseTimelines(data.Results, opts)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	save := func(name string, draw func(*bytes.Buffer) error) error {
		var buf bytes.Buffer
		if err := draw(&buf); err != nil {
			return fmt.Errorf("report: %s: %w", name, err)
		}
		p := filepath.Join(dir, name)
		if err := outfile.WriteFile(p, buf.Bytes()); err != nil {
			return err
		}
		paths = append(paths, p)
		return nil
	}

	names, groups := result.Group(data.Results)
	var curves []Curve
	for _, n := range names {
		curves = append(curves, Curve{Policy: n, Results: groups[n]})
	}
	if err := save("mpc.svg", func(b *bytes.Buffer) error {
		return WritePlot(b, "svg", curves, PlotOptions{X: opts.X, LogX: opts.LogX, Targets: opts.Targets, Title: "Memory performance curves"})
	}); err != nil {
		return paths, err
	}

	win := "window (" + data.Stats.Window + " each)"
	pl := buildPayload(data, opts, chosen, nil)
	line := func(name string, pts [][2]any) series {
		s := series{name: name, line: true}
		for _, p := range pts {
			s.xy = append(s.xy, plotter.XY{X: toFloat(p[0]), Y: toFloat(p[1])})
		}
		return s
	}
	for _, t := range pl.Timelines {
		base := "timeline-" + fileSafe(t.Label)
		f := &figure{title: "Promotion rate: " + t.Label, xLabel: win, yLabel: "promotion rate (%)", yFrom0: true,
			series: []series{line("promotion rate", t.PR)}}
		if len(opts.Targets) > 0 {
			f.hlines = []refLine{{at: 100 * opts.Targets[0], label: "target " + formatPercent(opts.Targets[0])}}
		}
		if err := save(base+"-pr.svg", func(b *bytes.Buffer) error { return f.write(b, "svg") }); err != nil {
			return paths, err
		}
		g := &figure{title: "Pages: " + t.Label, xLabel: win, yLabel: "pages", yFrom0: true,
			series: []series{line("resident", t.Resident), line("saved", t.Saved), line("accessed", t.Accessed)}}
		if err := save(base+"-pages.svg", func(b *bytes.Buffer) error { return g.write(b, "svg") }); err != nil {
			return paths, err
		}
	}
	if a := pl.Agent; a != nil {
		for _, f := range []*figure{
			{title: "Agent run " + a.Setting + ": promotions", xLabel: win, yLabel: "promotions", yFrom0: true,
				series: []series{line("predicted", a.PredPromotions), line("measured", a.Promotions)}},
			{title: "Agent run " + a.Setting + ": saved pages", xLabel: win, yLabel: "saved pages", yFrom0: true,
				series: []series{line("predicted", a.PredSaved), line("measured", a.Saved)}},
		} {
			name := "agent-promotions.svg"
			if strings.HasSuffix(f.title, "saved pages") {
				name = "agent-saved.svg"
			}
			if err := save(name, func(b *bytes.Buffer) error { return f.write(b, "svg") }); err != nil {
				return paths, err
			}
		}
	}
	if q := pl.Predicted; q != nil {
		four := func(rec, al, cf, meas [][2]any) []series {
			return []series{line("recorded", rec), line("recorded, aligned", al), line("counterfactual", cf), line("measured", meas)}
		}
		figs := []struct {
			name string
			f    *figure
		}{
			{"predicted-promotions.svg", &figure{title: "Predicted from a recording " + q.Setting + ": promotions", xLabel: win, yLabel: "promotions",
				yFrom0: true, series: four(q.RecPromotions, q.AlignedProm, q.CfPromotions, q.MeasPromotions)}},
			{"predicted-saved.svg", &figure{title: "Predicted from a recording " + q.Setting + ": saved pages", xLabel: win, yLabel: "saved pages",
				yFrom0: true, series: four(q.RecSaved, q.AlignedSaved, q.CfSaved, q.MeasSaved)}},
		}
		mem := &figure{title: "Memory as the kernel counts it", xLabel: win, yLabel: "MiB", yFrom0: true}
		for _, m := range q.Memory {
			mem.series = append(mem.series, line(m.Name, m.Data))
		}
		figs = append(figs, struct {
			name string
			f    *figure
		}{"predicted-memory.svg", mem})
		for _, f := range figs {
			if err := save(f.name, func(b *bytes.Buffer) error { return f.f.write(b, "svg") }); err != nil {
				return paths, err
			}
		}
	}
	ws := &figure{title: "Working set", xLabel: win, yLabel: "pages", yFrom0: true,
		series: []series{line("accessed", pl.Accessed), line("alive", pl.Alive)}}
	if err := save("working-set.svg", func(b *bytes.Buffer) error { return ws.write(b, "svg") }); err != nil {
		return paths, err
	}
	gaps := &figure{title: "Gap lengths", xLabel: "idle length (windows)", yLabel: "gaps", yFrom0: true, barLabels: pl.GapLabels}
	for _, s := range []struct {
		name string
		c    []int64
	}{{"closed", pl.ClosedGaps}, {"open", pl.OpenGaps}} {
		sr := series{name: s.name}
		for i, c := range s.c {
			sr.xy = append(sr.xy, plotter.XY{X: float64(i), Y: float64(c)})
		}
		gaps.series = append(gaps.series, sr)
	}
	if len(pl.GapLabels) > 0 {
		if err := save("gaps.svg", func(b *bytes.Buffer) error { return gaps.write(b, "svg") }); err != nil {
			return paths, err
		}
	}
	return paths, nil
}

func toFloat(v any) float64 {
	switch v := v.(type) {
	case int:
		return float64(v)
	case int64:
		return float64(v)
	case float64:
		return v
	}
	panic(fmt.Sprintf("report: invariant violation: point value of type %T", v))
}

// fileSafe turns a setting label such as "paw:P=5,wait=2" into a file-name
// part ("paw_P=5_wait=2").
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '=', r == '.', r == '-':
			return r
		}
		return '_'
	}, s)
}
