package report

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// The capacity section: doctor's sweep of the offered put rate. Each
// location that has one gets a figure: above, etcd's WAL fsync and backend
// commit p99 against the offered rate with their limits across; below, the
// rate achieved against the offered, with the ideal achieved = offered;
// the highest rate that held and the step that broke are marked, and the
// sweep's one-line answer is the caption. The figures share their axes'
// ranges, so that locations side by side compare at a glance (one figure
// per location rather than one with a line per location: each has two
// quantities, its limits and its knee, which would tangle). A table lists
// each location's steps as they ran.
func init() {
	Register(Section{
		ID: "capacity", Title: "Capacity: the write rate etcd carried within its limits", Order: 12,
		Has: func(r *result.Result) bool { return r.Capacity != nil && len(r.Capacity.Steps) > 0 },
		Metrics: []Metric{
			{Label: "capacity (puts/s within etcd's limits)", Unit: "ops/s", Better: Higher, Get: func(r *result.Result) (Value, bool) {
				return Value{V: r.Capacity.PutsPerS}, true
			}},
			{Label: "capacity over peak write demand", Unit: "x", Better: Higher, Get: func(r *result.Result) (Value, bool) {
				return Value{V: r.Capacity.Headroom}, r.Capacity.Demand > 0
			}},
		},
		Build: capacityBlock,
	})
}

const (
	// capacityHeight is a figure's height: the p99s above, the achieved
	// rate below (capacityLowerShare of it).
	capacityHeight     vg.Length = 440
	capacityLowerShare float64   = 0.4
	// etcdFloor is the upper bound of etcd's lowest histogram bucket: a p99
	// that fell in it (a *_bound flag) is drawn there and reads "<= 1ms".
	etcdFloor = 0.001
)

var (
	heldColor   = color.RGBA{0x1A, 0x7F, 0x37, 0xFF}
	brokeColor  = limitColor
	idealColor  = color.Gray{0x88}
	faintLimit  = color.RGBA{0xE0, 0x8A, 0x8A, 0xFF}
	limitDashes = map[string][]vg.Length{
		limits.WALFsyncP99:      {vg.Points(2), vg.Points(2)},
		limits.BackendCommitP99: {vg.Points(6), vg.Points(2), vg.Points(1), vg.Points(2)},
	}
)

// sweep is one location's capacity sweep, its steps by offered rate.
type sweep struct {
	run   Run
	c     *result.Capacity
	steps []result.CapacityStep
	// wal and commit are the p99 limits it was judged by (seconds),
	// throughput the share of the offered rate a step must achieve.
	wal, commit, throughput float64
}

func capacityBlock(runs []Run) Block {
	b := Block{ChartsFirst: true}
	var sweeps []sweep
	for _, r := range runs {
		c := r.Result.Capacity
		s := sweep{run: r, c: c, wal: capLimit(r, limits.WALFsyncP99), commit: capLimit(r, limits.BackendCommitP99),
			throughput: capLimit(r, limits.Throughput)}
		for _, st := range c.Steps {
			if st.Offered > 0 && !math.IsInf(st.Offered, 0) {
				s.steps = append(s.steps, st)
			}
		}
		slices.SortStableFunc(s.steps, func(a, b result.CapacityStep) int { return cmp.Compare(a.Offered, b.Offered) })
		sweeps = append(sweeps, s)
	}
	ax := capacityAxes(sweeps)
	for _, s := range sweeps {
		if len(s.steps) > 0 {
			b.Charts = append(b.Charts, capacityChart(s, ax))
		} else if s.c.Answer != "" {
			b.Notes = append(b.Notes, s.run.Label+": "+s.c.Answer)
		}
	}
	for _, s := range sweeps {
		b.Tables = append(b.Tables, capacityTable(s))
	}
	b.Notes = append(b.Notes, "Each step offered puts at a fixed rate (open loop, clients growing with the rate as check perf's profiles) "+
		"until one broke a limit, then one step between the highest that held and the one that broke. "+
		"Above: etcd's WAL fsync (solid) and backend commit (dashed) p99 over each step, from its histograms; a hollow mark at 1ms fell in "+
		"their lowest bucket and reads <= 1ms. Below: the rate achieved. The green line is the highest rate that held, the red one "+
		"the step that broke, red rings what broke; the figures share their scales, so that locations compare side by side.")
	return b
}

