package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/plot/plotter"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// The bench section: the client side of a load against etcd (`bench`,
// `check`, `scale` steps): throughput, request latency, errors, and the
// per-second series.
func init() {
	lat := func(r *result.Result) *result.Latency { return r.Bench.Latency }
	svc := func(r *result.Result) *result.Latency { return r.Bench.ServiceLatency }
	metrics := []Metric{{Label: "throughput", Unit: "ops/s", Better: Higher, Get: func(r *result.Result) (Value, bool) {
		return Value{V: r.Bench.Throughput}, r.Bench.Ops > 0 || r.Bench.Throughput > 0
	}}}
	metrics = append(metrics, latencyMetrics("request latency", lat, "p50", "p90", "p99", "p999", "max")...)
	metrics = append(metrics, latencyMetrics("service latency", svc, "p99")...)
	metrics = append(metrics,
		Metric{Label: "request errors", Unit: "count", Better: Lower, Get: func(r *result.Result) (Value, bool) {
			return Value{V: float64(result.ErrorTotal(r.Bench.Errors))}, true
		}},
		Metric{Label: "requests", Unit: "count", Get: func(r *result.Result) (Value, bool) {
			return Value{V: float64(r.Bench.Ops)}, true
		}},
	)
	Register(Section{
		ID: "bench", Title: "Requests: the load against etcd", Order: 20,
		Has:     func(r *result.Result) bool { return r.Bench != nil },
		Metrics: metrics,
		Build:   benchBlock,
	})
}

func benchBlock(runs []Run) Block {
	var b Block
	var lats, both []curve
	var rates, p99s []line
	for _, r := range runs {
		bn := r.Result.Bench
		lats = append(lats, curve{Label: r.Label, Run: r.Index, Lat: bn.Latency})
		both = append(both, curve{Label: r.Label, Run: r.Index, Lat: bn.Latency})
		if bn.ServiceLatency != nil {
			both = append(both, curve{Label: r.Label + " (service)", Run: r.Index, Lat: bn.ServiceLatency, Dashed: true})
		}
		if len(bn.Series) > 0 {
			rate, p99 := seriesLines(bn.Series)
			rates = append(rates, line{Label: r.Label, Run: r.Index, Pts: rate})
			if len(positive(p99)) > 0 {
				p99s = append(p99s, line{Label: r.Label, Run: r.Index, Pts: p99})
			}
		}
	}
	if c, ok := percentileChart("bench-latency-percentiles", "request latency by percentile",
		"With a rate set, latency counts from when each request was due (queueing included); service latency (dashed) from when it was sent.", both, limitsFor(runs, limits.RequestP99)...); ok {
		b.Charts = append(b.Charts, c)
	}
	if c, ok := histogramChart("bench-latency-histogram", "request latency distribution", "Share of the requests in each latency band.", lats); ok {
		b.Charts = append(b.Charts, c)
	}
	var short shortCharts
	perSecond := func(v float64) string { return fmt.Sprintf("%.0f", v) }
	caption := "Requests completed per second."
	targets := targetRates(runs)
	if len(targets) > 0 {
		caption += " The dotted line is the rate the load asked for: a line under it is a second that fell short."
	}
	if c, ok := timeChart("bench-throughput", "throughput over time", caption, "requests/s", rates, perSecond, false); ok {
		withLimits(c, rates, lastX(rates), targets, perSecond, false)
		legendAt(c.Plot, false, true) // the lines run along the top
		b.Charts = append(b.Charts, c)
	} else {
		short.add("throughput", rates)
	}
	if c, ok := timeChart("bench-p99", "p99 latency over time", "The 99th percentile of each second's requests.", "p99 latency", p99s,
		units.Seconds, spansDecades(p99s)); ok {
		b.Charts = append(b.Charts, c)
	} else {
		short.add("p99 latency", p99s)
	}
	if n := short.note(); n != "" {
		b.Notes = append(b.Notes, n)
	}
	if t, ok := errorTable(runs); ok {
		b.Tables = append(b.Tables, t)
	}
	return b
}

// targetRates are the rates the runs' loads asked for, one line each.
func targetRates(runs []Run) []limitLine {
	var out []limitLine
	seen := map[float64]bool{}
	for _, r := range runs {
		if rate := r.Result.Bench.Rate; rate > 0 && !seen[rate] {
			seen[rate] = true
			out = append(out, limitLine{Label: "target " + fmt.Sprintf("%g/s", rate), Y: rate, Color: noteColor})
		}
	}
	return out
}

// lastX is the largest x of the lines.
func lastX(ls []line) float64 {
	x := 0.0
	for _, l := range ls {
		for _, p := range l.Pts {
			x = math.Max(x, p.X)
		}
	}
	return x
}

// seriesLines turns the series into requests per second and p99 over time.
// Each sample holds the requests of one interval; the interval is the
// usual step between samples (one second unless the series says
// otherwise).
func seriesLines(ss []result.Sample) (rate, p99 plotter.XYs) {
	var steps []float64
	for i := 1; i < len(ss); i++ {
		if d := ss[i].T - ss[i-1].T; d > 0 {
			steps = append(steps, d)
		}
	}
	step := 1.0
	if len(steps) > 0 {
		sort.Float64s(steps)
		step = steps[len(steps)/2]
	}
	for _, s := range ss {
		rate = append(rate, plotter.XY{X: s.T, Y: float64(s.Ops) / step})
		p99 = append(p99, plotter.XY{X: s.T, Y: s.P99})
	}
	return rate, p99
}

// spansDecades tells whether latencies over time vary so much (a stall
// among fast seconds) that only a log axis shows both.
func spansDecades(ls []line) bool {
	lo, hi := math.Inf(1), 0.0
	for _, l := range ls {
		for _, p := range l.Pts {
			if p.Y > 0 {
				lo, hi = math.Min(lo, p.Y), math.Max(hi, p.Y)
			}
		}
	}
	return hi > 0 && hi/lo > 20
}

// errorTable lists the failed requests by reason, one column per run.
func errorTable(runs []Run) (Table, bool) {
	reasons := map[string]bool{}
	for _, r := range runs {
		for k := range r.Result.Bench.Errors {
			reasons[k] = true
		}
	}
	if len(reasons) == 0 {
		return Table{}, false
	}
	t := Table{Title: "failed requests by reason", Header: []string{"reason"}}
	for _, r := range runs {
		t.Header = append(t.Header, r.Label)
	}
	for _, k := range slices.Sorted(maps.Keys(reasons)) {
		row := []string{k}
		for _, r := range runs {
			row = append(row, formatUnit(float64(r.Result.Bench.Errors[k]), "count"))
		}
		t.Rows = append(t.Rows, row)
	}
	return t, true
}
