package main

import (
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/sievekv/sievekv/internal/benchreport"
)

// fpFloor stands in for a measured FP rate of 0 on the log axis.
const fpFloor = 1e-7

func writeCharts(dir string, rs []result) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	a := filepath.Join(dir, "filters_fp_vs_bits.png")
	if err := fpChart(a, rs); err != nil {
		return nil, err
	}
	b := filepath.Join(dir, "filters_query_ns.png")
	if err := queryChart(b, rs); err != nil {
		return nil, err
	}
	return []string{a, b}, nil
}

// names lists the filter names (not configurations) in rs, in order.
func names(rs []result) []string {
	return benchreport.Distinct(rs, func(r result) string { return r.Name })
}

// colour picks a distinct colour per filter name (Okabe-Ito and Tableau
// hues; the list wraps).
func colour(i int) color.Color {
	hues := []color.RGBA{{0, 114, 178, 255}, {213, 94, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255}, {230, 159, 0, 255},
		{86, 180, 233, 255}, {0, 0, 0, 255}, {148, 103, 189, 255}, {140, 86, 75, 255}, {127, 127, 127, 255}, {188, 189, 34, 255}, {23, 190, 207, 255}}
	return hues[i%len(hues)]
}

// glyph varies the marker once the colours wrap, so no two filter names
// share both; anchors are always triangles.
func glyph(i int, anchor bool) draw.GlyphDrawer {
	if anchor {
		return draw.TriangleGlyph{}
	}
	return []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}}[(i/12)%3]
}

// fpChart: measured FP rate against measured bits per key at the largest
// n, every configuration, with the bound bits = log2(1/eps).
func fpChart(path string, rs []result) error {
	n := slices.Max(sizesOf(rs))
	p := plot.New()
	p.Title.Text = "False-positive rate vs bits per key (measured, n = " + itoa(n) + ")"
	p.X.Label.Text = "bits per key"
	p.Y.Label.Text = "FP rate (log; 0 drawn at 1e-7)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = benchreport.Decades{}
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	bound := plotter.NewFunction(func(x float64) float64 { return math.Max(math.Pow(2, -x), fpFloor) })
	bound.XMin, bound.XMax = 1, 24
	bound.Samples = 100
	bound.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	bound.Color = color.Gray{Y: 80}
	p.Add(bound)
	p.Legend.Add("bound: bits = log2(1/eps)", bound)
	maxX := 0.0
	for i, name := range names(rs) {
		var pts plotter.XYs
		lib := ""
		for _, r := range rs {
			if r.Name == name && r.N == n {
				pts = append(pts, plotter.XY{X: r.BitsPerKey, Y: math.Max(r.FPRate, fpFloor)})
				lib = r.Library
				maxX = math.Max(maxX, r.BitsPerKey)
			}
		}
		if len(pts) == 0 {
			continue
		}
		s, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		s.Color = colour(i)
		s.Radius = vg.Points(3.5)
		s.Shape = glyph(i, lib != libSieve)
		p.Add(s)
		p.Legend.Add(name, s)
	}
	p.X.Min, p.X.Max = 0, math.Max(24, maxX+1)
	p.Y.Min, p.Y.Max = fpFloor, 1
	return p.Save(200*vg.Millimeter, 150*vg.Millimeter, path)
}

// queryChart: ns per query (absent and present keys) per configuration at
// the largest n.
func queryChart(path string, rs []result) error {
	n := slices.Max(sizesOf(rs))
	var labels []string
	var absent, present plotter.Values
	for _, r := range rs {
		if r.N != n {
			continue
		}
		labels = append(labels, r.Filter)
		absent = append(absent, r.QueryNsAbsent)
		present = append(present, r.QueryNsPresent)
	}
	p := plot.New()
	p.Title.Text = "ns per query at n = " + itoa(n) + " (fastest round; lower is better)"
	p.Y.Label.Text = "ns per query"
	w := vg.Points(5)
	ba, err := plotter.NewBarChart(absent, w)
	if err != nil {
		return err
	}
	ba.Color, ba.Offset, ba.LineStyle.Width = colour(0), -w/2, 0
	bp, err := plotter.NewBarChart(present, w)
	if err != nil {
		return err
	}
	bp.Color, bp.Offset, bp.LineStyle.Width = colour(1), w/2, 0
	p.Add(ba, bp)
	p.Legend.Add("absent keys", ba)
	p.Legend.Add("present keys", bp)
	p.Legend.Top = true
	p.NominalX(labels...)
	p.X.Tick.Label.Rotation = math.Pi / 2
	p.X.Tick.Label.XAlign = -1
	p.X.Tick.Label.YAlign = -0.5
	p.X.Tick.Label.Font.Size = vg.Points(7)
	p.Y.Min = 0
	p.Y.Max *= 1.15
	return p.Save(vg.Length(40+4*len(labels))*vg.Millimeter, 150*vg.Millimeter, path)
}

// itoa writes key counts the way the docs do: 1000000 -> "1M".
func itoa(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return strconv.Itoa(n/1_000_000) + "M"
	case n >= 1000 && n%1000 == 0:
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}
