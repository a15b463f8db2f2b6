package report

import (
	"fmt"
	"strconv"

	"gonum.org/v1/plot/plotter"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// The metrics section: what `etcdperf metrics` saw of a running cluster,
// per member over time (its WAL fsync and backend commit p99 and database
// size at each interval, with the compactions and defragmentations it
// finished) and over the run.
func init() {
	// worst is the worst member's value over the run of a latency.
	worst := func(get func(s *result.MetricsSignals) *result.Latency) func(r *result.Result) (Value, bool) {
		return func(r *result.Result) (Value, bool) {
			w := r.Metrics.WorstP99(get)
			if w == nil {
				return Value{}, false
			}
			return Value{V: w.P99, AtMost: w.Resolution > 0 && w.P99 <= w.Resolution}, true
		}
	}
	sum := func(get func(m result.MetricsMember) float64) func(r *result.Result) (Value, bool) {
		return func(r *result.Result) (Value, bool) {
			var n float64
			for _, m := range r.Metrics.Members {
				n += get(m)
			}
			return Value{V: n}, true
		}
	}
	overall := func(get func(s *result.MetricsSignals) float64) func(m result.MetricsMember) float64 {
		return func(m result.MetricsMember) float64 {
			if m.Overall == nil {
				return 0
			}
			return get(m.Overall)
		}
	}
	Register(Section{
		ID: "metrics", Title: "etcd members over time: their /metrics at each interval", Order: 35,
		Has: func(r *result.Result) bool { return r.Metrics != nil },
		Metrics: []Metric{
			{Label: "worst member's WAL fsync p99 (metrics)", Unit: "s", Better: Lower,
				Get: worst(walFsyncOf)},
			{Label: "worst member's backend commit p99 (metrics)", Unit: "s", Better: Lower,
				Get: worst(backendCommitOf)},
			{Label: "leader changes seen (metrics, all members)", Unit: "count", Better: Lower,
				Get: sum(overall(func(s *result.MetricsSignals) float64 { return s.LeaderChanges }))},
			{Label: "scrapes not answered (metrics)", Unit: "count", Better: Lower,
				Get: sum(func(m result.MetricsMember) float64 { return float64(m.Unreachable) })},
		},
		Build: metricsBlock,
	})
}

// walFsyncOf and backendCommitOf pick a latency of a member's signals.
func walFsyncOf(s *result.MetricsSignals) *result.Latency      { return s.WALFsync }
func backendCommitOf(s *result.MetricsSignals) *result.Latency { return s.BackendCommit }

func metricsBlock(runs []Run) Block {
	var b Block
	var short shortCharts
	t := Table{Title: "members over the run (<=: at etcd's resolution, at most that)",
		Header: []string{"", "member", "answered", "WAL fsyncs", "WAL fsync p99", "backend commit p99", "peer round trip p99",
			"leader changes", "failed proposals", "slow applies", "db size", "in use", "RSS"}}
	for _, r := range runs {
		m := r.Result.Metrics
		every := fmt.Sprintf("every %s; each colour is a member.", units.Seconds(m.Interval))
		sizes, marks := memberLines(m, nil), upkeepMarks(m)
		for _, q := range []struct {
			name, what, caption, check string
			get                        func(s *result.MetricsSignals) *result.Latency
		}{
			{"wal-fsync", "WAL fsync", "WAL fsyncs", limits.WALFsyncP99, walFsyncOf},
			{"backend-commit", "backend commit", "backend commits (its writes to its database file)", limits.BackendCommitP99, backendCommitOf},
		} {
			lat := memberLines(m, p99Points(q.get))
			limits := append(limitsFor([]Run{r}, q.check), limitLine{Label: "resolution 1ms", Y: 0.001, Color: noteColor})
			// An interval without a latency observed has no point but is
			// part of the run: the chart's points in time are the
			// intervals scraped (the sizes').
			if n, _ := timePoints(sizes); n < minTimePoints {
				short.add(r.Label+": "+q.what+" p99", sizes)
			} else if c, ok := xyChart("metrics-"+q.name+"-"+strconv.Itoa(r.Index), r.Label+": "+q.what+" p99 per interval",
				"The p99 of each member's "+q.caption+" in each interval, "+every+" A point on the 1ms line is at most 1ms: etcd's histogram cannot tell lower values apart."+upkeepCaption(marks),
				"seconds since start", "p99", lat, units.Seconds, spansDecades(lat)); ok {
				withLimits(c, lat, m.Seconds, limits, units.Seconds, spansDecades(lat))
				addUpkeepMarks(c.Plot, marks)
				b.Charts = append(b.Charts, c)
			}
		}
		if c, ok := timeChart("metrics-db-size-"+strconv.Itoa(r.Index), r.Label+": database size over time",
			"Each member's database (solid) and the part of it in use (dashed), "+every,
			"bytes", sizes, units.Bytes, false); ok {
			b.Charts = append(b.Charts, c)
		} else {
			short.add(r.Label+": database size", sizes)
		}
		for _, mm := range m.Members {
			row := []string{r.Label, mm.Name, fmt.Sprintf("%d of %d", len(mm.Series)-mm.Unreachable, len(mm.Series))}
			o := mm.Overall
			if o == nil {
				row = append(row, "never answered", "", "", "", "", "", "", "", "", "")
				t.Rows = append(t.Rows, row)
				continue
			}
			fsyncs := ""
			if o.WALFsync != nil {
				fsyncs = formatUnit(float64(o.WALFsync.Count), "count")
			}
			row = append(row, fsyncs, p99Cell(o.WALFsync), p99Cell(o.BackendCommit), p99Cell(o.PeerRTT),
				formatUnit(o.LeaderChanges, "count"), formatUnit(o.ProposalsFailed, "count"), formatUnit(o.SlowApplies, "count"),
				units.Bytes(o.DBSize), units.Bytes(o.DBSizeInUse), units.Bytes(o.RSS))
			t.Rows = append(t.Rows, row)
		}
		for _, n := range m.Notes {
			b.Notes = append(b.Notes, r.Label+": "+n)
		}
	}
	if n := short.note(); n != "" {
		b.Notes = append(b.Notes, n)
	}
	if len(t.Rows) > 0 {
		b.Tables = append(b.Tables, t)
	}
	return b
}

// p99Cell prints a p99 over the run: empty when nothing was observed,
// "<= 1ms" at etcd's resolution.
func p99Cell(l *result.Latency) string {
	if l == nil || l.Count == 0 {
		return ""
	}
	if l.Resolution > 0 && l.P99 <= l.Resolution {
		return atMost + units.Seconds(l.Resolution)
	}
	return units.Seconds(l.P99)
}

// p99Points returns a member's p99 of a latency (get) at each interval
// that observed it (a p99 in the lowest bucket sits on that bucket's
// bound).
func p99Points(get func(s *result.MetricsSignals) *result.Latency) func([]result.MetricsSample) plotter.XYs {
	return func(ss []result.MetricsSample) plotter.XYs {
		var pts plotter.XYs
		for _, s := range ss {
			if !s.Up() {
				continue
			}
			if l := get(s.MetricsSignals); l != nil && l.Count > 0 {
				pts = append(pts, plotter.XY{X: s.T, Y: l.P99})
			}
		}
		return pts
	}
}

// memberLines returns one line per member (each member its colour) of
// the points it gives; without points, each member's database size and
// the part in use (dashed).
func memberLines(m *result.Metrics, points func([]result.MetricsSample) plotter.XYs) []line {
	var lines []line
	for i, mm := range m.Members {
		if points != nil {
			lines = append(lines, line{Label: mm.Name, Run: i, Pts: points(mm.Series)})
			continue
		}
		var size, inUse plotter.XYs
		for _, s := range mm.Series {
			if s.Up() && s.DBSize > 0 {
				size = append(size, plotter.XY{X: s.T, Y: s.DBSize})
				inUse = append(inUse, plotter.XY{X: s.T, Y: s.DBSizeInUse})
			}
		}
		lines = append(lines, line{Label: mm.Name, Run: i, Pts: size}, line{Label: mm.Name + " in use", Run: i, Pts: inUse, Dashed: true})
	}
	return lines
}

// withLimits draws reference lines across a time chart (from 0 to x1) and
// sets its y axis again so that both the data and the lines show.
func withLimits(c Chart, lines []line, x1 float64, limits []limitLine, format func(float64) string, logY bool) {
	addLimits(c.Plot, 0, x1, limits)
	var all plotter.XYs
	for _, l := range lines {
		all = append(all, l.Pts...)
	}
	for _, l := range limits {
		all = append(all, plotter.XY{Y: l.Y})
	}
	if logY {
		logRange(&c.Plot.Y, all, func(pt plotter.XY) float64 { return pt.Y })
		return
	}
	c.Plot.Y.Max = 0
	for _, pt := range all {
		c.Plot.Y.Max = max(c.Plot.Y.Max, pt.Y)
	}
	headroom(c.Plot, format)
}
