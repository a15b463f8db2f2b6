// Package timers proves the timers etcdperf metrics suggests: a cluster
// whose links are too slow for etcd's default timers does not recover
// from its leader's crash, and with the timers the tuning computes from
// the same links it does.
// It runs apart from package e2e so that its minutes of waiting on slow
// links overlap the other tests (it uses little CPU).
package timers

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/netfault"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/sysinfo"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

func TestMain(m *testing.M) { os.Exit(testutil.Main(m)) }

// link is every member's peer port behind a slow link: 1.3s more per
// round trip, from a few seconds after the members start (a link that
// degrades under a running cluster: at etcd's default timers a cluster
// whose round trips are already over its 1s election timeout never
// elects a leader to start with). A leader elected before keeps its
// followers (their heartbeats keep flowing), but one that crashes is
// never replaced: the next leader steps down at its first quorum check,
// 1s after its election, before any follower's answer is back, and so
// never commits a write (etcd 3.7, pre-vote and check-quorum on).
var link = netfault.Delay{Latency: 1300 * time.Millisecond, After: 4 * time.Second}

// watch is how long metrics reads the links' round trips; recover how
// long the two members left get to take a write after the leader
// crashed: at the suggested timers, two elections (the first may split
// the two votes), each a randomized election timeout of 9-18s and two
// round trips, and the write's round trip.
const (
	watch   = 40 * time.Second
	recover = time.Minute
)

// At etcd's default timers, a cluster whose links turned slower than its
// election timeout takes no write after its leader crashes; the tuning,
// from the round trips metrics read, raises the timers to about the
// round trip and 10x it; the same cluster started with those elects a
// new leader and takes the write, and the tuning then asks for no less.
func TestTimersForSlowLinks(t *testing.T) {
	bin := testutil.Binary(t)
	before, recovered := delayedCluster(t, bin, 0, 0)
	hb, el := flag(t, before, "heartbeat-interval"), flag(t, before, "election-timeout")
	rtt := slowestRTT(before)
	t.Logf("default timers: round trip %.0fms (the link %s); after the leader crashed, a write took %s; suggested %s %g, %s %g",
		rtt*1000, link, recovered, hb.Action, hb.Suggested, el.Action, el.Suggested)
	if recovered > 0 {
		t.Errorf("at the default timers on links of %s the two members left took a write %s after the leader crashed: the links no longer test the timers", link, recovered)
	}
	if hb.Action != result.TuneChange || hb.Suggested < rtt*1000 || el.Action != result.TuneChange || el.Suggested < 10*rtt*1000 {
		t.Fatalf("tuning %+v, %+v: want both timers raised past the round trip of %.0fms (and 10x it)", hb, el, rtt*1000)
	}

	after, recovered := delayedCluster(t, bin, uint(hb.Suggested), uint(el.Suggested))
	t.Logf("suggested timers: %.0f leader changes before the crash, round trip %.0fms; after the leader crashed, a write took %s",
		leaderChanges(after), slowestRTT(after)*1000, recovered)
	if recovered == 0 {
		t.Errorf("with --heartbeat-interval %g --election-timeout %g the two members left took no write in %s after the leader crashed", hb.Suggested, el.Suggested, recover)
	}
	if n := leaderChanges(after); n != 0 {
		t.Errorf("with --heartbeat-interval %g --election-timeout %g the members saw %.0f leader changes before the crash, want none", hb.Suggested, el.Suggested, n)
	}
	// etcd's round trips are smoothed and kept since the member started:
	// the first cluster's mix the link before it slowed (a lower mean),
	// the second's, elected later, less so. The tuning from the second
	// never asks for less than the timers it runs with.
	for _, name := range []string{"heartbeat-interval", "election-timeout"} {
		f := flag(t, after, name)
		t.Logf("with the suggested timers in force, --%s: %s %g", name, f.Action, f.Suggested)
		if f.Action != result.TuneKeep && (f.Action != result.TuneChange || f.Suggested < f.Current) {
			t.Errorf("with the suggested timers in force, --%s: %s %g (in force %g); want it kept or raised", name, f.Action, f.Suggested, f.Current)
		}
	}
}

// delayedCluster starts 3 members whose peer links turn slow (link),
// with the timers given (0: etcd's defaults), and returns what metrics
// saw of them over watch, told the timers in force; then it crashes the
// leader and returns how long the two members left took to take a write
// (0: none within recover).
func delayedCluster(t *testing.T, bin string, beat, elect uint) (*result.Result, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := dataDir(t)
	tg, err := lab.Open(ctx, lab.TargetOptions{DataDir: dir, RunID: fmt.Sprintf("timers-%d", elect), Members: 3,
		Faults: []lab.Fault{{PeerDelay: link}, {PeerDelay: link}, {PeerDelay: link}}, StartTimeout: time.Minute, ServerCommand: []string{bin, "server"},
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
	return res, crashLeader(ctx, t, tg, res)
}

// dataDir is where the members keep their data: a tmpfs when /dev/shm is
// one, so that the disk the other tests load meanwhile cannot stall a
// member (a leader whose fsyncs stall loses its followers as a slow link
// would, and the findings then name its storage); this test is about the
// links. Elsewhere, the test's own temporary directory.
func dataDir(t *testing.T) string {
	if m, err := sysinfo.FindMount("/dev/shm"); err == nil && m.Volatile() {
		if dir, err := os.MkdirTemp("/dev/shm", "etcdperf-timers-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}

// crashLeader kills the process of the member that led at the end of
// the watch (its etcd_server_is_leader) and returns how long the members
// left took to take a write (0: none within recover). When no member led
// then, nothing is killed: the cluster had lost its leader already.
func crashLeader(ctx context.Context, t *testing.T, tg *lab.Target, res *result.Result) time.Duration {
	t.Helper()
	var leader cluster.Member
	for _, m := range res.Metrics.Members {
		if m.Overall != nil && m.Overall.IsLeader == 1 {
			for _, tm := range tg.Members() {
				if tm.Name == m.Name {
					leader = tm
				}
			}
		}
	}
	var left []string
	for _, m := range tg.Members() {
		if m.Name != leader.Name {
			left = append(left, m.ClientURL)
		}
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: left, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if leader.PID == 0 {
		t.Logf("no member led at the end of the watch: nothing to crash")
	} else if err := syscall.Kill(leader.PID, syscall.SIGKILL); err != nil {
		t.Fatalf("kill the leader %s: %v", leader.Name, err)
	}
	crashed := time.Now()
	for time.Since(crashed) < recover {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := c.Put(pctx, "/timers/after-the-crash", "v")
		cancel()
		if err == nil {
			return time.Since(crashed).Round(100 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return 0
}

func leaderChanges(r *result.Result) float64 {
	return overall(r, func(s *result.MetricsSignals) float64 { return s.LeaderChanges })
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
