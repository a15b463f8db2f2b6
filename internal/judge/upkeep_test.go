package judge

import (
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
)

// A member watched for 5 minutes whose backend commit p99 passes its
// limit in the intervals where its compactions end, every minute, and
// once elsewhere: metrics names the spikes compaction's.
func TestMetricsCompactionSpikes(t *testing.T) {
	mm := result.MetricsMember{Name: "etcd-0"}
	for i := 1; i <= 30; i++ {
		commit := 0.004
		s := &result.MetricsSignals{Seconds: 10, HasLeader: 1, WALFsync: &result.Latency{Count: 500, P99: 0.002}}
		if i%6 == 0 { // a compaction ends every minute, and commits wait
			s.Upkeep = &result.Upkeep{Compactions: 1, CompactionSeconds: 0.8, CompactionPauseSeconds: 0.3}
			commit = 0.060
		}
		if i == 15 {
			commit = 0.040 // one spike elsewhere
		}
		s.BackendCommit = &result.Latency{Count: 500, P99: commit}
		mm.Series = append(mm.Series, result.MetricsSample{T: float64(i * 10), MetricsSignals: s})
	}
	r := result.New(result.KindMetrics)
	r.Metrics = &result.Metrics{Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Interval: 10, Intervals: 30, Members: []result.MetricsMember{mm}}
	Judge(r, limits.Table)
	cs := r.Metrics.Compactions
	if len(cs) != 1 || cs[0].Count != 5 || !cs[0].Regular || cs[0].Period != 60 || cs[0].Spikes != 6 || cs[0].Near != 5 || cs[0].TookMax != 0.8 {
		t.Fatalf("compactions %+v", cs)
	}
	var found bool
	for _, f := range r.Findings {
		if f.ID == "compaction_spikes" {
			found = strings.Contains(f.Title, "5 of its 6 latency spikes") && strings.Contains(f.Title, "every 1m0s")
		}
	}
	if !found {
		t.Errorf("no compaction_spikes finding naming them: %+v", r.Findings)
	}
}
