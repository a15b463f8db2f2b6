package report

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/render"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// The soak section: a rate held for a while after the capacity sweep
// (--soak). Each location that has one gets its series over time, the
// answer as caption: etcd's p99s above its rate achieved (with the rate
// held and the sustained figure across); the device's writes per second
// (and etcd's fsyncs) above its MB/s; its utilisation above its write
// await. In every panel a grey line marks where the last part, the one
// judged, began, and a red one when the storage gave less after a while
// (the drop), as the text view marks them. A table lists the intervals.
func init() {
	Register(Section{
		ID: "soak", Title: "Soak: the rate held over time, and what the storage sustained", Order: 13,
		Has: func(r *result.Result) bool { return r.Soak != nil && len(r.Soak.Series) > 0 },
		Metrics: []Metric{
			{Label: "sustained puts/s (soak's last part)", Unit: "ops/s", Better: Higher, Get: func(r *result.Result) (Value, bool) {
				return Value{V: r.Soak.SustainedPutsPerS}, true
			}},
		},
		Build: soakBlock,
	})
}

const soakHeight vg.Length = 400

func soakBlock(runs []Run) Block {
	b := Block{ChartsFirst: true}
	for _, r := range runs {
		s := r.Result.Soak
		b.Charts = append(b.Charts, soakEtcdChart(r, s))
		if soakHasDevice(s) {
			b.Charts = append(b.Charts, soakDeviceCharts(r, s)...)
		}
		b.Tables = append(b.Tables, soakTable(r, s))
	}
	b.Notes = append(b.Notes, "The rate was offered at a fixed rate (open loop) for the whole soak and each point is one interval: "+
		"etcd's own p99s over it (a hollow mark at 1ms fell in their lowest bucket and reads <= 1ms), the puts/s achieved, and the device's "+
		"writes from /proc/diskstats. The grey line marks the last part, the steady state judged; a red one the drop, when the device's "+
		"writes, the rate achieved or etcd's fsyncs fell (burst credits or a write cache that ran out). The green line is the sustained figure.")
	return b
}

func soakHasDevice(s *result.Soak) bool {
	for _, x := range s.Series {
		if x.DeviceIOPS > 0 || x.DeviceUtil > 0 || x.DeviceWriteBytes > 0 {
			return true
		}
	}
	return false
}

// soakPoints is a series over time, without the samples get has no value
// for.
func soakPoints(s *result.Soak, get func(result.SoakSample) (float64, bool)) plotter.XYs {
	var pts plotter.XYs
	for _, x := range s.Series {
		if v, ok := get(x); ok && !math.IsNaN(v) && !math.IsInf(v, 0) && x.T >= 0 {
			pts = append(pts, plotter.XY{X: x.T, Y: v})
		}
	}
	return pts
}

// soakLine is one quantity of a panel.
type soakLine struct {
	label  string
	pts    plotter.XYs
	dashed bool
	// floor are the points drawn hollow: a p99 in etcd's lowest bucket.
	floor plotter.XYs
}

