package judge

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// metricsCriteria are the criteria `etcdperf metrics` judges at every
// interval and over the run, in order.
var metricsCriteria = []string{limits.WALFsyncP99, limits.BackendCommitP99, limits.LeaderChanges, limits.ProposalsFailed}

// Metrics judges a live watch of a cluster: the breaches of each interval,
// the checks over the run (the worst member's value), the findings.
func Metrics(r *result.Result, criteria []limits.Criterion) {
	sec := r.Metrics
	r.Checks = nil
	if sec == nil {
		conclude(r)
		return
	}
	sec.Breaches, sec.Notes = nil, dropUnjudged(sec.Notes)
	var crits []limits.Criterion
	for _, id := range metricsCriteria {
		if c, ok := limits.Lookup(criteria, id); ok {
			crits = append(crits, c)
		}
	}
	t0 := float64(sec.Start.UnixMilli()) / 1000
	for _, c := range append(crits, limits.HasLeader) {
		counted := c.Unit == limits.Count
		for _, m := range sec.Members {
			times := make([]float64, len(m.Series))
			cells := make([]result.PromValue, len(m.Series))
			for i, s := range m.Series {
				times[i] = t0 + s.T
				// A p99 of fewer observations than limits.MinSamples is
				// their maximum: an interval with so few is not judged
				// by it (the run as a whole still is).
				if v, ok := metricValue(c.ID, s.MetricsSignals, limits.MinSamples(0.99)); ok && !slices.Contains(s.Missing, c.ID) {
					cells[i] = result.PromSample(v)
				}
			}
			if b, ok := limits.Breach(c, m.Name, times, cells, counted); ok {
				sec.Breaches = append(sec.Breaches, b)
			}
		}
	}
	sec.Compactions = metricsCompactions(sec)
	var observed []result.PromMember
	for _, m := range sec.Members {
		pm := result.PromMember{Instance: m.Name, Observed: map[string]float64{}}
		for _, c := range crits {
			if v, ok := metricValue(c.ID, m.Overall, 0); ok {
				pm.Observed[c.ID] = v
			}
		}
		observed = append(observed, pm)
	}
	for _, c := range crits {
		ch, who, found := worstCheck(observed, c)
		if !found {
			sec.Notes = append(sec.Notes, fmt.Sprintf("%s: no member observed anything%s", c.ID, notJudged))
			continue
		}
		for _, m := range sec.Members {
			if m.Name == who && m.Overall != nil {
				switch c.ID {
				case limits.WALFsyncP99:
					ch.Bound = m.Overall.WALFsync.AtFloor()
				case limits.BackendCommitP99:
					ch.Bound = m.Overall.BackendCommit.AtFloor()
				}
			}
		}
		r.Checks = append(r.Checks, ch)
	}
	conclude(r)
	r.Summary = metricsSummary(r)
	metricsTuning(r)
}

// metricValue is a criterion's value in a member's signals; false when
// there is none (nothing observed, no deltas yet).
func metricValue(id string, s *result.MetricsSignals, minSamples float64) (float64, bool) {
	if s == nil {
		return 0, false
	}
	p99 := func(l *result.Latency) (float64, bool) {
		if l == nil || l.Count == 0 || float64(l.Count) < minSamples {
			return 0, false
		}
		return l.P99, true
	}
	switch id {
	case limits.WALFsyncP99:
		return p99(s.WALFsync)
	case limits.BackendCommitP99:
		return p99(s.BackendCommit)
	case limits.HasLeader.ID:
		return s.HasLeader, true
	}
	if s.Seconds == 0 { // a first answer: no deltas
		return 0, false
	}
	switch id {
	case limits.LeaderChanges:
		return s.LeaderChanges, true
	case limits.ProposalsFailed:
		return s.ProposalsFailed, true
	}
	return 0, false
}

// worstCheck judges a criterion by its worst value over the members (the
// check's title names that member when there are several), with who it
// is; false when no member has a value.
func worstCheck(ms []result.PromMember, c limits.Criterion) (result.Check, string, bool) {
	worst, who, found := worstMember(ms, c)
	if !found {
		return result.Check{}, "", false
	}
	ch := limits.Evaluate(c, worst)
	if len(ms) > 1 {
		ch.Title += " (worst member: " + who + ")"
	}
	return ch, who, true
}

// worstMember returns the worst value of a criterion over the members.
func worstMember(ms []result.PromMember, c limits.Criterion) (float64, string, bool) {
	var worst float64
	var who string
	found := false
	for _, m := range ms {
		v, ok := m.Observed[c.ID]
		if !ok {
			continue
		}
		if !found || (c.Op == limits.AtLeast && v < worst) || (c.Op != limits.AtLeast && v > worst) {
			worst, who, found = v, m.Instance, true
		}
	}
	return worst, who, found
}

func metricsSummary(r *result.Result) string {
	sec := r.Metrics
	var b strings.Builder
	fmt.Fprintf(&b, "%d member(s) over %s, %d interval(s) of %s", len(sec.Members), units.Seconds(sec.Seconds), sec.Intervals, units.Seconds(sec.Interval))
	if l := sec.WorstP99(func(s *result.MetricsSignals) *result.Latency { return s.WALFsync }); l != nil {
		fmt.Fprintf(&b, "; WAL fsync p99 %s", quantile(l, l.P99))
	}
	if l := sec.WorstP99(func(s *result.MetricsSignals) *result.Latency { return s.BackendCommit }); l != nil {
		fmt.Fprintf(&b, ", backend commit p99 %s", quantile(l, l.P99))
	}
	var down []string
	for _, m := range sec.Members {
		if m.Unreachable > 0 {
			down = append(down, fmt.Sprintf("%s missed %d", m.Name, m.Unreachable))
		}
	}
	if len(down) > 0 {
		fmt.Fprintf(&b, "; %s", strings.Join(down, ", "))
	}
	b.WriteString(overLimits(r.Checks) + ".")
	return b.String()
}

// metricsCompactions are each member's scheduled compactions over the
// run, each placed at the end of the interval it ended in, and its latency
// spikes (each window of breached intervals of its WAL fsync or backend
// commit p99, at its start) set beside them.
func metricsCompactions(sec *result.Metrics) []result.Compactions {
	var out []result.Compactions
	for _, m := range sec.Members {
		var ends, took []float64
		for _, s := range m.Series {
			if s.Up() && s.Upkeep != nil && s.Upkeep.Compactions > 0 {
				ends = append(ends, s.T)
				took = append(took, s.Upkeep.CompactionSeconds/s.Upkeep.Compactions)
			}
		}
		if len(ends) == 0 {
			continue
		}
		out = append(out, result.NewCompactions(m.Name, result.CompactionMetric, ends, took, spikeStarts(sec.Breaches, m.Name, sec.Start), sec.Interval, sec.Interval))
	}
	return out
}

// spikeStarts are a member's latency spikes in a history's breaches: the
// start of each window of consecutive evaluation points past the WAL
// fsync or backend commit p99 limit (or warning level), in seconds since
// origin.
func spikeStarts(bs []result.PromBreach, instance string, origin time.Time) []float64 {
	seen := map[time.Time]bool{}
	var out []float64
	for _, b := range bs {
		if b.Instance != instance || (b.Check != limits.WALFsyncP99 && b.Check != limits.BackendCommitP99) {
			continue
		}
		for _, w := range b.Windows {
			if !seen[w.From] { // both limits passed at once are one spike
				seen[w.From] = true
				out = append(out, w.From.Sub(origin).Seconds())
			}
		}
	}
	return out
}
