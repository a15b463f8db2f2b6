package judge

import (
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
)

// A failed prom check names each failed check with its value and limit in
// their units.
func TestPromCheckSummaryFailed(t *testing.T) {
	wal, _ := limits.Lookup(limits.Table, limits.WALFsyncP99)
	lc, _ := limits.Lookup(limits.Table, limits.LeaderChanges)
	end := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	res := &result.Result{Verdict: result.Fail, Prom: &result.Prom{Members: make([]result.PromMember, 3), Start: end.Add(-2 * time.Hour), End: end},
		Checks: []result.Check{limits.Evaluate(wal, 0.0123), limits.Evaluate(lc, 2)}}
	got := promCheckSummary(res)
	want := "Over the 2h period, wal_fsync_p99 12.3ms (limit < 10ms), leader_changes 2 (limit <= 0) on 3 member(s): etcd was not healthy in this period."
	if got != want {
		t.Errorf("summary\n%s\nwant\n%s", got, want)
	}
}