// soakPanel draws lines over the soak's time, with horizontal reference
// lines (limits, the rate held, the sustained figure), on a log y axis or
// a linear one from zero, then the last part and the drop across it
// (named when named: the upper panel).
func soakPanel(r Run, s *result.Soak, xLabel, yLabel string, lines []soakLine, refs []limitLine, logY, named bool, format func(float64) string) *plot.Plot {
	p := newPlot("", xLabel, yLabel)
	var all plotter.XYs
	for _, ln := range lines {
		if len(ln.pts) == 0 {
			continue
		}
		l, m := lineOf(ln.pts, r.Index, ln.dashed), marksOf(ln.pts, r.Index)
		m.GlyphStyle.Radius = vg.Points(1.8)
		if ln.dashed {
			m.GlyphStyle.Shape = draw.BoxGlyph{}
		}
		p.Add(l, m)
		p.Legend.Add(ln.label, l, m)
		if len(ln.floor) > 0 {
			f := marksOf(ln.floor, r.Index)
			f.GlyphStyle.Color, f.GlyphStyle.Shape, f.GlyphStyle.Radius = color.White, m.GlyphStyle.Shape, vg.Points(1)
			p.Add(f)
		}
		all = append(all, ln.pts...)
	}
	for _, ref := range refs {
		if ref.Y <= 0 || math.IsInf(ref.Y, 0) {
			continue
		}
		l := &plotter.Line{XYs: plotter.XYs{{X: 0, Y: ref.Y}, {X: s.Seconds, Y: ref.Y}}, LineStyle: plotter.DefaultLineStyle}
		l.LineStyle.Color, l.LineStyle.Width = ref.Color, vg.Points(1)
		l.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		p.Add(l)
		p.Add(textAt(plotter.XYLabels{XYs: plotter.XYs{{X: s.Seconds, Y: ref.Y}}, Labels: []string{ref.Label}}, ref.Color, 8, draw.XRight, draw.YBottom, 0,
			vg.Point{X: -3, Y: 2}))
		all = append(all, plotter.XY{X: 0, Y: ref.Y})
	}
	p.X.Min, p.X.Max = 0, math.Max(s.Seconds, 1)
	if logY {
		p.Y.Scale = plot.LogScale{}
		// Room under etcd's floor for the hollow marks, above for the
		// legend.
		all = append(all, plotter.XY{Y: etcdFloor * 0.6}, plotter.XY{Y: maxY(all) * 3})
		logRange(&p.Y, all, func(pt plotter.XY) float64 { return pt.Y })
		p.Y.Tick.Marker = relabel(plot.TickerFunc(durationLogTicks), format)
	} else {
		headroom(p, format)
	}
	soakMarks(p, s, named)
	if named {
		// The panel under it labels the time.
		p.X.Tick.Marker = unlabelled(plot.DefaultTicks{}.Ticks)
	}
	return p
}

// soakMarks draws where the last part began and where the storage
// dropped, across the panel.
func soakMarks(p *plot.Plot, s *result.Soak, named bool) {
	type mark struct {
		x     float64
		c     color.Color
		label string
	}
	marks := []mark{{s.LastFrom, noteColor, "last part from " + units.Seconds(s.LastFrom)}}
	if s.Drop != nil {
		marks = append(marks, mark{s.Drop.After, brokeColor, "fell after " + units.Seconds(s.Drop.After)})
	}
	for _, m := range marks {
		if m.x <= 0 || m.x >= p.X.Max {
			continue
		}
		l := &plotter.Line{XYs: plotter.XYs{{X: m.x, Y: p.Y.Min}, {X: m.x, Y: p.Y.Max}}, LineStyle: plotter.DefaultLineStyle}
		l.LineStyle.Color, l.LineStyle.Width = m.c, vg.Points(0.9)
		l.LineStyle.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
		p.Add(l)
		if named {
			p.Add(textAt(plotter.XYLabels{XYs: plotter.XYs{{X: m.x, Y: p.Y.Min}}, Labels: []string{m.label}}, m.c, 8, draw.XLeft, draw.YTop, math.Pi/2,
				vg.Point{X: 2, Y: 4}))
		}
	}
}

// soakEtcdChart is etcd's side: its WAL fsync and backend commit p99s
// against their limits, above the rate achieved against the rate held and
// the sustained figure.
func soakEtcdChart(r Run, s *result.Soak) Chart {
	p99 := func(v float64, bound bool) (float64, bool) { return p99At(v, bound) }
	floor := func(bound func(result.SoakSample) bool) plotter.XYs {
		return soakPoints(s, func(x result.SoakSample) (float64, bool) { return etcdFloor, bound(x) })
	}
	up := soakPanel(r, s, "", "etcd p99 latency", []soakLine{
		{label: "WAL fsync p99", pts: soakPoints(s, func(x result.SoakSample) (float64, bool) { return p99(x.WALFsyncP99, x.WALFsyncBound) }),
			floor: floor(func(x result.SoakSample) bool { return x.WALFsyncBound })},
		{label: "backend commit p99", dashed: true, pts: soakPoints(s, func(x result.SoakSample) (float64, bool) { return p99(x.BackendCommitP99, x.BackendCommitBound) }),
			floor: floor(func(x result.SoakSample) bool { return x.BackendCommitBound })},
	}, []limitLine{
		{Label: "WAL fsync limit " + units.Seconds(capLimit(r, limits.WALFsyncP99)), Y: capLimit(r, limits.WALFsyncP99), Color: limitColor},
		{Label: "backend commit limit " + units.Seconds(capLimit(r, limits.BackendCommitP99)), Y: capLimit(r, limits.BackendCommitP99), Color: faintLimit},
	}, true, true, units.Seconds)

	refs := []limitLine{{Label: "held " + units.Thousands(s.Rate) + "/s offered", Y: s.Rate, Color: idealColor}}
	if s.SustainedPutsPerS > 0 {
		refs = append(refs, limitLine{Label: "sustained ~" + units.Thousands(s.SustainedPutsPerS) + "/s", Y: s.SustainedPutsPerS, Color: heldColor})
	}
	low := soakPanel(r, s, "seconds into the soak", "achieved puts/s", []soakLine{
		{label: "achieved", pts: soakPoints(s, func(x result.SoakSample) (float64, bool) { return x.Achieved, true })},
	}, refs, false, false, shortRate)
	return Chart{Name: fmt.Sprintf("soak-%d-etcd", r.Index+1), Title: r.Label + ": etcd over the soak", Caption: scrubText(s.Answer),
		Plot: up, Lower: low, LowerShare: 0.45, Height: soakHeight}
}

