package main

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/sievekv/sievekv/internal/benchreport"
)

// palette gives each engine the same colour in every chart.
var palette = map[string]color.RGBA{
	"sievekv":          {R: 0x1b, G: 0x9e, B: 0x77, A: 0xff},
	"pebble":           {R: 0xd9, G: 0x5f, B: 0x02, A: 0xff},
	"pebble-l6filters": {R: 0x75, G: 0x70, B: 0xb3, A: 0xff},
	"goleveldb":        {R: 0xe7, G: 0x29, B: 0x8a, A: 0xff},
	"sievekv-notsi":    {R: 0x66, G: 0xa6, B: 0x1e, A: 0xff},
	// the budget sweep's sievekv families
	"bloom":         {R: 0xe6, G: 0xab, B: 0x02, A: 0xff},
	"binary-fuse-8": {R: 0x66, G: 0x66, B: 0x66, A: 0xff},
	"auto-uniform":  {R: 0x1f, G: 0x78, B: 0xb4, A: 0xff},
	"auto-monkey":   {R: 0x1b, G: 0x9e, B: 0x77, A: 0xff},
}

// readWorkloads are the workloads the reads-per-op chart shows, in order.
var readWorkloads = []string{"readrandom", "readmissing-live", "readmissing", "readhot", "scanrange", "ycsb-c", "ycsb-b", "ycsb-a",
	"deleterandom-getdeleted", "deleterandom-getkept"}

