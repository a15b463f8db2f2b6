package report

import (
	"fmt"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// The scale section: `etcdperf scale`, etcd's figures against the number
// of objects after each step, as OpenStack performance-docs' etcd health
// tests plotted them ("PODS vs metrics").
func init() {
	last := func(r *result.Result) (result.ScaleStep, bool) {
		if len(r.Scale.Steps) == 0 {
			return result.ScaleStep{}, false
		}
		return r.Scale.Steps[len(r.Scale.Steps)-1], true
	}
	atEnd := func(label, unit string, better Better, get func(st result.ScaleStep) (float64, bool)) Metric {
		return Metric{Label: label, Unit: unit, Better: better, Get: func(r *result.Result) (Value, bool) {
			st, ok := last(r)
			if !ok {
				return Value{}, false
			}
			v, ok := get(st)
			return Value{V: v}, ok
		}}
	}
	worst := func(label string, get func(st result.ScaleStep) *result.Latency) Metric {
		return Metric{Label: label, Unit: "s", Better: Lower, Get: func(r *result.Result) (Value, bool) {
			var v float64
			found := false
			for _, st := range r.Scale.Steps {
				if l := get(st); l != nil && l.Count > 0 {
					v, found = max(v, l.P99), true
				}
			}
			return Value{V: v}, found
		}}
	}
	Register(Section{
		ID: "scale", Title: "Growth: etcd's figures against the number of objects", Order: 25,
		Has: func(r *result.Result) bool { return r.Scale != nil },
		Metrics: []Metric{
			atEnd("objects reached", "count", Higher, func(st result.ScaleStep) (float64, bool) { return float64(st.Objects), true }),
			atEnd("database size at the end", "bytes", Lower, func(st result.ScaleStep) (float64, bool) { return st.DBSize, st.DBSize > 0 }),
			atEnd("database bytes per object", "bytes", Lower, func(st result.ScaleStep) (float64, bool) {
				return st.DBSize / float64(st.Objects), st.DBSize > 0 && st.Objects > 0
			}),
			atEnd("etcd RSS at the end", "bytes", Lower, func(st result.ScaleStep) (float64, bool) { return st.RSS, st.RSS > 0 }),
			worst("put p99 (worst step)", func(st result.ScaleStep) *result.Latency { return st.Put }),
			worst("watch lag p99 (worst step)", func(st result.ScaleStep) *result.Latency { return st.WatchLag }),
			{Label: "slowest whole list (p99, any step)", Unit: "s", Better: Lower, Get: func(r *result.Result) (Value, bool) {
				var v float64
				for _, st := range r.Scale.Steps {
					for _, l := range st.Lists {
						if l.Latency != nil {
							v = max(v, l.Latency.P99)
						}
					}
				}
				return Value{V: v}, v > 0
			}},
			{Label: "slow applies (scale)", Unit: "count", Better: Lower, Get: func(r *result.Result) (Value, bool) {
				var n float64
				for _, st := range r.Scale.Steps {
					n += st.SlowApplies
				}
				return Value{V: n}, len(r.Scale.Steps) > 0
			}},
		},
		Build: scaleBlock,
	})
}

// scaleSeries is one figure of the steps, drawn against the objects.
type scaleSeries struct {
	name, title, caption, yLabel string
	format                       func(float64) string
	// logY when the figure spans decades (latencies).
	logY bool
	// lines returns a run's lines of the figure: one per quantity, the
	// second and further dashed.
	lines func(sc *result.Scale) []namedPoints
	// limit, when set, is the check whose limit is drawn.
	limit string
}

type namedPoints struct {
	name string
	pts  plotter.XYs
}

// points collects a figure of every step that has it.
func points(sc *result.Scale, get func(st result.ScaleStep) (float64, bool)) plotter.XYs {
	var pts plotter.XYs
	for _, st := range sc.Steps {
		if v, ok := get(st); ok {
			pts = append(pts, plotter.XY{X: float64(st.Objects), Y: v})
		}
	}
	return pts
}

func latencyAt(get func(st result.ScaleStep) *result.Latency, q func(l result.Latency) float64) func(st result.ScaleStep) (float64, bool) {
	return func(st result.ScaleStep) (float64, bool) {
		l := get(st)
		if l == nil || l.Count == 0 {
			return 0, false
		}
		return q(*l), true
	}
}

func p99(l result.Latency) float64 { return l.P99 }
func p50(l result.Latency) float64 { return l.P50 }

var scaleSeriesList = []scaleSeries{
	{name: "scale-db-size", title: "database size vs objects", yLabel: "bytes", format: units.Bytes,
		caption: "etcd's database file (solid) and the part of it in use (dashed) after each step; the backend quota (default 2 GiB) caps the file.",
		lines: func(sc *result.Scale) []namedPoints {
			return []namedPoints{
				{"total", points(sc, func(st result.ScaleStep) (float64, bool) { return st.DBSize, st.DBSize > 0 })},
				{"in use", points(sc, func(st result.ScaleStep) (float64, bool) { return st.DBSizeInUse, st.DBSizeInUse > 0 })},
			}
		}},
	{name: "scale-rss", title: "etcd memory (RSS) vs objects", yLabel: "resident memory", format: units.Bytes,
		caption: "The largest member's resident memory after each step (process_resident_memory_bytes): in OpenStack performance-docs' etcd health tests it grew from 2 GB to 40 GB as a 430-node cluster reached about 40,000 pods.",
		lines: func(sc *result.Scale) []namedPoints {
			return []namedPoints{{"RSS", points(sc, func(st result.ScaleStep) (float64, bool) { return st.RSS, st.RSS > 0 })}}
		}},
	{name: "scale-disk", title: "etcd disk latency p99 vs objects", yLabel: "p99 latency", format: units.Seconds, logY: true, limit: limits.WALFsyncP99,
		caption: "WAL fsync (solid) and backend commit (dashed) p99 over each step, from etcd's histograms (bucket bounds).",
		lines: func(sc *result.Scale) []namedPoints {
			return []namedPoints{
				{"WAL fsync", points(sc, latencyAt(func(st result.ScaleStep) *result.Latency { return st.WALFsync }, p99))},
				{"backend commit", points(sc, latencyAt(func(st result.ScaleStep) *result.Latency { return st.BackendCommit }, p99))},
			}
		}},
	{name: "scale-put", title: "put p99 vs objects", yLabel: "p99 latency", format: units.Seconds, logY: true, limit: limits.PutP99,
		caption: "The step's creations (solid) and status updates (dashed, from their intended send time: they are paced).",
		lines: func(sc *result.Scale) []namedPoints {
			return []namedPoints{
				{"creations", points(sc, latencyAt(func(st result.ScaleStep) *result.Latency { return st.Put }, p99))},
				{"updates", points(sc, latencyAt(func(st result.ScaleStep) *result.Latency { return st.Update }, p99))},
			}
		}},
	{name: "scale-list", title: "whole list vs objects", yLabel: "list time (p50)", format: units.Seconds, logY: true,
		caption: "Time to list each resource whole, page by page at one revision, after each step: linear in the objects is expected, faster is not.",
		lines: func(sc *result.Scale) []namedPoints {
			var out []namedPoints
			for _, k := range sc.Kinds {
				out = append(out, namedPoints{k.Name, points(sc, func(st result.ScaleStep) (float64, bool) {
					for _, l := range st.Lists {
						if l.Kind == k.Name && l.Latency != nil && l.Latency.Count > 0 {
							return l.Latency.P50, true
						}
					}
					return 0, false
				})})
			}
			return out
		}},
	{name: "scale-watch", title: "watch event lag p99 vs objects", yLabel: "p99 lag", format: units.Seconds, logY: true,
		caption: "From each put's send to its event on the resource's watch, as the API server's watch cache receives it.",
		lines: func(sc *result.Scale) []namedPoints {
			return []namedPoints{{"watch lag", points(sc, latencyAt(func(st result.ScaleStep) *result.Latency { return st.WatchLag }, p99))}}
		}},
	{name: "scale-pressure", title: "proposals pending and slow applies vs objects", yLabel: "count", format: func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) },
		caption: "The most proposals pending while the step wrote (solid) and the applies over 100ms etcd counted in it (dashed).",
		lines: func(sc *result.Scale) []namedPoints {
			return []namedPoints{
				{"proposals pending", points(sc, func(st result.ScaleStep) (float64, bool) { return st.ProposalsPending, true })},
				{"slow applies", points(sc, func(st result.ScaleStep) (float64, bool) { return st.SlowApplies, true })},
			}
		}},
}

