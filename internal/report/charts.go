package report

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/etcdperf/etcdperf/internal/hist"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// The page's chart size; the SVG scales to the column it sits in.
const (
	chartWidth  vg.Length = 520 // points
	chartHeight vg.Length = 290
)

// palette gives each run its colour in every chart (Okabe and Ito's
// colour-blind-safe set, without its yellow, which is unreadable on white).
var palette = []color.RGBA{
	{0x00, 0x72, 0xB2, 0xFF}, // blue
	{0xD5, 0x5E, 0x00, 0xFF}, // vermillion
	{0x00, 0x9E, 0x73, 0xFF}, // bluish green
	{0xCC, 0x79, 0xA7, 0xFF}, // reddish purple
	{0xE6, 0x9F, 0x00, 0xFF}, // orange
	{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
	{0x00, 0x00, 0x00, 0xFF}, // black
}

var (
	limitColor = color.RGBA{0xC0, 0x1B, 0x1B, 0xFF}
	noteColor  = color.RGBA{0x77, 0x77, 0x77, 0xFF}
)

func runColor(i int) color.Color { return palette[i%len(palette)] }

var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// newPlot returns a plot in the report's style: sans-serif text, a light
// grid, the legend in the top left corner.
func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, 11)
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 10)
		a.Tick.Label.Font = font.From(sans, 9)
	}
	p.Legend.TextStyle.Font = font.From(sans, 9)
	legendAt(p, true, true)
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{0xE4}
	g.Horizontal.Color = color.Gray{0xE4}
	p.Add(g)
	return p
}

// legendAt puts the legend in a corner of the plot, a little inside it.
func legendAt(p *plot.Plot, top, left bool) {
	p.Legend.Top, p.Legend.Left = top, left
	p.Legend.XOffs, p.Legend.YOffs = 6, 4
	if !left {
		p.Legend.XOffs = -6
	}
	if top {
		p.Legend.YOffs = -4
	}
}

