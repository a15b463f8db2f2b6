package report

import (
	"math"
	"strconv"

	"github.com/etcdperf/etcdperf/internal/render"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// Better tells which way a metric is better.
type Better int

// The directions of metrics.
const (
	Neither Better = iota // e.g. a count of operations
	Lower                 // latencies, errors
	Higher                // throughput, IOPS
)

// Value is one run's value of a metric.
type Value struct {
	V float64
	// AtMost is true when V is the resolution of its source (etcd's
	// histograms cannot tell values under 1 ms apart): the true value is at
	// most V, and ratios with it cannot be told.
	AtMost bool
}

// Metric is one row of the summary table and of compare.
type Metric struct {
	Label string
	// Unit is "s", "ops/s", "bytes/s", "bytes", "ratio", "count" or
	// "number" (three significant digits).
	Unit   string
	Better Better
	// Get returns the run's value, false when it has none.
	Get func(r *result.Result) (Value, bool)
}

// Format prints a value of the metric.
func (m Metric) Format(v Value) string {
	s := formatUnit(v.V, m.Unit)
	if v.AtMost {
		s = "≤" + s
	}
	return s
}

func formatUnit(v float64, unit string) string {
	switch unit {
	case "bytes/s":
		return units.Bytes(v) + "/s"
	case "number":
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return render.FormatValue(v, unit)
}

// Row is one metric across the runs of a report.
type Row struct {
	Metric Metric
	// Values has one entry per run, nil where the run has no value.
	Values []*Value
	// Ratios are each value divided by the first run's; NaN where that
	// cannot be told (a value missing, zero, or at its resolution).
	Ratios []float64
	// Best is the index of the best run, Tie when the runs are within 1 %
	// of each other, NoBest when it cannot be told.
	Best int
	// Factor is how many times better the best run is than the worst.
	Factor float64
}

// Values of Row.Best that are not a run.
const (
	NoBest = -1
	Tie    = -2
)

// Rows compares the runs on every registered metric that at least one of
// them has, section by section.
func Rows(runs []Run) []Row {
	var rows []Row
	for _, s := range sections() {
		for _, m := range s.Metrics {
			row := Row{Metric: m, Values: make([]*Value, len(runs)), Ratios: make([]float64, len(runs)), Best: NoBest}
			any := false
			for i, r := range runs {
				if s.Has != nil && !s.Has(r.Result) {
					continue
				}
				if v, ok := m.Get(r.Result); ok && !math.IsNaN(v.V) && !math.IsInf(v.V, 0) {
					row.Values[i] = &v
					any = true
				}
			}
			if !any {
				continue
			}
			for i, v := range row.Values {
				row.Ratios[i] = ratio(v, row.Values[0])
			}
			row.Best, row.Factor = best(m.Better, row.Values)
			rows = append(rows, row)
		}
	}
	return rows
}

func ratio(v, first *Value) float64 {
	if v == nil || first == nil || first.V == 0 || v.AtMost || first.AtMost {
		return math.NaN()
	}
	return v.V / first.V
}

// best returns the index of the best value and how many times better it is
// than the worst. Values at their resolution take part: a value of at most
// 1 ms is better than 5 ms, and two of them tie.
func best(dir Better, vs []*Value) (int, float64) {
	if dir == Neither {
		return NoBest, math.NaN()
	}
	bi, wi, n := -1, -1, 0
	for i, v := range vs {
		if v == nil {
			continue
		}
		n++
		if bi < 0 || better(dir, v.V, vs[bi].V) {
			bi = i
		}
		if wi < 0 || better(dir, vs[wi].V, v.V) {
			wi = i
		}
	}
	if n < 2 {
		return NoBest, math.NaN()
	}
	b, w := vs[bi].V, vs[wi].V
	lo, hi := math.Min(b, w), math.Max(b, w)
	if hi == 0 || (hi-lo)/hi < 0.01 || (vs[bi].AtMost && vs[wi].AtMost) {
		return Tie, 1
	}
	if vs[bi].AtMost || vs[wi].AtMost {
		// With a bound on one side the factor is a bound too: leave it out.
		return bi, math.NaN()
	}
	if lo == 0 {
		return bi, math.Inf(1)
	}
	return bi, hi / lo
}

func better(dir Better, a, b float64) bool {
	if dir == Lower {
		return a < b
	}
	return a > b
}

// latencyMetrics returns rows for quantiles of one latency of a section.
// names are Latency.Quantile names: "p50", "p99", "max".
func latencyMetrics(label string, get func(r *result.Result) *result.Latency, names ...string) []Metric {
	var ms []Metric
	for _, q := range names {
		ms = append(ms, Metric{
			Label:  label + " " + quantileLabel(q),
			Unit:   "s",
			Better: Lower,
			Get: func(r *result.Result) (Value, bool) {
				l := get(r)
				if l == nil || l.Count == 0 {
					return Value{}, false
				}
				v, ok := l.Quantile(q)
				if !ok || (l.Bucketed && (q == "min" || q == "max" || q == "stddev")) {
					return Value{}, false
				}
				return Value{V: v, AtMost: l.Resolution > 0 && v <= l.Resolution}, true
			},
		})
	}
	return ms
}

// quantileLabel prints a Latency.Quantile name as people write it.
func quantileLabel(q string) string {
	switch q {
	case "p999":
		return "p99.9"
	case "p9999":
		return "p99.99"
	}
	return q
}