func scaleBlock(runs []Run) Block {
	var b Block
	for _, s := range scaleSeriesList {
		var lines []line
		for _, r := range runs {
			for i, np := range s.lines(r.Result.Scale) {
				if len(np.pts) == 0 {
					continue
				}
				label := np.name
				if len(runs) > 1 {
					label = r.Label + ": " + np.name
				}
				// One run: a colour per quantity; several: a colour per run.
				// The second and further quantities are dashed either way.
				run := i
				if len(runs) > 1 {
					run = r.Index
				}
				lines = append(lines, line{Label: label, Run: run, Pts: np.pts, Dashed: i > 0})
			}
		}
		c, ok := xyChart(s.name, s.title, s.caption, "objects", s.yLabel, lines, s.format, s.logY)
		if !ok {
			continue
		}
		if s.limit != "" {
			addObjectLimits(c, lines, limitsFor(runs, s.limit))
		}
		if s.yLabel == "bytes" || s.yLabel == "resident memory" {
			c.Plot.Y.Tick.Marker = byteTicks{}
		}
		b.Charts = append(b.Charts, c)
	}
	for _, r := range runs {
		sc := r.Result.Scale
		b.Tables = append(b.Tables, stepsTable(r.Label, sc))
		if sc.Stopped != "" {
			b.Notes = append(b.Notes, fmt.Sprintf("%s: stopped after step %d of %d: %s", r.Label, len(sc.Steps), sc.Planned, sc.Stopped))
		}
		for _, n := range sc.Notes {
			b.Notes = append(b.Notes, r.Label+": "+n)
		}
	}
	return b
}

