package diagnose

import (
	"fmt"
	"sort"
	"strings"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
)

func init() {
	Register(Rule{ID: "bench_errors", Apply: benchErrors})
}

// benchErrors reports failed requests of a load run with the most frequent
// reason; from requests_failed of them (a tenth) it is critical.
func benchErrors(r *result.Result) []result.Finding {
	if r.Bench == nil || len(r.Bench.Errors) == 0 {
		return nil
	}
	var failed int64
	keys := make([]string, 0, len(r.Bench.Errors))
	for k, n := range r.Bench.Errors {
		failed += n
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return r.Bench.Errors[keys[i]] > r.Bench.Errors[keys[j]] })
	total := failed + r.Bench.Ops
	f := result.Finding{
		ID:       "bench_errors",
		Severity: result.Warning,
		Title:    fmt.Sprintf("%d of %d requests failed, most with %q", failed, total, keys[0]),
	}
	if float64(failed) >= LimitOf(r, limits.RequestsFailed)*float64(total) {
		f.Severity = result.Critical
	}
	for _, k := range keys {
		f.Evidence = append(f.Evidence, result.Evidence{What: k, Observed: float64(r.Bench.Errors[k]), Unit: "count"})
	}
	top := keys[0]
	switch {
	case strings.Contains(top, "leader changed") || strings.Contains(top, "no leader"):
		f.Recommendation = "The cluster lost its leader during the run: look for slow WAL fsyncs (etcdperf disk) and missed heartbeats in etcd's log."
	case strings.Contains(top, "request timed out") || strings.Contains(top, "DeadlineExceeded"):
		f.Recommendation = "etcd could not commit requests in time: check the WAL fsync latency (etcdperf disk) and the CPU of the members; lower --rate or --clients to find the load etcd sustains."
	case strings.Contains(top, "too many requests"):
		f.Recommendation = "etcd's apply loop fell behind its commits: the load is above what this cluster applies; lower --rate."
	case strings.Contains(top, "permission denied") || strings.Contains(top, "Unauthenticated"):
		f.Recommendation = "The user may not write under the prefix: grant its role readwrite on the prefix (etcdctl role grant-permission --prefix)."
	default:
		f.Recommendation = "See the error distribution; errors under load usually come from an overloaded member or from its disk."
	}
	return []result.Finding{f}
}
