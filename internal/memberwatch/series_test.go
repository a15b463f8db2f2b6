package memberwatch

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// A series marks the window every interval: one sample per interval for a
// member that answers, an error sample for one that does not, the
// callbacks once per start and per interval with what was measured so
// far, and the member's process and version from the window. Without a
// duration, the end of ctx ends it without an error.
func TestSeriesMarksEveryInterval(t *testing.T) {
	tg := startEtcd(t)
	members := append(tg.Members(), cluster.Member{Name: "gone", MetricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", testutil.FreePort(t))})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var started, sampled int
	var atStart Learned
	var samplesSeen []int
	w, err := Series(ctx, http.DefaultClient, members, SeriesOptions{Interval: 100 * time.Millisecond, Duration: 300 * time.Millisecond, Timeout: time.Second,
		Names: []string{"one", "two"},
		Started: func(w *Watched) {
			started++
			atStart = w.Learned
			samplesSeen = append(samplesSeen, len(w.Members[0].Series))
		},
		Sampled: func(w *Watched) {
			sampled++
			samplesSeen = append(samplesSeen, len(w.Members[0].Series))
		}})
	if err != nil {
		t.Fatal(err)
	}
	if started != 1 || sampled != 3 || w.Intervals != 3 || w.Seconds != 0.3 || w.Start.IsZero() {
		t.Errorf("started %d, sampled %d, intervals %d over %gs from %v; want 1, 3, 3 over 0.3s", started, sampled, w.Intervals, w.Seconds, w.Start)
	}
	if fmt.Sprint(samplesSeen) != "[0 1 2 3]" {
		t.Errorf("the callbacks saw %v samples of the answering member; want [0 1 2 3]", samplesSeen)
	}
	up, gone := w.Members[0], w.Members[1]
	if len(up.Series) != 3 || up.Unreachable != 0 || up.Series[2].T != 0.3 || up.Series[0].MetricsSignals == nil || up.Overall == nil {
		t.Errorf("the answering member: %+v", up)
	}
	if up.Process == nil || w.Version == "" || w.Members == nil || w.Learned.Members[0].Version != w.Version || atStart.Version != w.Version {
		t.Errorf("process %+v, learned %+v, at start %+v", up.Process, w.Learned, atStart)
	}
	if !w.Learned.Members[0].LeaderKnown || !w.Learned.Members[0].Leader || w.Learned.Members[1] != (LearnedMember{}) {
		t.Errorf("leadership learned: %+v", w.Learned.Members)
	}
	if gone.Unreachable != 3 || len(gone.Series) != 3 || gone.Series[0].Error == "" || len(w.Notes) != 1 || w.Notes[0][:4] != "two " {
		t.Errorf("the silent member: %+v, notes %q", gone, w.Notes)
	}

	// No duration: the series runs until ctx ends, and that is no error.
	cctx, cancelRun := context.WithCancel(context.Background())
	defer time.AfterFunc(250*time.Millisecond, cancelRun).Stop()
	w, err = Series(cctx, http.DefaultClient, members[:1], SeriesOptions{Interval: 100 * time.Millisecond, Timeout: time.Second})
	if err != nil {
		t.Errorf("a series without a duration, ended by its context: %v", err)
	}
	if n := w.Intervals; n > 2 {
		t.Errorf("%d intervals in 250ms of 100ms ones", n)
	}
}
