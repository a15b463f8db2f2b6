package judge

import (
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// Bench judges a load run by etcd's own metrics over it (WAL fsync and
// backend commit p99, leader changes, failed proposals).
func Bench(r *result.Result, criteria []limits.Criterion) {
	r.Checks = nil
	serverChecks(r, criteria)
	conclude(r)
	r.Summary = benchSummary(r)
}

// serverChecks adds the checks on the server's metrics to r.
func serverChecks(r *result.Result, criteria []limits.Criterion) {
	s := r.Server
	if s == nil {
		return
	}
	if s.WALFsync != nil && s.WALFsync.Count > 0 {
		limits.Apply(&r.Checks, criteria, limits.WALFsyncP99, s.WALFsync.P99, s.WALFsync.AtFloor())
	}
	if s.BackendCommit != nil && s.BackendCommit.Count > 0 {
		limits.Apply(&r.Checks, criteria, limits.BackendCommitP99, s.BackendCommit.P99, s.BackendCommit.AtFloor())
	}
	limits.Apply(&r.Checks, criteria, limits.LeaderChanges, s.LeaderChanges, false)
	limits.Apply(&r.Checks, criteria, limits.ProposalsFailed, s.ProposalsFailed, false)
}

func benchSummary(r *result.Result) string {
	b := r.Bench
	if b == nil {
		return ""
	}
	var s strings.Builder
	fmt.Fprintf(&s, "%d %s requests in %s: %.0f/s", b.Ops, b.Workload, units.Seconds(b.Seconds), b.Throughput)
	if b.Latency != nil {
		fmt.Fprintf(&s, ", p99 %s", units.Seconds(b.Latency.P99))
	}
	if errs := result.ErrorTotal(b.Errors); errs > 0 {
		fmt.Fprintf(&s, ", %d failed", errs)
	} else {
		s.WriteString(", no errors")
	}
	if srv := r.Server; srv != nil && srv.WALFsync != nil && srv.WALFsync.Count > 0 {
		fmt.Fprintf(&s, "; etcd's WAL fsync p99 %s", quantile(srv.WALFsync, srv.WALFsync.P99))
	}
	s.WriteString(overLimits(r.Checks) + ".")
	return s.String()
}

// Check judges etcdctl check perf's load: its criteria (throughput,
// slowest request, standard deviation), the request p99 and failed
// requests, then etcd's own as Bench, and whether the client or etcd set
// the pace; and the capacity sweep and the soak after the load.
func Check(r *result.Result, criteria []limits.Criterion) {
	r.Checks = nil
	perfChecks(r, criteria)
	serverChecks(r, criteria)
	capacityChecks(r, criteria)
	conclude(r)
	r.Summary = checkSummary(r)
}

// perfChecks adds the checks of a check perf load and says what limited
// its throughput.
func perfChecks(r *result.Result, criteria []limits.Criterion) {
	b, pf := r.Bench, r.Perf
	if b == nil || pf == nil {
		return
	}
	limits.Apply(&r.Checks, criteria, limits.Throughput, pf.Reached, false)
	if b.Latency != nil && b.Latency.Count > 0 {
		limits.Apply(&r.Checks, criteria, limits.SlowestRequest, b.Latency.Max, false)
		limits.Apply(&r.Checks, criteria, limits.LatencyStddev, b.Latency.Stddev, false)
		limits.Apply(&r.Checks, criteria, limits.RequestP99, b.Latency.P99, false)
	}
	limits.Apply(&r.Checks, criteria, limits.RequestErrors, float64(result.ErrorTotal(b.Errors)), false)
	pf.LimitedBy = diagnose.LoadLimitedBy(r)
}

func checkSummary(r *result.Result) string {
	b, pf := r.Bench, r.Perf
	if b == nil || pf == nil {
		return ""
	}
	var s strings.Builder
	fmt.Fprintf(&s, "profile %s: %.0f of %.0f puts/s (%.0f%%)", pf.Profile, b.Throughput, pf.TargetRate, pf.Reached*100)
	if b.Latency != nil {
		fmt.Fprintf(&s, ", p99 %s, slowest %s", units.Seconds(b.Latency.P99), units.Seconds(b.Latency.Max))
	}
	if srv := r.Server; srv != nil && srv.WALFsync != nil && srv.WALFsync.Count > 0 {
		fmt.Fprintf(&s, ", etcd's WAL fsync p99 %s", quantile(srv.WALFsync, srv.WALFsync.P99))
	}
	var failed []string
	for _, c := range r.Checks {
		if c.Status == result.StatusFail {
			failed = append(failed, c.Name)
		}
	}
	switch {
	case len(failed) == 0 && r.Verdict != result.Fail:
		s.WriteString(": this cluster sustains the profile.")
	case pf.LimitedBy == result.CauseClient:
		fmt.Fprintf(&s, ": %s failed, but the load generator's machine, not etcd, was saturated: this says nothing against etcd.", strings.Join(failed, ", "))
	case len(failed) > 0:
		fmt.Fprintf(&s, ": %s failed.", strings.Join(failed, ", "))
	default:
		s.WriteString(".")
	}
	return s.String()
}

// Datascale judges a datascale run as etcdctl does: any failed request
// fails it; the memory is reported, not judged.
func Datascale(r *result.Result, criteria []limits.Criterion) {
	r.Checks = nil
	if r.Bench != nil {
		limits.Apply(&r.Checks, criteria, limits.RequestErrors, float64(result.ErrorTotal(r.Bench.Errors)), false)
	}
	conclude(r)
	ds := r.Datascale
	switch {
	case ds == nil || len(ds.Members) == 0:
		r.Summary = "etcd's memory could not be read (process_resident_memory_bytes), so nothing can be said about it."
	default:
		r.Summary = fmt.Sprintf("etcd's resident memory grew by %s (%s to %s) to hold %d keys of %d bytes: %s per key.",
			units.Bytes(ds.Growth), units.Bytes(ds.RSSBefore), units.Bytes(ds.RSSAfter), ds.Keys, ds.KVSize, units.Bytes(ds.PerKey))
	}
}