// capLimit is the limit of a check the run was judged by, else limits.Table's.
func capLimit(r Run, id string) float64 {
	for _, c := range r.Result.Checks {
		if c.Name == id && c.Limit > 0 && !math.IsInf(c.Limit, 0) {
			return c.Limit
		}
	}
	if c, ok := limits.Lookup(limits.Table, id); ok {
		return c.Limit
	}
	return 0
}

// p99At is a step's p99 as drawn: etcd's floor when it fell in the lowest
// bucket; false when there is none to draw.
func p99At(v float64, bound bool) (float64, bool) {
	if bound {
		return etcdFloor, true
	}
	return v, v > 0 && !math.IsInf(v, 0)
}

// capAxes are the ranges every figure of the section shares.
type capAxes struct {
	xlo, xhi float64 // offered
	llo, lhi float64 // p99
	alo, ahi float64 // achieved
}

func capacityAxes(sweeps []sweep) capAxes {
	var xs, ls, as plotter.XYs
	for _, s := range sweeps {
		for _, st := range s.steps {
			xs = append(xs, plotter.XY{X: st.Offered})
			if v, ok := p99At(st.WALFsyncP99, st.WALFsyncBound); ok {
				ls = append(ls, plotter.XY{Y: v})
			}
			if v, ok := p99At(st.BackendCommitP99, st.BackendCommitBound); ok {
				ls = append(ls, plotter.XY{Y: v})
			}
			if st.Achieved > 0 && !math.IsInf(st.Achieved, 0) {
				as = append(as, plotter.XY{Y: st.Achieved})
			}
		}
		for _, l := range []float64{s.wal, s.commit} {
			if l > 0 {
				ls = append(ls, plotter.XY{Y: l})
			}
		}
	}
	var ax capAxes
	var a plot.Axis
	logRange(&a, xs, func(pt plotter.XY) float64 { return pt.X })
	ax.xlo, ax.xhi = a.Min, a.Max
	// Room under etcd's floor for the hollow marks and their "<= 1ms", and
	// above the highest value for the legend.
	ls = append(ls, plotter.XY{Y: etcdFloor * 0.6})
	if hi := maxY(ls); hi > 0 {
		ls = append(ls, plotter.XY{Y: hi * 2})
	}
	logRange(&a, ls, func(pt plotter.XY) float64 { return pt.Y })
	ax.llo, ax.lhi = a.Min, a.Max
	// The achieved axis spans the offered (the ideal line is the diagonal).
	as = append(as, plotter.XY{Y: ax.xlo}, plotter.XY{Y: ax.xhi})
	logRange(&a, as, func(pt plotter.XY) float64 { return pt.Y })
	ax.alo, ax.ahi = a.Min, a.Max
	return ax
}

func maxY(pts plotter.XYs) float64 {
	var hi float64
	for _, p := range pts {
		hi = max(hi, p.Y)
	}
	return hi
}

