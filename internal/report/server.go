package report

import (
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// The server section: what etcd's own metrics said during the run (deltas
// of its histograms between two scrapes, so quantiles are bucket bounds).
func init() {
	wal := func(r *result.Result) *result.Latency { return r.Server.WALFsync }
	commit := func(r *result.Result) *result.Latency { return r.Server.BackendCommit }
	metrics := latencyMetrics("etcd WAL fsync", wal, "p50", "p99")
	metrics = append(metrics, latencyMetrics("etcd backend commit", commit, "p50", "p99")...)
	metrics = append(metrics,
		Metric{Label: "leader changes", Unit: "count", Better: Lower, Get: func(r *result.Result) (Value, bool) {
			return Value{V: r.Server.LeaderChanges}, true
		}},
		Metric{Label: "failed proposals", Unit: "count", Better: Lower, Get: func(r *result.Result) (Value, bool) {
			return Value{V: r.Server.ProposalsFailed}, true
		}},
	)
	Register(Section{
		ID: "server", Title: "etcd server: its own WAL fsync and backend commit", Order: 30,
		Has:     func(r *result.Result) bool { return r.Server != nil },
		Metrics: metrics,
		Build:   serverBlock,
	})
}

func serverBlock(runs []Run) Block {
	var b Block
	var wals, commits []curve
	for _, r := range runs {
		s := r.Result.Server
		wals = append(wals, curve{Label: r.Label, Run: r.Index, Lat: s.WALFsync})
		commits = append(commits, curve{Label: r.Label, Run: r.Index, Lat: s.BackendCommit})
		// With several members, each is a dashed curve in its run's colour.
		for _, m := range s.Members {
			wals = append(wals, curve{Label: r.Label + " " + m.Name, Run: r.Index, Lat: m.WALFsync, Dashed: true})
			commits = append(commits, curve{Label: r.Label + " " + m.Name, Run: r.Index, Lat: m.BackendCommit, Dashed: true})
		}
	}
	const caption = "Quantiles of etcd's histogram over the run; below its lowest bucket etcd cannot tell values apart."
	if c, ok := percentileChart("server-wal-fsync", "etcd WAL fsync by percentile", caption, wals,
		append(limitsFor(runs, limits.WALFsyncP99), resolutionLine(wals)...)...); ok {
		b.Charts = append(b.Charts, c)
	}
	if c, ok := percentileChart("server-backend-commit", "etcd backend commit by percentile", caption, commits,
		append(limitsFor(runs, limits.BackendCommitP99), resolutionLine(commits)...)...); ok {
		b.Charts = append(b.Charts, c)
	}
	t := Table{Title: "quantiles per run (<= marks a value at etcd's resolution: at most that)",
		Header: []string{"", "count", "p50", "p90", "p99", "p99.9"}}
	for _, g := range []struct {
		name   string
		curves []curve
	}{{"WAL fsync", wals}, {"backend commit", commits}} {
		for _, c := range g.curves {
			if c.Lat == nil {
				continue
			}
			row := []string{c.Label + ": " + g.name, formatUnit(float64(c.Lat.Count), "count")}
			for _, v := range []float64{c.Lat.P50, c.Lat.P90, c.Lat.P99, c.Lat.P999} {
				s := units.Seconds(v)
				if c.Lat.Resolution > 0 && v <= c.Lat.Resolution {
					s = atMost + units.Seconds(c.Lat.Resolution)
				}
				row = append(row, s)
			}
			t.Rows = append(t.Rows, row)
		}
	}
	if len(t.Rows) > 0 {
		b.Tables = append(b.Tables, t)
	}
	return b
}

// resolutionLine marks the lowest bucket of etcd's histograms (the first
// resolution any curve reports).
func resolutionLine(cs []curve) []limitLine {
	for _, c := range cs {
		if c.Lat != nil && c.Lat.Resolution > 0 {
			return []limitLine{{Label: "resolution " + units.Seconds(c.Lat.Resolution), Y: c.Lat.Resolution, Color: noteColor}}
		}
	}
	return nil
}