// writeCharts draws the kvbench charts into dir and returns their paths.
func writeCharts(dir string, rs []result) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	if p, err := readsChart(filepath.Join(dir, "kv_reads_per_op.png"), rs); err != nil {
		return nil, err
	} else if p != "" {
		paths = append(paths, p)
	}
	if p, err := sweepChart(filepath.Join(dir, "kv_filter_sweep.png"), rs); err != nil {
		return nil, err
	} else if p != "" {
		paths = append(paths, p)
	}
	if p, err := budgetChart(filepath.Join(dir, "kv_filter_budget.png"), rs); err != nil {
		return nil, err
	} else if p != "" {
		paths = append(paths, p)
	}
	for _, w := range []string{"deletelarge", "deleterangelarge"} {
		if p, err := deleteLargeChart(filepath.Join(dir, "kv_"+w+".png"), w, rs); err != nil {
			return nil, err
		} else if p != "" {
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// deleteLargeChart: table bytes over idle time after the deletes of
// workload w (deletelarge or deleterangelarge), one line per engine.
func deleteLargeChart(path, w string, rs []result) (string, error) {
	p := plot.New()
	p.Title.Text = "deletelarge: table bytes while idle after deleting half (lower is better)"
	if w == "deleterangelarge" {
		p.Title.Text = "deleterangelarge: table bytes while idle after one DeleteRange of 3/4 (lower is better)"
	}
	p.X.Label.Text = "seconds since the deletes"
	p.Y.Label.Text = "table bytes / pre-delete table bytes"
	p.Y.Min, p.Y.Max = 0, 1.2
	p.Legend.Top = true
	n := 0
	for i, r := range rs {
		if r.Workload != w || len(r.Samples) == 0 {
			continue
		}
		pts := make(plotter.XYs, len(r.Samples))
		for j, s := range r.Samples {
			pts[j] = plotter.XY{X: s.Sec, Y: s.Ratio}
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return "", err
		}
		l.Color = colorOf(r.Engine, i)
		l.Width = vg.Points(2)
		p.Add(l)
		p.Legend.Add(r.Engine, l)
		n++
	}
	if n == 0 {
		return "", nil
	}
	if err := p.Save(180*vg.Millimeter, 110*vg.Millimeter, path); err != nil {
		return "", err
	}
	return path, nil
}

// readsChart: table reads per op by workload, one bar per engine.
func readsChart(path string, rs []result) (string, error) {
	var ws []string
	for _, w := range readWorkloads {
		if find(rs, w, "sievekv") != nil || find(rs, w, "pebble") != nil {
			ws = append(ws, w)
		}
	}
	var engines []string
	for _, e := range allEngines {
		for _, r := range rs {
			if r.Engine == e && slices.Contains(ws, r.Workload) {
				engines = append(engines, e)
				break
			}
		}
	}
	if len(ws) == 0 || len(engines) == 0 {
		return "", nil
	}
	p := plot.New()
	p.Title.Text = "Table-file reads per operation (lower is better)"
	p.Y.Label.Text = "ReadAt calls on table files per op"
	p.Legend.Top = true
	w := vg.Points(float64(60) / float64(len(engines)))
	for i, e := range engines {
		vals := make(plotter.Values, len(ws))
		for j, wl := range ws {
			if r := find(rs, wl, e); r != nil {
				vals[j] = r.DataBlockReadsPerOp
			}
		}
		bars, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return "", err
		}
		bars.LineStyle.Width = 0
		bars.Color = colorOf(e, i)
		bars.Offset = w * vg.Length(float64(i)-float64(len(engines)-1)/2)
		p.Add(bars)
		p.Legend.Add(e, bars)
	}
	p.NominalX(ws...)
	// Head room for the legend above the tallest bar.
	p.Y.Min = 0
	p.Y.Max *= 1.45
	p.X.Tick.Label.Rotation = 0.5
	p.X.Tick.Label.XAlign = -0.9
	// 75 points per workload leave a gap between the 60-point groups.
	if err := p.Save(vg.Points(float64(120+75*len(ws))), 120*vg.Millimeter, path); err != nil {
		return "", err
	}
	return path, nil
}

func colorOf(engine string, i int) color.Color {
	if c, ok := palette[engine]; ok {
		return c
	}
	return color.RGBA{R: uint8(40 * i), G: 0x80, B: 0x80, A: 0xff}
}

// readsVsBitsPlot is an empty chart of reads per absent Get (log scale,
// 0 drawn at sweepFloor) against filter bits per key.
func readsVsBitsPlot(title, xLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = fmt.Sprintf("reads per absent Get (log; 0 drawn at %g)", sweepFloor)
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = benchreport.Decades{}
	p.Legend.Top = true
	return p
}

// sweepFloor stands in for 0 reads per Get on the log axis.
const sweepFloor = 1e-5

// sweepChart: reads per missing Get against filter bits per key, sievekv's
// sweep plus the other engines' readmissing points.
func sweepChart(path string, rs []result) (string, error) {
	var pts plotter.XYs
	var labels []string
	for _, r := range rs {
		if r.Workload == "readmissing-sweep" {
			pts = append(pts, plotter.XY{X: 8 * max(r.FilterBytesPerKey, 0), Y: max(r.DataBlockReadsPerOp, sweepFloor)})
			labels = append(labels, r.Filter)
		}
	}
	if len(pts) == 0 {
		return "", nil
	}
	p := readsVsBitsPlot("readmissing: table reads per missing Get vs filter size", "filter bits per key (measured)")
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return "", err
	}
	sc.Color = palette["sievekv"]
	sc.Radius = vg.Points(4)
	p.Add(sc)
	p.Legend.Add("sievekv, one filter type per point", sc)
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: pts, Labels: labels})
	if err != nil {
		return "", err
	}
	for i := range lb.TextStyle {
		// Alternate above and below the point: the 10-bit filters
		// crowd together.
		lb.TextStyle[i].XAlign = -0.05
		lb.TextStyle[i].YAlign = text.YAlignment(-1.1 * float64(i%2))
	}
	p.Add(lb)
	for i, e := range []string{"pebble", "pebble-l6filters", "goleveldb"} {
		r := find(rs, "readmissing", e)
		if r == nil {
			continue
		}
		bits := 10.0 // configured Bloom bits per key where the engine does not report its filter size
		if r.FilterBytesPerKey >= 0 {
			bits = 8 * r.FilterBytesPerKey
		}
		s, err := plotter.NewScatter(plotter.XYs{{X: bits, Y: max(r.DataBlockReadsPerOp, sweepFloor)}})
		if err != nil {
			return "", err
		}
		s.Color = colorOf(e, i)
		s.Radius = vg.Points(4)
		s.Shape = draw.TriangleGlyph{}
		p.Add(s)
		p.Legend.Add(e+" (readmissing)", s)
	}
	if err := p.Save(180*vg.Millimeter, 120*vg.Millimeter, path); err != nil {
		return "", err
	}
	return path, nil
}