// capacityChart draws one location's sweep on the shared axes.
func capacityChart(s sweep, ax capAxes) Chart {
	run := s.run.Index
	knee, held := kneeOf(s)

	up := newPlot(s.run.Label, "", "etcd p99 latency")
	var walPts, walFloor, comPts, comFloor, broken plotter.XYs
	var floorLabels plotter.XYLabels
	labelled := map[float64]bool{}
	for _, st := range s.steps {
		x := st.Offered
		for _, q := range []struct {
			v        float64
			bound    bool
			id       string
			pts, flr *plotter.XYs
		}{{st.WALFsyncP99, st.WALFsyncBound, limits.WALFsyncP99, &walPts, &walFloor},
			{st.BackendCommitP99, st.BackendCommitBound, limits.BackendCommitP99, &comPts, &comFloor}} {
			v, ok := p99At(q.v, q.bound)
			if !ok {
				continue
			}
			*q.pts = append(*q.pts, plotter.XY{X: x, Y: v})
			if q.bound {
				*q.flr = append(*q.flr, plotter.XY{X: x, Y: v})
				if !labelled[x] {
					labelled[x] = true
					floorLabels.XYs = append(floorLabels.XYs, plotter.XY{X: x, Y: v})
					floorLabels.Labels = append(floorLabels.Labels, atMost+units.Seconds(etcdFloor))
				}
			}
			if slices.Contains(st.Broke, q.id) {
				broken = append(broken, plotter.XY{X: x, Y: v})
			}
		}
	}
	if len(walPts) > 0 {
		l, m := lineOf(walPts, run, false), marksOf(walPts, run)
		up.Add(l, m)
		up.Legend.Add("WAL fsync p99", l, m)
	}
	if len(comPts) > 0 {
		l, m := lineOf(comPts, run, true), marksOf(comPts, run)
		m.GlyphStyle.Shape = draw.BoxGlyph{}
		up.Add(l, m)
		up.Legend.Add("backend commit p99", l, m)
	}
	// A p99 at etcd's floor: hollow (white inside), "<= 1ms" under it.
	for _, f := range []struct {
		pts   plotter.XYs
		shape draw.GlyphDrawer
	}{{walFloor, draw.CircleGlyph{}}, {comFloor, draw.BoxGlyph{}}} {
		if len(f.pts) == 0 {
			continue
		}
		fill := marksOf(f.pts, run)
		fill.GlyphStyle.Color, fill.GlyphStyle.Shape = color.White, f.shape
		fill.GlyphStyle.Radius = vg.Points(1.6)
		up.Add(fill)
	}
	if len(floorLabels.XYs) > 0 {
		up.Add(textAt(floorLabels, noteColor, 8, draw.XCenter, draw.YTop, 0, vg.Point{Y: -5}))
	}
	addCapLimit(up, ax, s.wal, "WAL fsync limit "+units.Seconds(s.wal), limitDashes[limits.WALFsyncP99])
	addCapLimit(up, ax, s.commit, "backend commit limit "+units.Seconds(s.commit), limitDashes[limits.BackendCommitP99])
	if len(broken) > 0 {
		r := rings(broken)
		up.Add(r)
		up.Legend.Add("broke its limit", r)
	}
	addKnee(up, knee, held, ax.llo, ax.lhi, true)
	up.X.Scale, up.Y.Scale = plot.LogScale{}, plot.LogScale{}
	up.X.Min, up.X.Max, up.Y.Min, up.Y.Max = ax.xlo, ax.xhi, ax.llo, ax.lhi
	up.X.Tick.Marker = unlabelled(rateLogTicks)
	up.Y.Tick.Marker = plot.TickerFunc(durationLogTicks)

	low := newPlot("", "offered puts/s", "achieved puts/s")
	ideal := &plotter.Line{XYs: plotter.XYs{{X: ax.xlo, Y: ax.xlo}, {X: ax.xhi, Y: ax.xhi}}, LineStyle: plotter.DefaultLineStyle}
	ideal.LineStyle.Color, ideal.LineStyle.Width = idealColor, vg.Points(1)
	ideal.LineStyle.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
	low.Add(ideal)
	low.Legend.Add("achieved = offered", ideal)
	if s.throughput > 0 && s.throughput < 1 {
		f := s.throughput
		tl := &plotter.Line{XYs: plotter.XYs{{X: ax.xlo, Y: ax.xlo * f}, {X: ax.xhi, Y: ax.xhi * f}}, LineStyle: plotter.DefaultLineStyle}
		tl.LineStyle.Color, tl.LineStyle.Width = faintLimit, vg.Points(1)
		tl.LineStyle.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		low.Add(tl)
		low.Legend.Add(fmt.Sprintf("limit: %.0f%% of offered", f*100), tl)
	}
	var ach, achBroke plotter.XYs
	for _, st := range s.steps {
		if st.Achieved > 0 && !math.IsInf(st.Achieved, 0) {
			ach = append(ach, plotter.XY{X: st.Offered, Y: st.Achieved})
			if len(st.Broke) > 0 {
				achBroke = append(achBroke, plotter.XY{X: st.Offered, Y: st.Achieved})
			}
		}
	}
	if len(ach) > 0 {
		l, m := lineOf(ach, run, false), marksOf(ach, run)
		low.Add(l, m)
		low.Legend.Add("achieved", l, m)
	}
	if len(achBroke) > 0 {
		r := rings(achBroke)
		low.Add(r)
		low.Legend.Add("step broke a limit", r)
	}
	addKnee(low, knee, held, ax.alo, ax.ahi, false)
	low.X.Scale, low.Y.Scale = plot.LogScale{}, plot.LogScale{}
	low.X.Min, low.X.Max, low.Y.Min, low.Y.Max = ax.xlo, ax.xhi, ax.alo, ax.ahi
	low.X.Tick.Marker = plot.TickerFunc(rateLogTicks)
	low.Y.Tick.Marker = plot.TickerFunc(rateLogTicks)

	return Chart{Name: fmt.Sprintf("capacity-%d", s.run.Index+1), Title: s.run.Label, Caption: scrubText(s.c.Answer),
		Plot: up, Lower: low, LowerShare: capacityLowerShare, Height: capacityHeight}
}

