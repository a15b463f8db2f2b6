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

// A hold ends once the intervals it measured decide it (judge.HoldDecided):
// one of three whose first broke a limit twice over ends there, broken,
// its figures those of the time it ran; one of three under limits it
// cannot break ends after two, held (a third could not change the
// median); one of two under them runs its whole time.
func TestCapacityHoldEndsOnceDecided(t *testing.T) {
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
		name      string
		criteria  []limits.Criterion
		intervals int // of the hold's time
		broken    bool
		ran       int // intervals it ran
	}{
		{"WAL fsync p99 limit 1µs, three intervals", strict, 3, true, 1},
		{"limits it cannot pass, three intervals", lenient, 3, false, 2},
		{"limits it cannot pass, two intervals", lenient, 2, false, 2},
	} {
		l := capacity.Load{Target: lab.TargetOptions{Conn: cluster.ConnOptions{Endpoints: []string{ep}}, RunID: "hold" + string(rune('a'+i))},
			Profile: profileOf(t, "s"), Duration: time.Duration(c.intervals) * time.Second, Interval: time.Second}
		st, err := capacityStep(c.criteria)(context.Background(), l)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		broke := slices.Contains(st.Broke, limits.WALFsyncP99)
		if broke != c.broken || len(st.Intervals) != c.ran || st.Seconds > float64(c.ran)+0.8 || st.Seconds < float64(c.ran)-0.1 {
			t.Errorf("%s: broke %v, %d intervals, %.1fs; want the WAL fsync p99 broken %v, %d intervals of 1s", c.name, st.Broke, len(st.Intervals), st.Seconds, c.broken, c.ran)
		}
	}
}