// soakDeviceCharts are the device's side: its writes per second (and
// etcd's fsyncs, its own writes) above its MB/s; its utilisation above its
// write await.
func soakDeviceCharts(r Run, s *result.Soak) []Chart {
	has := func(v float64) (float64, bool) { return v, v > 0 }
	writes := soakPanel(r, s, "", "writes/s", []soakLine{
		{label: "device writes/s", pts: soakPoints(s, func(x result.SoakSample) (float64, bool) { return has(x.DeviceIOPS) })},
		{label: "etcd's WAL fsyncs/s", dashed: true, pts: soakPoints(s, func(x result.SoakSample) (float64, bool) { return x.WALFsyncs, true })},
	}, nil, false, true, shortRate)
	mbs := soakPanel(r, s, "seconds into the soak", "MB/s written", []soakLine{
		{label: "device MB/s", pts: soakPoints(s, func(x result.SoakSample) (float64, bool) { return has(x.DeviceWriteBytes / 1e6) })},
	}, nil, false, false, func(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) })
	busy := soakPanel(r, s, "", "device utilisation", []soakLine{
		{label: "util", pts: soakPoints(s, func(x result.SoakSample) (float64, bool) { return x.DeviceUtil * 100, true })},
	}, nil, false, true, func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + "%" })
	await := soakPanel(r, s, "seconds into the soak", "write await", []soakLine{
		{label: "write await", pts: soakPoints(s, func(x result.SoakSample) (float64, bool) { return has(x.DeviceAwait) })},
	}, nil, false, false, units.Seconds)
	caption := "What the device under the data wrote in each interval: a fall of its writes/s or MB/s at a rate held, " +
		"with its wait rising, is the storage giving less (burst credits or a write cache that ran out)."
	if d := s.Drop; d != nil && d.IOPSBefore > 0 {
		caption = fmt.Sprintf("After %s the device's writes fell from %s to %s/s (%s to %s MB/s).", units.Seconds(d.After),
			units.Thousands(d.IOPSBefore), units.Thousands(d.IOPSAfter), strconv.FormatFloat(d.WriteBytesBefore/1e6, 'f', 1, 64), strconv.FormatFloat(d.WriteBytesAfter/1e6, 'f', 1, 64))
	}
	return []Chart{
		{Name: fmt.Sprintf("soak-%d-writes", r.Index+1), Title: r.Label + ": the device's writes over the soak", Caption: caption,
			Plot: writes, Lower: mbs, LowerShare: 0.45, Height: soakHeight},
		{Name: fmt.Sprintf("soak-%d-busy", r.Index+1), Title: r.Label + ": how busy the device was over the soak",
			Caption: "Its utilisation (iostat %util) and the mean time a write spent queued and serviced, each interval.",
			Plot:    busy, Lower: await, LowerShare: 0.45, Height: soakHeight},
	}
}

// soakTable lists the intervals as the text view does.
func soakTable(r Run, s *result.Soak) Table {
	return Table{Title: fmt.Sprintf("%s: %s puts/s of %s values held for %s, a sample every %s", r.Label, units.Thousands(s.Rate),
		units.Bytes(float64(s.ValueSize)), units.Seconds(s.Seconds), units.Seconds(s.IntervalSeconds)),
		Header: []string{"t", "achieved/s", "request p99", "WAL fsync p99", "commit p99", "WAL fsyncs/s", "device writes/s", "MB/s", "util", "await", "errors", ""},
		Rows:   render.SoakRows(s)}
}