// lineOf returns a line in a run's colour; dashed for the second quantity
// of the same run (service latency next to latency).
func lineOf(pts plotter.XYs, run int, dashed bool) *plotter.Line {
	l := &plotter.Line{XYs: pts, LineStyle: plotter.DefaultLineStyle}
	l.LineStyle.Color = runColor(run)
	l.LineStyle.Width = vg.Points(1.6)
	if dashed {
		l.LineStyle.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	return l
}

func marksOf(pts plotter.XYs, run int) *plotter.Scatter {
	s := &plotter.Scatter{XYs: pts, GlyphStyle: plotter.DefaultGlyphStyle}
	s.GlyphStyle.Color = runColor(run)
	s.GlyphStyle.Shape = draw.CircleGlyph{}
	s.GlyphStyle.Radius = vg.Points(2.5)
	return s
}

// curve is one latency distribution drawn in a chart.
type curve struct {
	Label  string
	Run    int
	Lat    *result.Latency
	Dashed bool
}

// The percentile chart's x axis is 1/(1-q), on a log scale, as HDR
// histogram plots draw it: each decade is one more nine.
var percentileTicks = plot.ConstantTicks{
	{Value: 1, Label: "0%"}, {Value: 2, Label: "50%"}, {Value: 10, Label: "90%"},
	{Value: 100, Label: "99%"}, {Value: 1e3, Label: "99.9%"}, {Value: 1e4, Label: "99.99%"},
	{Value: 1e5, Label: "99.999%"}, {Value: 1e6, Label: "99.9999%"},
}

// percentilePoints returns the percentile curve of a latency: from its HDR
// histogram when it has one (exact is then true), else the points of its
// summary quantiles.
func percentilePoints(l *result.Latency) (pts plotter.XYs, exact bool) {
	if l == nil || l.Count == 0 {
		return nil, false
	}
	if l.HDR != "" {
		if h, err := hist.FromLatency(*l); err == nil {
			return hdrPoints(h), true
		}
	}
	add := func(x, v float64) {
		if v > 0 {
			pts = append(pts, plotter.XY{X: x, Y: v})
		}
	}
	if !l.Bucketed {
		add(1, l.Min)
	}
	add(2, l.P50)
	add(10, l.P90)
	add(100, l.P99)
	add(1e3, l.P999)
	add(1e4, l.P9999)
	return pts, false
}

// hdrPoints samples the histogram's quantiles 20 times per nine, up to the
// quantile where one value is left (beyond it the curve is the maximum).
func hdrPoints(h *hist.Histogram) plotter.XYs {
	var pts plotter.XYs
	n := float64(h.Count())
	last := math.Min(n, 1e6)
	for k := 0; ; k++ {
		x := math.Pow(10, float64(k)/20)
		if x > last {
			break
		}
		q := 100 * (1 - 1/x)
		if v := h.Quantile(q).Seconds(); v > 0 {
			pts = append(pts, plotter.XY{X: x, Y: v})
		}
	}
	if v := h.Max().Seconds(); v > 0 && last > 1 {
		pts = append(pts, plotter.XY{X: last, Y: v})
	}
	return pts
}

// limitLine is a reference line across a chart (etcd's 10 ms limit, etcd's
// 1 ms resolution).
type limitLine struct {
	Label string
	Y     float64
	Color color.Color
}

// percentileChart draws latency percentile curves, one per curve, on log
// axes. It returns false when there is nothing to draw.
func percentileChart(name, title, caption string, curves []curve, limits ...limitLine) (Chart, bool) {
	p := newPlot(title, "percentile", "latency")
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker = percentileTicks
	drawn := 0
	var all plotter.XYs
	for _, c := range curves {
		pts, exact := percentilePoints(c.Lat)
		if len(pts) == 0 {
			continue
		}
		l := lineOf(pts, c.Run, c.Dashed)
		p.Add(l)
		if exact {
			p.Legend.Add(scrubText(c.Label), l)
		} else {
			m := marksOf(pts, c.Run)
			p.Add(m)
			p.Legend.Add(scrubText(c.Label), l, m)
		}
		all = append(all, pts...)
		drawn++
	}
	if drawn == 0 {
		return Chart{}, false
	}
	xmax := 10.0
	for _, pt := range all {
		xmax = math.Max(xmax, pt.X)
	}
	addLimits(p, 1, xmax, limits)
	for _, l := range limits {
		all = append(all, plotter.XY{X: 1, Y: l.Y})
	}
	logRange(&p.Y, all, func(pt plotter.XY) float64 { return pt.Y })
	p.Y.Tick.Marker = plot.TickerFunc(durationLogTicks)
	p.X.Min, p.X.Max = 1, xmax
	return Chart{Name: name, Title: title, Caption: caption, Plot: p}, true
}

// limitsFor returns the limit lines of a check: the limits the runs were
// judged by (each distinct one), or the default from limits.Table when none
// was judged by it.
func limitsFor(runs []Run, id string) []limitLine {
	var out []limitLine
	seen := map[float64]bool{}
	add := func(limit float64) {
		if limit > 0 && !seen[limit] {
			seen[limit] = true
			out = append(out, limitLine{Label: "p99 limit " + units.Seconds(limit), Y: limit, Color: limitColor})
		}
	}
	for _, r := range runs {
		for _, c := range r.Result.Checks {
			if c.Name == id {
				add(c.Limit)
			}
		}
	}
	if len(out) == 0 {
		if c, ok := limits.Lookup(limits.Table, id); ok {
			add(c.Limit)
		}
	}
	return out
}

func addLimits(p *plot.Plot, x0, x1 float64, limits []limitLine) {
	for _, lim := range limits {
		if lim.Y <= 0 {
			continue
		}
		l := &plotter.Line{XYs: plotter.XYs{{X: x0, Y: lim.Y}, {X: x1, Y: lim.Y}}, LineStyle: plotter.DefaultLineStyle}
		l.LineStyle.Color = lim.Color
		l.LineStyle.Width = vg.Points(1)
		l.LineStyle.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		p.Add(l)
		p.Legend.Add(lim.Label, l)
	}
}

// vline is a vertical line at x from y lo to y hi, drawn in sty: a
// moment on a chart over time, a rate on a chart over rates.
func vline(x, lo, hi float64, sty draw.LineStyle) *plotter.Line {
	return &plotter.Line{XYs: plotter.XYs{{X: x, Y: lo}, {X: x, Y: hi}}, LineStyle: sty}
}

// logRange sets a log axis to a range around the positive values, padded
// to the nearest 1-2-5 steps so that the ends carry labels.
func logRange(a *plot.Axis, pts plotter.XYs, get func(plotter.XY) float64) {
	lo, hi := math.Inf(1), 0.0
	for _, pt := range pts {
		if v := get(pt); v > 0 {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if hi == 0 {
		lo, hi = 1e-3, 1e-2
	}
	// Twelve decades (1ns to 1000s) is more than any latency spans; a value
	// beyond is nonsense and would only crowd the axis with ticks.
	lo = math.Max(lo, hi/1e12)
	a.Min, a.Max = stepDown(lo), stepUp(hi)
	if a.Min == a.Max {
		a.Min, a.Max = a.Min/2, a.Max*2
	}
}

// stepDown and stepUp round to the 1-2-5 sequence.
func stepDown(v float64) float64 {
	d := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{5, 2, 1} {
		if m*d <= v*(1+1e-9) {
			return m * d
		}
	}
	return d
}

func stepUp(v float64) float64 {
	d := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*d >= v*(1-1e-9) {
			return m * d
		}
	}
	return 10 * d
}

// durationLogTicks marks a log axis of seconds: each power of ten, and 2
// and 5 times it when the axis spans few decades, labelled 100µs, 1ms, 10ms.
func durationLogTicks(min, max float64) []plot.Tick {
	if min <= 0 || max <= 0 {
		return nil
	}
	return logTicks(min, max, units.Seconds)
}

// logTicks marks a log axis from min to max (both positive) at 1 to 9
// times each power of ten, labelling with label each power, and 2 and 5
// times it when the axis spans at most 2.5 decades.
func logTicks(min, max float64, label func(float64) string) []plot.Tick {
	decades := math.Log10(max / min)
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		d := math.Pow(10, e)
		for m := 1.0; m < 10; m++ {
			v := m * d
			if v < min*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			text := ""
			if m == 1 || (decades <= 2.5 && (m == 2 || m == 5)) {
				text = label(v)
			}
			ticks = append(ticks, plot.Tick{Value: v, Label: text})
		}
	}
	return ticks
}

// relabel keeps a ticker's marks and prints their values with f.
func relabel(t plot.Ticker, f func(float64) string) plot.Ticker {
	return plot.TickerFunc(func(min, max float64) []plot.Tick {
		ts := t.Ticks(min, max)
		for i := range ts {
			if ts[i].Label != "" {
				ts[i].Label = f(ts[i].Value)
			}
		}
		return ts
	})
}

// histogramChart draws the share of operations per latency bin (ten bins
// per decade, log axis) for the curves that carry an HDR histogram. Runs
// with different counts compare because the y axis is a share.
func histogramChart(name, title, caption string, curves []curve) (Chart, bool) {
	type dist struct {
		c       curve
		buckets []hist.Bucket
		count   int64
	}
	var ds []dist
	lo, hi := math.Inf(1), 0.0
	for _, c := range curves {
		if c.Lat == nil || c.Lat.HDR == "" || c.Lat.Count == 0 {
			continue
		}
		h, err := hist.FromLatency(*c.Lat)
		if err != nil {
			continue
		}
		bs := h.Buckets()
		if len(bs) == 0 {
			continue
		}
		lo = math.Min(lo, math.Max(bs[0].From.Seconds(), 1e-9))
		hi = math.Max(hi, bs[len(bs)-1].To.Seconds())
		ds = append(ds, dist{c, bs, h.Count()})
	}
	if len(ds) == 0 {
		return Chart{}, false
	}
	const perDecade = 10
	first := math.Floor(math.Log10(lo) * perDecade)
	last := math.Ceil(math.Log10(hi) * perDecade)
	if last <= first {
		last = first + 1
	}
	edge := func(k float64) float64 { return math.Pow(10, k/perDecade) }
	nbins := int(last - first)
	p := newPlot(title, "latency", "share of operations")
	p.X.Scale = plot.LogScale{}
	legendAt(p, true, false)
	for _, d := range ds {
		share := make([]float64, nbins)
		for _, b := range d.buckets {
			// A bucket's midpoint decides its bin; buckets are 0.1% wide.
			mid := (b.From.Seconds() + b.To.Seconds()) / 2
			k := int(math.Floor(math.Log10(math.Max(mid, 1e-9))*perDecade) - first)
			k = min(max(k, 0), nbins-1)
			share[k] += float64(b.Count) / float64(d.count) * 100
		}
		pts := make(plotter.XYs, 0, nbins+1)
		for k := range nbins {
			pts = append(pts, plotter.XY{X: edge(first + float64(k)), Y: share[k]})
		}
		pts = append(pts, plotter.XY{X: edge(last), Y: share[nbins-1]})
		l := lineOf(pts, d.c.Run, d.c.Dashed)
		l.StepStyle = plotter.PostStep
		p.Add(l)
		p.Legend.Add(scrubText(d.c.Label), l)
	}
	p.X.Min, p.X.Max = edge(first), edge(last)
	p.X.Tick.Marker = plot.TickerFunc(durationLogTicks)
	headroom(p, func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + "%" })
	return Chart{Name: name, Title: title, Caption: caption, Plot: p}, true
}

