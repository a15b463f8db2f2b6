// Package timers proves the timers etcdperf metrics suggests: a cluster
// whose links are too slow for etcd's default timers loses its leader,
// and with the timers the tuning computes from the same links keeps it.
// It runs apart from package e2e so that its minutes of waiting on slow
// links overlap the other tests (it uses little CPU).
package timers

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/netfault"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

func TestMain(m *testing.M) { os.Exit(testutil.Main(m)) }

// linkDelay is added to every round trip between the members (each
// member's peer port behind a slow link): about 900ms. At etcd's default
// timers (100ms, 1s) the leader then steps down every 15-25s for want of
// its followers' answers within an election timeout (etcd 3.7, pre-vote
// and check-quorum on); at 1s no leader is ever elected.
const linkDelay = 900 * time.Millisecond

// watch is how long metrics watches each cluster: two of the leader's
// step-downs at the default timers.
const watch = 50 * time.Second

// The default timers on links of ~900ms cost the cluster its leader; the
// tuning, from the round trips metrics read, raises them to about the
// round trip and 10x it; the same cluster started with those keeps its
// leader, and the tuning then keeps them.
func TestTimersForSlowLinks(t *testing.T) {
	bin := testutil.Binary(t)
	before := delayedCluster(t, bin, 0, 0)
	changes := leaderChanges(before)
	hb, el := flag(t, before, "heartbeat-interval"), flag(t, before, "election-timeout")
	rtt := slowestRTT(before)
	t.Logf("default timers: %.0f leader changes seen by the members, %.0f heartbeat send failures, round trip %.0fms; suggested %s %g, %s %g",
		changes, heartbeatFailures(before), rtt*1000, hb.Action, hb.Suggested, el.Action, el.Suggested)
	if changes == 0 {
		t.Errorf("at the default timers on links of %s the leader never changed in %s: the links no longer test the timers", linkDelay, watch)
	}
	if hb.Action != result.TuneChange || hb.Suggested < rtt*1000 || el.Action != result.TuneChange || el.Suggested < 10*rtt*1000 {
		t.Fatalf("tuning %+v, %+v: want both timers raised past the round trip of %.0fms (and 10x it)", hb, el, rtt*1000)
	}

	after := delayedCluster(t, bin, uint(hb.Suggested), uint(el.Suggested))
	t.Logf("suggested timers: %.0f leader changes, %.0f heartbeat send failures, round trip %.0fms",
		leaderChanges(after), heartbeatFailures(after), slowestRTT(after)*1000)
	if n := leaderChanges(after); n != 0 {
		t.Errorf("with --heartbeat-interval %g --election-timeout %g the members saw %.0f leader changes, want none", hb.Suggested, el.Suggested, n)
	}
	for _, name := range []string{"heartbeat-interval", "election-timeout"} {
		if f := flag(t, after, name); f.Action != result.TuneKeep {
			t.Errorf("with the suggested timers in force, --%s: %s %g; want it kept", name, f.Action, f.Suggested)
		}
	}
}

// delayedCluster starts 3 members whose peer links are linkDelay slow,
// with the timers given (0: etcd's defaults), and returns what metrics
// saw of them over watch, told the timers in force.
func delayedCluster(t *testing.T, bin string, beat, elect uint) *result.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	slow := cluster.Fault{PeerDelay: netfault.Delay{Latency: linkDelay}}
	dir := t.TempDir()
	tg, err := cluster.Open(ctx, cluster.TargetOptions{DataDir: dir, RunID: fmt.Sprintf("timers-%d", elect), Members: 3,
		Faults: []cluster.Fault{slow, slow, slow}, StartTimeout: time.Minute, ServerCommand: []string{bin, "server"},
		HeartbeatMs: beat, ElectionMs: elect})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := tg.Close(); err != nil {
			t.Error(err)
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Errorf("left in %s: %v", dir, left)
		}
	}()
	var eps []string
	for _, m := range tg.Members() {
		eps = append(eps, m.ClientURL)
	}
	inForce := func(v, def uint) string { return fmt.Sprint(max(v, def)) }
	r := testutil.RunBinary(t, watch+time.Minute, "metrics", "--endpoints", strings.Join(eps, ","), "--duration", watch.String(),
		"--current-flag", "heartbeat-interval="+inForce(beat, 100), "--current-flag", "election-timeout="+inForce(elect, 1000), "-o", "json")
	if r.Code == 2 {
		t.Fatalf("metrics: exit 2: %s", r.Stderr)
	}
	res, err := result.Decode(strings.NewReader(r.Stdout))
	if err != nil || res.Metrics == nil {
		t.Fatalf("metrics: %v\n%s", err, r.Stdout)
	}
	return res
}

func leaderChanges(r *result.Result) float64 {
	return overall(r, func(s *result.MetricsSignals) float64 { return s.LeaderChanges })
}

func heartbeatFailures(r *result.Result) float64 {
	return overall(r, func(s *result.MetricsSignals) float64 { return s.HeartbeatFailures })
}

// overall sums a signal over the members' whole runs.
func overall(r *result.Result, get func(*result.MetricsSignals) float64) float64 {
	n := 0.0
	for _, m := range r.Metrics.Members {
		if m.Overall != nil {
			n += get(m.Overall)
		}
	}
	return n
}

func slowestRTT(r *result.Result) float64 {
	rtt := 0.0
	for _, p := range r.Metrics.PeerRTTs {
		rtt = max(rtt, p.Mean)
	}
	return rtt
}

func flag(t *testing.T, r *result.Result, name string) result.TunedFlag {
	t.Helper()
	if r.Tuning != nil {
		for _, f := range r.Tuning.Flags {
			if f.Name == name {
				return f
			}
		}
	}
	t.Fatalf("metrics suggested nothing for --%s: %+v", name, r.Tuning)
	return result.TunedFlag{}
}
