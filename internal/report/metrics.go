package report

import (
	"fmt"
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
		s = atMost + s
	}
	return s
}

// atMost marks a value at its source's resolution, as the text view does
// (render.LatencyValue): "<= 1ms" is at most 1 ms.
const atMost = "<= "

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
	// Best is the index of the best run, Tie when the runs differ by no
	// more than the noise floor (see RelativeNoise), NoBest when it cannot be told.
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
		ms := s.Metrics
		if s.MetricsOf != nil {
			if with := runsWith(s, runs); len(with) > 0 {
				ms = append(append([]Metric(nil), ms...), s.MetricsOf(with)...)
			}
		}
		for _, m := range ms {
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
				row.Ratios[i] = ratio(m, v, row.Values[0])
			}
			row.Best, row.Factor = best(m.Better, m.Unit, row.Values)
			rows = append(rows, row)
		}
	}
	return rows
}

// The noise floor of `etcdperf compare` and of the report's "better"
// column: two runs of the same command on the same machine never give the
// same numbers, so a run is named better only when it beats the worst run
// by more than both floors:
//
//   - RelativeNoise: by more than 10 % (the worse value is over 1.1x the
//     better one); percentiles of two runs on one disk differ that much;
//   - AbsoluteNoise, per unit: by more than 50 µs for a latency (a wake-up
//     of a thread on a busy host takes that long), 1 percentage point for
//     a share (CPU steal, iowait, utilisation), 1/s for a rate; counts
//     (errors, leader changes) have no absolute floor.
//
// Anything closer is a tie. A ratio to the first run is not shown when
// either value prints as zero (a CPU steal of 0.0% against 0.0%): there is
// nothing to divide.
const RelativeNoise = 0.10

// AbsoluteNoise is the absolute noise floor of each unit (see
// RelativeNoise); a unit not listed has none.
var AbsoluteNoise = map[string]float64{"s": 50e-6, "ratio": 0.01, "ops/s": 1}

// NoiseText says the noise floor in words, for the comparison's footnote.
func NoiseText() string {
	return fmt.Sprintf("a tie is a difference of at most %.0f%%, or at most %s for a latency, %.0f point of a share, %.0f/s of a rate",
		RelativeNoise*100, units.Seconds(AbsoluteNoise["s"]), AbsoluteNoise["ratio"]*100, AbsoluteNoise["ops/s"])
}

func ratio(m Metric, v, first *Value) float64 {
	if v == nil || first == nil || first.V == 0 || v.AtMost || first.AtMost {
		return math.NaN()
	}
	if zero := formatUnit(0, m.Unit); formatUnit(v.V, m.Unit) == zero || formatUnit(first.V, m.Unit) == zero {
		return math.NaN()
	}
	return v.V / first.V
}

// withinNoise tells whether two values of a unit differ by no more than
// the noise floor.
func withinNoise(unit string, a, b float64) bool {
	lo, hi := math.Min(a, b), math.Max(a, b)
	if hi-lo <= AbsoluteNoise[unit] {
		return true
	}
	return hi > 0 && lo > 0 && hi <= lo*(1+RelativeNoise)
}

// best returns the index of the best value and how many times better it is
// than the worst; Tie when they differ by no more than the noise floor of
// their unit (see RelativeNoise). Values at their resolution take part: a
// value of at most 1 ms is better than 5 ms, and two of them tie.
func best(dir Better, unit string, vs []*Value) (int, float64) {
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
	if hi == 0 || withinNoise(unit, lo, hi) || (vs[bi].AtMost && vs[wi].AtMost) {
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