// line is one run's time series.
type line struct {
	Label  string
	Run    int
	Pts    plotter.XYs
	Dashed bool
}

// minTimePoints is the fewest points of a chart over time: with fewer (a
// run of 2.5 s has 2 one-second samples) a line shows no trend, and the
// summary says all there is.
const minTimePoints = 5

// timeChart draws time series (x in seconds since the start). format
// labels the y axis; logY puts it on a log scale. It returns false when
// there is nothing to draw or the lines have fewer than minTimePoints
// points in time (shortCharts then says why).
func timeChart(name, title, caption, yLabel string, lines []line, format func(float64) string, logY bool) (Chart, bool) {
	if n, _ := timePoints(lines); n < minTimePoints {
		return Chart{}, false
	}
	return xyChart(name, title, caption, "seconds since start", yLabel, lines, format, logY)
}

// timePoints returns how many points in time the lines have (the
// distinct x of all their points) and the usual step between them.
func timePoints(lines []line) (int, float64) {
	xs := map[float64]bool{}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, l := range lines {
		for _, p := range l.Pts {
			xs[p.X] = true
			lo, hi = math.Min(lo, p.X), math.Max(hi, p.X)
		}
	}
	n := len(xs)
	if n < 2 {
		return n, 0
	}
	return n, (hi - lo) / float64(n-1)
}

