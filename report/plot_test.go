package report

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mdk/result"
)

// svgTexts returns the character data of every <text> element of an SVG.
func svgTexts(t *testing.T, svg []byte) []string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var texts []string
	depth := 0
	var cur strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG does not parse as XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if tok.Name.Local == "text" {
				depth++
				cur.Reset()
			}
		case xml.CharData:
			if depth > 0 {
				cur.Write(tok)
			}
		case xml.EndElement:
			if tok.Name.Local == "text" {
				depth--
				texts = append(texts, strings.TrimSpace(cur.String()))
			}
		}
	}
	return texts
}

func curvesOf(rs []*result.Result) []Curve {
	names, groups := result.Group(rs)
	var cs []Curve
	for _, n := range names {
		cs = append(cs, Curve{Policy: n, Results: groups[n]})
	}
	return cs
}

func TestWritePlotSVG(t *testing.T) {
	rs := testResults(t)
	curves := curvesOf(rs)
	for _, logX := range []bool{false, true} {
		var buf bytes.Buffer
		opts := PlotOptions{X: result.P99PR, LogX: logX, Targets: []float64{0.01, 0.02}, Title: "Curves"}
		if err := WritePlot(&buf, "svg", curves, opts); err != nil {
			t.Fatal(err)
		}
		texts := svgTexts(t, buf.Bytes())
		// Legend: one entry per policy, one per target.
		for _, c := range curves {
			if n := count(texts, c.Policy); n != 1 {
				t.Errorf("logX=%v: legend entry %q appears %d times, want 1 (texts %q)", logX, c.Policy, n, texts)
			}
		}
		for _, want := range []string{"targets 1%, 2%", "p99 promotion rate (%)", "savings (% of alive page-windows)", "Curves"} {
			if !slices.Contains(texts, want) {
				t.Errorf("logX=%v: text %q missing from the SVG (texts %q)", logX, want, texts)
			}
		}
		if !strings.Contains(buf.String(), "Liberation Sans") && !strings.Contains(buf.String(), "LiberationSans") {
			t.Errorf("logX=%v: SVG does not use Liberation Sans", logX)
		}
		// "0" labels the y axis' first tick; on a log x axis it also labels x's.
		if zeros := count(texts, "0"); logX && zeros != 2 || !logX && zeros < 1 {
			t.Errorf("log axis: no tick labelled 0 for the x = 0 points (texts %q)", texts)
		}
	}
}

func count(xs []string, x string) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

func TestWritePlotPNG(t *testing.T) {
	var buf bytes.Buffer
	if err := WritePlot(&buf, "png", curvesOf(testResults(t)), PlotOptions{Targets: []float64{0.02}}); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatalf("PNG does not decode: %v", err)
	}
	b := img.Bounds()
	if b.Dx() < 1000 || b.Dy() < 500 {
		t.Errorf("PNG is %dx%d, want a print-size figure", b.Dx(), b.Dy())
	}
	// Not blank: dark pixels (text, axes) and the first two palette colours
	// (the first two series) must all be present.
	var dark int
	seen := map[[3]uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0x4000 && g < 0x4000 && bl < 0x4000 {
				dark++
			}
			seen[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
		}
	}
	if dark < 500 {
		t.Errorf("only %d dark pixels: no text or axes drawn", dark)
	}
	for _, c := range palette[:2] {
		if !seen[[3]uint32{uint32(c.R), uint32(c.G), uint32(c.B)}] {
			t.Errorf("series colour %v not found in the PNG", c)
		}
	}
}

func TestWritePlotErrors(t *testing.T) {
	if err := WritePlot(io.Discard, "gif", nil, PlotOptions{}); err == nil || !strings.Contains(err.Error(), "gif") {
		t.Errorf("unknown format: err = %v, want one naming gif", err)
	}
	// No curves at all still draws axes (an empty figure, not a panic).
	for _, logX := range []bool{false, true} {
		if err := WritePlot(io.Discard, "svg", nil, PlotOptions{LogX: logX}); err != nil {
			t.Errorf("no curves, logX=%v: %v", logX, err)
		}
	}
}

func TestFrontier(t *testing.T) {
	type pt struct{ x, y float64 }
	for _, tc := range []struct {
		name string
		pts  []pt // sorted by x, then y
		want []int
	}{
		{"empty", nil, nil},
		{"rising", []pt{{0, 1}, {1, 2}, {2, 3}}, []int{0, 1, 2}},
		{"dominated middle", []pt{{0, 1}, {1, 0.5}, {2, 3}}, []int{0, 2}},
		{"equal x keeps the highest", []pt{{0, 1}, {1, 2}, {1, 5}, {1, 4}, {2, 5}}, []int{0, 2}},
		{"equal y later is not better", []pt{{0, 2}, {1, 2}}, []int{0}},
	} {
		got := frontier(tc.pts, func(p pt) (float64, float64) { return p.x, p.y })
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: frontier %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestWriteSVGs(t *testing.T) {
	d := testReport(t)
	paths, err := WriteSVGs(t.TempDir(), d, Options{Targets: []float64{0.02}, Settings: []string{"age:A=3", "paw:P=11,wait=2"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"mpc.svg", "timeline-age_A=3-pr.svg", "timeline-age_A=3-pages.svg",
		"timeline-paw_P=11_wait=2-pr.svg", "timeline-paw_P=11_wait=2-pages.svg", "working-set.svg", "gaps.svg"}
	var got []string
	for _, p := range paths {
		got = append(got, filepath.Base(p))
		svg, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		texts := svgTexts(t, svg)
		if strings.Contains(p, "-pr.svg") && !slices.Contains(texts, "target 2%") {
			t.Errorf("%s: no target line in the legend (texts %q)", p, texts)
		}
		if strings.HasSuffix(p, "gaps.svg") && (!slices.Contains(texts, "closed") || !slices.Contains(texts, "open")) {
			t.Errorf("%s: legend lacks closed/open (texts %q)", p, texts)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("figures %q, want %q", got, want)
	}
}
