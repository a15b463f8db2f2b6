package memberwatch

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// A series marks the window every interval: one sample per interval for a
// member that answers, an error sample for one that does not, the
// callbacks once per start and per interval, and the member's process and
// version from the window. Without a duration, the end of ctx ends it
// without an error.
func TestSeriesMarksEveryInterval(t *testing.T) {
	tg := startEtcd(t)
	members := append(tg.Members(), cluster.Member{Name: "gone", MetricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", testutil.FreePort(t))})
	newResult := func(members []cluster.Member) *result.Result {
		res := result.New(result.KindMetrics)
		res.Env = &result.Env{}
		res.Target = &result.Target{}
		res.Metrics = &result.Metrics{}
		for _, m := range members {
			res.Metrics.Members = append(res.Metrics.Members, result.MetricsMember{Name: m.Name})
			res.Target.Members = append(res.Target.Members, result.TargetMember{Name: m.Name})
		}
		return res
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res := newResult(members)
	var started, sampled int
	var atStart Learned
	learned, err := Series(ctx, http.DefaultClient, members, res.Metrics, SeriesOptions{Interval: 100 * time.Millisecond, Duration: 300 * time.Millisecond, Timeout: time.Second,
		Started: func(l Learned) { started++; atStart = l }, Sampled: func() { sampled++ }})
	if err != nil {
		t.Fatal(err)
	}
	sec := res.Metrics
	if started != 1 || sampled != 3 || sec.Intervals != 3 || sec.Seconds != 0.3 {
		t.Errorf("started %d, sampled %d, intervals %d over %gs; want 1, 3, 3 over 0.3s", started, sampled, sec.Intervals, sec.Seconds)
	}
	up, gone := sec.Members[0], sec.Members[1]
	if len(up.Series) != 3 || up.Unreachable != 0 || up.Series[2].T != 0.3 || up.Series[0].MetricsSignals == nil || up.Overall == nil {
		t.Errorf("the answering member: %+v", up)
	}
	if up.Process == nil || up.Version == "" || learned.Version != up.Version || learned.Members[0].Version != up.Version || atStart.Version != up.Version {
		t.Errorf("process %+v, version %q, learned %+v, at start %+v", up.Process, up.Version, learned, atStart)
	}
	if !learned.Members[0].LeaderKnown || !learned.Members[0].Leader || learned.Members[1] != (LearnedMember{}) {
		t.Errorf("leadership learned: %+v", learned.Members)
	}
	if res.Target.Version != "" || res.Env.EtcdVersion != "" {
		t.Errorf("Series wrote the target (%q) or env (%q)", res.Target.Version, res.Env.EtcdVersion)
	}
	if gone.Unreachable != 3 || len(gone.Series) != 3 || gone.Series[0].Error == "" || len(sec.Notes) != 1 {
		t.Errorf("the silent member: %+v, notes %q", gone, sec.Notes)
	}

	// No duration: the series runs until ctx ends, and that is no error.
	res = newResult(members[:1])
	cctx, cancelRun := context.WithCancel(context.Background())
	defer time.AfterFunc(250*time.Millisecond, cancelRun).Stop()
	if _, err := Series(cctx, http.DefaultClient, members[:1], res.Metrics, SeriesOptions{Interval: 100 * time.Millisecond, Timeout: time.Second}); err != nil {
		t.Errorf("a series without a duration, ended by its context: %v", err)
	}
	if n := res.Metrics.Intervals; n > 2 {
		t.Errorf("%d intervals in 250ms of 100ms ones", n)
	}
}