// kneeOf is the lowest offered rate whose step did not hold it (broke a
// limit, or came near one for a confirm step's time; 0 when none did) and
// the sweep's answer, the highest rate that held (a confirmed one when a
// confirm step ran).
func kneeOf(s sweep) (knee, held float64) {
	for _, st := range s.steps {
		if st.Failed() && (knee == 0 || st.Offered < knee) {
			knee = st.Offered
		}
	}
	return knee, s.c.PutsPerS
}

// addKnee draws the highest rate that held (green) and the knee (red) as
// vertical lines, named in the upper plot along them from its bottom (at
// the knee the p99s are high, at the bottom there is room): left of the
// held line, right of the knee's.
func addKnee(p *plot.Plot, knee, held, lo, hi float64, named bool) {
	for _, v := range []struct {
		x      float64
		c      color.Color
		label  string
		yAlign text.YAlignment
		off    vg.Length
	}{{held, heldColor, "held " + units.Thousands(held) + "/s", draw.YBottom, -2}, {knee, brokeColor, "broke at " + units.Thousands(knee) + "/s", draw.YTop, 2}} {
		if v.x <= 0 {
			continue
		}
		p.Add(vline(v.x, lo, hi, draw.LineStyle{Color: v.c, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}))
		if named {
			p.Add(textAt(plotter.XYLabels{XYs: plotter.XYs{{X: v.x, Y: lo}}, Labels: []string{v.label}}, v.c, 8, draw.XLeft, v.yAlign, math.Pi/2,
				vg.Point{X: v.off, Y: 4}))
		}
	}
}

// addCapLimit draws a p99 limit across the plot, named at its left end
// (low rates: low latencies, nothing drawn there).
func addCapLimit(p *plot.Plot, ax capAxes, y float64, label string, dashes []vg.Length) {
	if y <= 0 {
		return
	}
	l := &plotter.Line{XYs: plotter.XYs{{X: ax.xlo, Y: y}, {X: ax.xhi, Y: y}}, LineStyle: plotter.DefaultLineStyle}
	l.LineStyle.Color, l.LineStyle.Width, l.LineStyle.Dashes = limitColor, vg.Points(1), dashes
	p.Add(l)
	p.Add(textAt(plotter.XYLabels{XYs: plotter.XYs{{X: ax.xlo, Y: y}}, Labels: []string{label}}, limitColor, 8, draw.XLeft, draw.YBottom, 0,
		vg.Point{X: 3, Y: 2}))
}

// rings circles the points that broke a limit.
func rings(pts plotter.XYs) *plotter.Scatter {
	s := &plotter.Scatter{XYs: pts, GlyphStyle: plotter.DefaultGlyphStyle}
	s.GlyphStyle.Color, s.GlyphStyle.Shape, s.GlyphStyle.Radius = brokeColor, boldRing{}, vg.Points(5.5)
	return s
}

// boldRing is draw.RingGlyph with a line that shows (its is 0.5pt).
type boldRing struct{}

func (boldRing) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1.3)})
	p := make(vg.Path, 0, 3)
	p.Move(vg.Point{X: pt.X + sty.Radius, Y: pt.Y})
	p.Arc(pt, sty.Radius, 0, 2*math.Pi)
	p.Close()
	c.Stroke(p)
}

