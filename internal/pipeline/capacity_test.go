package pipeline

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/capacity"
	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/limits"
)

// A hold of two intervals whose first broke a limit twice over ends
// there (judge.HoldBroken), broken, its figures those of the time it
// ran; under limits it cannot break, it runs its whole time.
func TestCapacityHoldEndsOnceBroken(t *testing.T) {
	ep, _ := external(t)
	strict, err := limits.Override(limits.Table, []string{limits.WALFsyncP99 + "=1us"})
	if err != nil {
		t.Fatal(err)
	}
	lenient, err := limits.Override(limits.Table, []string{limits.RequestP99 + "=1h", limits.WALFsyncP99 + "=1h", limits.BackendCommitP99 + "=1h"})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		name     string
		criteria []limits.Criterion
		broken   bool
	}{{"WAL fsync p99 limit 1µs", strict, true}, {"limits it cannot pass", lenient, false}} {
		l := capacity.Load{Target: lab.TargetOptions{Conn: cluster.ConnOptions{Endpoints: []string{ep}}, RunID: "hold" + string(rune('a'+i))},
			Profile: profileOf(t, "s"), Duration: 2 * time.Second, Interval: time.Second}
		st, err := capacityStep(c.criteria)(context.Background(), l)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		broke := slices.Contains(st.Broke, limits.WALFsyncP99)
		switch {
		case c.broken && (!broke || len(st.Intervals) != 1 || st.Seconds > 1.8):
			t.Errorf("%s: broke %v, %d intervals, %.1fs; want the WAL fsync p99 broken, the hold ended after its first 1s interval", c.name, st.Broke, len(st.Intervals), st.Seconds)
		case !c.broken && (broke || len(st.Intervals) != 2 || st.Seconds < 1.9):
			t.Errorf("%s: broke %v, %d intervals, %.1fs; want the whole 2s held, in two intervals", c.name, st.Broke, len(st.Intervals), st.Seconds)
		}
	}
}
