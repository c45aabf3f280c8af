package main

import (
	"fmt"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// budgetChart: reads per absent Get on the live shape against the filter
// memory each configuration measured, one line per family of the budget
// sweep.
func budgetChart(path string, rs []result) (string, error) {
	p := plot.New()
	p.Title.Text = "readmissing-live: table reads per absent Get vs filter memory (L0 + levels, no full compaction)"
	p.X.Label.Text = "filter bits per key (measured, headers included)"
	p.Y.Label.Text = fmt.Sprintf("reads per absent Get (log; 0 drawn at %g)", sweepFloor)
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = decades{}
	p.Legend.Top = true
	drawn := false
	for i, fam := range budgetSweepFamilies {
		var pts plotter.XYs
		for _, r := range rs {
			if r.Workload != budgetSweepWorkload || !strings.HasPrefix(r.Filter, fam.name+"/") {
				continue
			}
			bits := 8 * r.FilterBytesPerKey
			if r.FilterBytesPerKey < 0 { // the engine does not report its filters: the configured budget
				bits, _ = strconv.ParseFloat(strings.TrimPrefix(r.Filter, fam.name+"/"), 64)
			}
			pts = append(pts, plotter.XY{X: bits, Y: max(r.DataBlockReadsPerOp, sweepFloor)})
		}
		if len(pts) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return "", err
		}
		c := colorOf(fam.name, i+1)
		line.Color, points.Color, points.Radius = c, c, vg.Points(3)
		p.Add(line, points)
		p.Legend.Add(fam.name, line, points)
		drawn = true
	}
	if !drawn {
		return "", nil
	}
	if err := p.Save(180*vg.Millimeter, 120*vg.Millimeter, path); err != nil {
		return "", err
	}
	return path, nil
}
