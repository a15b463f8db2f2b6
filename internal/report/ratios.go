package report

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The ratios between runs: how many times better or worse each run is than
// the first, on every summary row that says which way is better.
func init() {
	Register(Section{ID: "ratios", Title: "Ratios between runs", Order: 90, Build: ratiosBlock})
}

func ratiosBlock(runs []Run) Block {
	if len(runs) < 2 {
		return Block{}
	}
	var labels []string
	var pts []ratioPoint
	for _, row := range Rows(runs) {
		if row.Metric.Better == Neither {
			continue
		}
		y := float64(len(labels))
		added := false
		for i := 1; i < len(runs); i++ {
			r := row.Ratios[i]
			if math.IsNaN(r) || r <= 0 || math.IsInf(r, 0) {
				continue
			}
			if row.Metric.Better == Lower {
				r = 1 / r
			}
			pts = append(pts, ratioPoint{X: r, Y: y, Run: runs[i].Index, Slot: i - 1, Slots: len(runs) - 1})
			added = true
		}
		if added {
			labels = append(labels, row.Metric.Label)
		}
	}
	if len(pts) == 0 {
		return Block{}
	}
	first := runs[0].Label
	p := newPlot("how many times better than "+first, "times better (log scale; < 1 is worse)", "")
	legendAt(p, false, false)
	// The first row at the top.
	for i := range pts {
		pts[i].Y = float64(len(labels)-1) - pts[i].Y
	}
	var ticks plot.ConstantTicks
	for i, l := range labels {
		ticks = append(ticks, plot.Tick{Value: float64(len(labels) - 1 - i), Label: l})
	}
	p.Y.Tick.Marker = ticks
	p.Y.Min, p.Y.Max = -0.7, float64(len(labels))-0.3
	p.Y.Padding = 0
	marks := ratioMarks(pts)
	p.Add(marks)
	// The 1x line: as good as the first run.
	one := &plotter.Line{XYs: plotter.XYs{{X: 1, Y: p.Y.Min}, {X: 1, Y: p.Y.Max}}, LineStyle: plotter.DefaultLineStyle}
	one.LineStyle.Color = noteColor
	p.Add(one)
	for i := 1; i < len(runs); i++ {
		l := lineOf(nil, runs[i].Index, false)
		p.Legend.Add(runs[i].Label, l)
	}
	lo, hi := 0.5, 2.0
	for _, pt := range pts {
		lo, hi = math.Min(lo, pt.X), math.Max(hi, pt.X)
	}
	p.X.Scale = plot.LogScale{}
	p.X.Min, p.X.Max = stepDown(lo/1.3), stepUp(hi*1.3)
	p.X.Tick.Marker = relabel(plot.TickerFunc(durationLogTicks), func(v float64) string {
		return strconv.FormatFloat(v, 'g', -1, 64) + "x"
	})
	c := Chart{Name: "ratios", Title: "ratios to " + first,
		Caption: "One line per summary row: to the right of 1 a run is better than " + first + " (lower latency and errors, higher throughput and IOPS), to the left worse.",
		Plot:    p, Height: vg.Length(70 + 22*len(labels))}
	return Block{Charts: []Chart{c}}
}

// ratioPoint is one run's ratio on one row; runs share the row in slots.
type ratioPoint struct {
	X, Y        float64
	Run         int
	Slot, Slots int
}

// ratioMarks draws each ratio as a line from 1 to it, ending in a dot.
type ratioMarks []ratioPoint

func (m ratioMarks) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, pt := range m {
		off := 0.0
		if pt.Slots > 1 {
			off = 0.5 * (float64(pt.Slot)/float64(pt.Slots-1) - 0.5)
		}
		y := trY(pt.Y - off)
		sty := draw.LineStyle{Color: runColor(pt.Run), Width: vg.Points(2.5)}
		c.StrokeLine2(sty, trX(1), y, trX(pt.X), y)
		c.DrawGlyph(draw.GlyphStyle{Color: runColor(pt.Run), Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}, vg.Point{X: trX(pt.X), Y: y})
	}
}

func (m ratioMarks) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = 1, 1, 0, 0
	for _, pt := range m {
		xmin, xmax = math.Min(xmin, pt.X), math.Max(xmax, pt.X)
		ymax = math.Max(ymax, pt.Y)
	}
	return xmin, xmax, ymin, ymax
}
