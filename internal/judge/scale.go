package judge

import (
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// Scale judges a density run: the worst step's put p99, whole-list time
// and database size against the quota, and etcd's disk histograms over the
// whole run.
func Scale(r *result.Result, criteria []limits.Criterion) {
	if r.Kube != nil {
		kube(r, criteria)
		return
	}
	sc := r.Scale
	r.Checks = nil
	if sc == nil {
		conclude(r)
		return
	}
	etcdChecks(r, criteria)
	for _, id := range []string{limits.PutP99, limits.ListAllP99, limits.DBQuotaUsed} {
		var worst result.Check
		found := false
		for _, st := range sc.Steps {
			for _, ch := range StepChecks(st, sc.Quota, criteria) {
				if ch.Name == id && (!found || worse(ch, worst)) {
					worst, found = ch, true
				}
			}
		}
		if found {
			r.Checks = append(r.Checks, worst)
		}
	}
	conclude(r)
	r.Summary = scaleSummary(r)
}

// etcdChecks judges etcd's disk histograms over the whole run.
func etcdChecks(r *result.Result, criteria []limits.Criterion) {
	if s := r.Server; s != nil {
		if s.WALFsync != nil && s.WALFsync.Count > 0 {
			limits.Apply(&r.Checks, criteria, limits.WALFsyncP99, s.WALFsync.P99, s.WALFsync.AtFloor())
		}
		if s.BackendCommit != nil && s.BackendCommit.Count > 0 {
			limits.Apply(&r.Checks, criteria, limits.BackendCommitP99, s.BackendCommit.P99, s.BackendCommit.AtFloor())
		}
	}
}

// worse reports whether a is further on the wrong side of its limit than b.
func worse(a, b result.Check) bool {
	if a.Op == string(limits.AtLeast) {
		return a.Observed < b.Observed
	}
	return a.Observed > b.Observed
}

// StepChecks judges one step of a density run: its put p99, its slowest
// list of a whole resource and its database size against the quota (0:
// etcd's default).
func StepChecks(st result.ScaleStep, quota float64, criteria []limits.Criterion) []result.Check {
	var out []result.Check
	add := func(id string, v float64) {
		if ch, ok := limits.Judge(criteria, id, v); ok {
			out = append(out, ch)
		}
	}
	if st.Put != nil && st.Put.Count > 0 {
		add(limits.PutP99, st.Put.P99)
	}
	var slowest float64
	for _, l := range st.Lists {
		if l.Latency != nil && l.Latency.Count > 0 {
			slowest = max(slowest, l.Latency.P99)
		}
	}
	if slowest > 0 {
		add(limits.ListAllP99, slowest)
	}
	if st.DBSize > 0 {
		add(limits.DBQuotaUsed, st.DBSize/quotaOr(quota))
	}
	return out
}

func quotaOr(quota float64) float64 {
	if quota <= 0 {
		return diagnose.DefaultQuota
	}
	return quota
}

// StopReason says why a density run must not go on after step st (prev is
// the step before, nil for the first): a limit broken, a failed request, or
// a database that the next step would take past the quota's limit; "" to
// go on.
func StopReason(st result.ScaleStep, prev *result.ScaleStep, quota float64, criteria []limits.Criterion) string {
	at := fmt.Sprintf("at %d objects (step %d)", st.Objects, st.Step)
	if errs := result.ErrorTotal(st.Errors); errs > 0 {
		top, _ := result.TopError(st.Errors)
		return fmt.Sprintf("%d requests failed %s, most with %q", errs, at, top)
	}
	for _, ch := range StepChecks(st, quota, criteria) {
		if ch.Status == result.StatusFail {
			return fmt.Sprintf("%s %s %s is over its limit (%s %s)", ch.Title, units.Value(ch.Observed, ch.Unit), at, ch.Op, units.Value(ch.Limit, ch.Unit))
		}
	}
	quota = quotaOr(quota)
	if c, ok := limits.Lookup(criteria, limits.DBQuotaUsed); ok && prev != nil && st.DBSize > prev.DBSize {
		next := st.DBSize + (st.DBSize - prev.DBSize)
		if next/quota >= c.Limit {
			return fmt.Sprintf("the next step would take the database to %s, %.0f%% of the quota %s %s (limit %s %.0f%%)",
				units.Bytes(next), 100*next/quota, units.Bytes(quota), at, c.Op, 100*c.Limit)
		}
	}
	return ""
}

func scaleSummary(r *result.Result) string {
	sc := r.Scale
	if len(sc.Steps) == 0 {
		return "no step completed."
	}
	last := sc.Steps[len(sc.Steps)-1]
	var s strings.Builder
	fmt.Fprintf(&s, "%d objects in %d of %d steps (%s): db %s", last.Objects, len(sc.Steps), sc.Planned, units.Seconds(sc.Seconds), units.Bytes(last.DBSize))
	if last.RSS > 0 {
		fmt.Fprintf(&s, ", etcd RSS %s", units.Bytes(last.RSS))
	}
	if last.Put != nil && last.Put.Count > 0 {
		fmt.Fprintf(&s, ", put p99 %s", units.Seconds(last.Put.P99))
	}
	for _, l := range last.Lists {
		if l.Latency != nil && l.Latency.Count > 0 {
			fmt.Fprintf(&s, ", list %s %s", l.Kind, units.Seconds(l.Latency.P50))
		}
	}
	if last.WatchLag != nil && last.WatchLag.Count > 0 {
		fmt.Fprintf(&s, ", watch lag p99 %s", units.Seconds(last.WatchLag.P99))
	}
	if sc.Stopped != "" {
		fmt.Fprintf(&s, "; stopped: %s", sc.Stopped)
	} else {
		// A check over the whole run (etcd's WAL fsync, backend commit)
		// fails the verdict without stopping a step: say which.
		s.WriteString(overLimits(r.Checks))
	}
	s.WriteString(".")
	return s.String()
}