// textAt writes labels at points: size in points, aligned and rotated
// (radians) about the point, then moved by off.
func textAt(ls plotter.XYLabels, c color.Color, size vg.Length, xa text.XAlignment, ya text.YAlignment, rot float64, off vg.Point) *plotter.Labels {
	styles := make([]text.Style, len(ls.Labels))
	for i := range styles {
		styles[i] = text.Style{Color: c, Font: font.From(sans, size), XAlign: xa, YAlign: ya, Rotation: rot, Handler: plot.DefaultTextHandler}
	}
	return &plotter.Labels{XYs: ls.XYs, Labels: ls.Labels, TextStyle: styles, Offset: off}
}

// rateLogTicks marks a log axis of rates at 1, 2 and 5 times each power
// of ten (each power only beyond 2.5 decades): 100, 200, 500, 1k, 2k.
func rateLogTicks(min, max float64) []plot.Tick {
	if !(min > 0 && max > min) {
		return nil
	}
	return logTicks(min, max, shortRate)
}

// unlabelled keeps a ticker's marks without their labels (an x axis that
// the plot under it labels).
func unlabelled(f func(min, max float64) []plot.Tick) plot.Ticker {
	return plot.TickerFunc(func(min, max float64) []plot.Tick {
		ts := f(min, max)
		for i := range ts {
			ts[i].Label = ""
		}
		return ts
	})
}

// shortRate prints a round rate: 500, 2k, 15k, 1.5M.
func shortRate(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 3, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'g', 3, 64) + "k"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// capacityTable lists a location's steps in the order they ran, as the
// text view does, in fewer columns: the device's writes with its
// utilisation, the cgroup's with its cap, etcd's CPU with the client's.
func capacityTable(s sweep) Table {
	c := s.c
	capped := slices.ContainsFunc(c.Steps, func(st result.CapacityStep) bool { return st.IOPSCap > 0 })
	t := Table{Title: fmt.Sprintf("%s: the steps in the order they ran (%s values, %s each)", s.run.Label,
		units.Bytes(float64(c.ValueSize)), units.Seconds(c.StepSeconds)),
		Header: []string{"step", "offered/s", "achieved/s", "clients", "WAL fsync p99", "commit p99", "request p99", "WAL fsyncs/s", "device writes/s (busy)"}}
	if capped {
		t.Header = append(t.Header, "cgroup writes/s (cap)")
	}
	t.Header = append(t.Header, "CPU etcd / client", "broke")
	p99 := func(v float64, bound bool) string {
		if bound {
			return atMost + units.Seconds(etcdFloor)
		}
		return units.Seconds(v)
	}
	for i, st := range c.Steps {
		dev := "-"
		if st.DeviceIOPS > 0 || st.DeviceUtil > 0 {
			dev = fmt.Sprintf("%s (%.0f%%)", units.Thousands(st.DeviceIOPS), st.DeviceUtil*100)
		}
		row := []string{strconv.Itoa(i + 1), units.Thousands(st.Offered), units.Thousands(st.Achieved), strconv.Itoa(st.Clients),
			p99(st.WALFsyncP99, st.WALFsyncBound), p99(st.BackendCommitP99, st.BackendCommitBound), units.Seconds(st.RequestP99),
			units.Thousands(st.WALFsyncs), dev}
		if capped {
			cell := "-"
			if st.IOPSCap > 0 {
				cell = fmt.Sprintf("%s (%s", units.Thousands(st.CappedWriteIOPS), units.Thousands(st.IOPSCap))
				if st.CapDevice != "" {
					cell += " on " + st.CapDevice
				}
				cell += ")"
			}
			row = append(row, cell)
		}
		// The step's cause is the verdict's rule; the answer says what the
		// sweep makes of it (an IOPS cap, the disk or the CPU).
		broke := "-"
		if len(st.Broke) > 0 {
			broke = strings.Join(st.Broke, ", ")
		}
		row = append(row, fmt.Sprintf("%.2f / %.2f", st.EtcdCPU, st.ClientCPU), broke)
		t.Rows = append(t.Rows, row)
	}
	return t
}