// addObjectLimits draws a limit across a chart when the data comes within
// a factor of ten of it (a far limit would only flatten the lines).
func addObjectLimits(c Chart, lines []line, limits []limitLine) {
	var lo, hi, top float64
	for _, l := range lines {
		for _, p := range l.Pts {
			if lo == 0 || p.X < lo {
				lo = p.X
			}
			hi, top = max(hi, p.X), max(top, p.Y)
		}
	}
	var near []limitLine
	for _, l := range limits {
		if top*10 >= l.Y {
			near = append(near, l)
		}
	}
	if len(near) == 0 {
		return
	}
	addLimits(c.Plot, lo, hi, near)
	for _, l := range near {
		c.Plot.Y.Max = max(c.Plot.Y.Max, stepUp(l.Y))
	}
}

// byteTicks marks a linear axis of bytes at round numbers of KiB, MiB or
// GiB, up to the data (the axis' top 30% is the legend's, see headroom).
type byteTicks struct{}

func (byteTicks) Ticks(lo, hi float64) []plot.Tick {
	top := hi / 1.3
	unit, name := 1.0, "B"
	for _, u := range []struct {
		v    float64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if top >= u.v {
			unit, name = u.v, u.name
			break
		}
	}
	ticks := plot.DefaultTicks{}.Ticks(lo/unit, top/unit)
	for i := range ticks {
		ticks[i].Value *= unit
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value/unit, 'f', -1, 64) + " " + name
		}
	}
	return ticks
}

// stepsTable is the run's steps, as the text view shows them.
func stepsTable(label string, sc *result.Scale) Table {
	t := Table{Title: label + ": after each step",
		Header: []string{"step", "objects", "db size", "in use", "RSS", "WAL p99", "commit p99", "put p99"}}
	for _, k := range sc.Kinds {
		t.Header = append(t.Header, "list "+k.Name)
	}
	t.Header = append(t.Header, "watch lag p99", "pending", "slow applies", "errors")
	lat := func(l *result.Latency, q func(result.Latency) float64) string {
		if l == nil || l.Count == 0 {
			return ""
		}
		v := q(*l)
		if l.Resolution > 0 && v <= l.Resolution {
			return atMost + units.Seconds(l.Resolution)
		}
		return units.Seconds(v)
	}
	for _, st := range sc.Steps {
		row := []string{strconv.Itoa(st.Step), formatUnit(float64(st.Objects), "count"), units.Bytes(st.DBSize), units.Bytes(st.DBSizeInUse), "",
			lat(st.WALFsync, p99), lat(st.BackendCommit, p99), lat(st.Put, p99)}
		if st.RSS > 0 {
			row[4] = units.Bytes(st.RSS)
		}
		for _, k := range sc.Kinds {
			cell := ""
			for _, l := range st.Lists {
				if l.Kind == k.Name {
					cell = lat(l.Latency, p50)
				}
			}
			row = append(row, cell)
		}
		errs := result.ErrorTotal(st.Errors)
		row = append(row, lat(st.WatchLag, p99), formatUnit(st.ProposalsPending, "count"), formatUnit(st.SlowApplies, "count"), formatUnit(float64(errs), "count"))
		t.Rows = append(t.Rows, row)
	}
	return t
}
