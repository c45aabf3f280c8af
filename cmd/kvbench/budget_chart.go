package main

import (
	"strconv"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// budgetChart: reads per absent Get on the live shape against the filter
// memory each configuration measured, one line per family of the budget
// sweep. A sweep of one budget (make bench's) draws none: its points are
// in the goals table, and a chart of single points would replace a
// fuller sweep's.
func budgetChart(path string, rs []result) (string, error) {
	p := readsVsBitsPlot("readmissing-live: table reads per absent Get vs filter memory (L0 + levels, no full compaction)",
		"filter bits per key (measured, headers included)")
	drawn, lines := false, false
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
		lines = lines || len(pts) > 1
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
	if !drawn || !lines {
		return "", nil
	}
	if err := p.Save(180*vg.Millimeter, 120*vg.Millimeter, path); err != nil {
		return "", err
	}
	return path, nil
}