// shortCharts gathers the charts over time of a section that were not
// drawn for want of points, to say why in one note.
type shortCharts struct {
	what []string
	n    int
	step float64
}

// add records the chart of what unless its lines have no point or enough.
func (s *shortCharts) add(what string, lines []line) {
	n, step := timePoints(lines)
	if n == 0 || n >= minTimePoints {
		return
	}
	s.what = append(s.what, what)
	if n > s.n {
		s.n, s.step = n, step
	}
}

// note says which charts are missing and why; "" when none is.
func (s shortCharts) note() string {
	if len(s.what) == 0 {
		return ""
	}
	what := strings.Join(s.what, "; ")
	apart, points := "", "points"
	if s.step > 0 {
		apart = ", " + units.Seconds(s.step) + " apart"
	}
	if s.n == 1 {
		points = "point"
	}
	return fmt.Sprintf("No chart over time of %s: the run has %d %s%s, and a line needs at least %d to show a trend; the summary has the values.",
		what, s.n, points, apart, minTimePoints)
}

// xyChart draws lines over any x axis (xLabel names it).
func xyChart(name, title, caption, xLabel, yLabel string, lines []line, format func(float64) string, logY bool) (Chart, bool) {
	p := newPlot(title, xLabel, yLabel)
	var all plotter.XYs
	for _, ln := range lines {
		pts := ln.Pts
		if logY {
			pts = positive(pts)
		}
		if len(pts) == 0 {
			continue
		}
		l := lineOf(pts, ln.Run, ln.Dashed)
		p.Add(l)
		p.Legend.Add(scrubText(ln.Label), l)
		if len(pts) == 1 {
			p.Add(marksOf(pts, ln.Run))
		}
		all = append(all, pts...)
	}
	if len(all) == 0 {
		return Chart{}, false
	}
	if logY {
		p.Y.Scale = plot.LogScale{}
		logRange(&p.Y, all, func(pt plotter.XY) float64 { return pt.Y })
		p.Y.Tick.Marker = relabel(plot.TickerFunc(durationLogTicks), format)
	} else {
		headroom(p, format)
	}
	return Chart{Name: name, Title: title, Caption: caption, Plot: p}, true
}

// headroom starts a linear y axis at zero and leaves a band above the
// data for the legend; the ticks stop at the data.
func headroom(p *plot.Plot, format func(float64) string) {
	hi := p.Y.Max
	if !(hi > 0) || math.IsInf(hi, 0) {
		hi = 1
	}
	p.Y.Min, p.Y.Max = 0, hi*1.3
	p.Y.Tick.Marker = relabel(plot.TickerFunc(func(_, _ float64) []plot.Tick {
		return plot.DefaultTicks{}.Ticks(0, hi)
	}), format)
}

func positive(pts plotter.XYs) plotter.XYs {
	var out plotter.XYs
	for _, pt := range pts {
		if pt.Y > 0 {
			out = append(out, pt)
		}
	}
	return out
}
