package pipeline

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/promscrape"
	"github.com/etcdperf/etcdperf/internal/render"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// putsUntil writes keys under /metrics-test/ with a few clients, each at most
// every 5ms, until stop is closed or max puts are done; wait returns how
// many succeeded.
func putsUntil(t *testing.T, cli *clientv3.Client, stop <-chan struct{}, max int64) (wait func() int64) {
	t.Helper()
	var done atomic.Int64
	var wg sync.WaitGroup
	for c := 0; c < 3; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for i := 0; done.Load() < max; i++ {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				if _, err := cli.Put(ctx, fmt.Sprintf("/metrics-test/%d/%d", c, i%50), "value"); err == nil {
					done.Add(1)
				}
				cancel()
			}
		}()
	}
	return func() int64 { wg.Wait(); return done.Load() }
}

func shmOrTemp(t *testing.T) string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "etcdperf-metrics-test-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}

// TestMetricsUnderLoad watches one embedded member while the test puts
// keys: every interval has a sample, the fsyncs of the intervals add up to
// the run's, the member is the leader with a database, and the Result
// reads back and renders as text and CSV.
func TestMetricsUnderLoad(t *testing.T) {
	ctx := context.Background()
	// tmpfs, where etcd's fsyncs all fall in its lowest bucket.
	tg, err := lab.Open(ctx, lab.TargetOptions{DataDir: shmOrTemp(t), RunID: "metrics-load"})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	ep := tg.Members()[0].ClientURL
	stop := make(chan struct{})
	wait := putsUntil(t, tg.Client().Client, stop, 3000)
	var started, sampled int
	o := MetricsOptions{Conn: cluster.ConnOptions{Endpoints: []string{ep}}, Interval: 250 * time.Millisecond, Duration: 1500 * time.Millisecond,
		Criteria: limits.Table,
		Started:  func(r *result.Result) { started++ },
		Sampled: func(r *result.Result) {
			sampled++
			if started != 1 || r.Metrics.Intervals != sampled || len(r.Metrics.Members[0].Series) != sampled {
				t.Errorf("interval %d: started %d, %d intervals, %d samples", sampled, started, r.Metrics.Intervals, len(r.Metrics.Members[0].Series))
			}
		},
	}
	res, err := Metrics(ctx, o)
	close(stop)
	puts := wait()
	if err != nil {
		t.Fatal(err)
	}
	sameTextReadBack(t, res)
	m := res.Metrics
	if res.Kind != result.KindMetrics || m.Intervals != 6 || sampled != 6 || len(m.Members) != 1 || m.Seconds != 1.5 || m.Interval != 0.25 {
		t.Fatalf("metrics section %+v after %d callbacks", m, sampled)
	}
	if m.Start.Before(res.Started) || m.Start.After(res.Finished) {
		t.Errorf("first scrape at %v, run from %v to %v", m.Start, res.Started, res.Finished)
	}
	mm := m.Members[0]
	if !mm.Leader || mm.Version == "" || mm.Unreachable != 0 || len(mm.Series) != 6 || mm.ID == "" {
		t.Errorf("member %+v", mm)
	}
	var fsyncs int64
	busy := 0
	for i, s := range mm.Series {
		if !s.Up() || s.T != 0.25*float64(i+1) || s.Seconds <= 0 || s.WALFsync == nil || s.BackendCommit == nil {
			t.Fatalf("sample %d: %+v %+v", i, s, s.MetricsSignals)
		}
		// etcd sets its size and size-in-use gauges at different moments:
		// while the file grows, in-use can read above size for a scrape.
		if s.HasLeader != 1 || s.IsLeader != 1 || s.DBSize <= 0 || s.DBSizeInUse <= 0 || s.RSS <= 0 || s.Quota <= 0 {
			t.Errorf("sample %d gauges: %+v", i, s.MetricsSignals)
		}
		if len(s.Missing) != 0 || s.PeerRTT != nil {
			t.Errorf("sample %d: missing %v, peer RTT %+v on a member without peers", i, s.Missing, s.PeerRTT)
		}
		fsyncs += s.WALFsync.Count
		if s.WALFsync.Count > 0 {
			busy++
			if s.WALFsync.P99 <= 0 || !s.WALFsync.Bucketed || s.WALFsync.Resolution != 0.001 {
				t.Errorf("sample %d fsync latency %+v", i, s.WALFsync)
			}
		}
	}
	ov := mm.Overall
	if ov == nil || ov.WALFsync == nil || ov.WALFsync.Count != fsyncs || fsyncs == 0 || busy < 4 {
		t.Fatalf("fsyncs: %d over the intervals (%d busy), overall %+v", fsyncs, busy, ov)
	}
	if ov.ProposalsCommitted <= 0 || ov.ProposalsCommitted > float64(puts)+10 || ov.Seconds < 1.4 || ov.Seconds > 3 {
		t.Errorf("overall: %v proposals for %d puts, %vs", ov.ProposalsCommitted, puts, ov.Seconds)
	}
	names := map[string]result.Check{}
	for _, c := range res.Checks {
		names[c.Name] = c
	}
	for _, id := range []string{limits.WALFsyncP99, limits.BackendCommitP99, limits.LeaderChanges, limits.ProposalsFailed} {
		if _, ok := names[id]; !ok {
			t.Errorf("no %s check in %v", id, res.Checks)
		}
	}
	if c := names[limits.WALFsyncP99]; c.Bound != ov.WALFsync.AtFloor() || c.Observed != ov.WALFsync.P99 {
		t.Errorf("fsync check %+v for %+v", c, ov.WALFsync)
	}
	if res.Verdict == "" || res.Error != "" || !strings.Contains(res.Summary, "1 member(s) over 1.5s, 6 interval(s) of 250ms") {
		t.Errorf("verdict %q error %q summary %q", res.Verdict, res.Error, res.Summary)
	}
	if res.Target == nil || len(res.Target.Members) != 1 || !res.Target.Members[0].Leader || res.Params.(*result.MetricsParams).Interval != 0.25 {
		t.Errorf("target %+v params %v", res.Target, res.Params)
	}

	// The Result reads back with its per-interval signals.
	var buf bytes.Buffer
	if err := result.Encode(&buf, res); err != nil {
		t.Fatal(err)
	}
	back, err := result.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	bs := back.Metrics.Members[0].Series
	if len(bs) != 6 || !bs[5].Up() || bs[5].WALFsync.Count != mm.Series[5].WALFsync.Count || bs[5].DBSize != mm.Series[5].DBSize {
		t.Errorf("read back: %+v", bs)
	}

	// Text: one line per interval, "<= 1ms" for a p99 in the lowest bucket.
	var txt, tab bytes.Buffer
	if err := render.Text(&txt, res); err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, l := range strings.Split(txt.String(), "\n") {
		if strings.Contains(l, "s  etcdperf-1") {
			lines++
		}
	}
	if lines != 6 {
		t.Errorf("%d interval lines in\n%s", lines, txt.String())
	}
	if ov.WALFsync.AtFloor() != strings.Contains(txt.String(), "<= 1ms") {
		t.Errorf("fsync at floor %v, text:\n%s", ov.WALFsync.AtFloor(), txt.String())
	}
	if err := render.CSV(&tab, res); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&tab).ReadAll()
	if err != nil || len(rows) != 7 || rows[0][2] != "member" || rows[1][2] != "etcdperf-1" || rows[6][0] != "1.5" || rows[6][3] != "true" ||
		rows[6][1] != m.Start.Add(1500*time.Millisecond).Format(time.RFC3339Nano) {
		t.Errorf("CSV %v %v", rows, err)
	}

	// Interrupted: the Result holds the intervals until then. With a
	// duration that is an error...
	interrupted := func(d time.Duration) (*result.Result, error) {
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		o := MetricsOptions{Conn: cluster.ConnOptions{Endpoints: []string{ep}}, Interval: 200 * time.Millisecond, Duration: d, Criteria: limits.Table}
		o.Sampled = func(r *result.Result) {
			if r.Metrics.Intervals == 2 {
				cancel()
			}
		}
		return Metrics(cctx, o)
	}
	res, err = interrupted(time.Minute)
	if !errors.Is(err, context.Canceled) || res == nil || res.Metrics.Intervals != 2 || !strings.HasPrefix(res.Error, "interrupted after 400ms of the 1m0s") || res.Verdict == "" {
		t.Errorf("interrupted run: %v %+v", err, res)
	}
	// ...without one, it is how the run ends.
	res, err = interrupted(0)
	if err != nil || res.Metrics.Intervals != 2 || res.Error != "" || res.Metrics.Duration != 0 {
		t.Errorf("run until interrupted: %v %+v", err, res)
	}

	// With etcd's auth on and no user, the member list cannot be read but
	// /metrics can: the endpoint given is watched, its role read from its
	// metrics.
	testutil.EnableAuth(t, tg.Client().Client, "watcher", "pw", "/none/")
	res, err = Metrics(ctx, MetricsOptions{Conn: cluster.ConnOptions{Endpoints: []string{ep}}, Interval: 200 * time.Millisecond, Duration: 200 * time.Millisecond, Criteria: limits.Table})
	if err != nil || res.Metrics.Intervals != 1 || !res.Metrics.Members[0].Series[0].Up() || !res.Metrics.Members[0].Leader ||
		res.Metrics.Members[0].Name != ep || res.Metrics.Members[0].Version == "" {
		t.Fatalf("auth-enabled cluster without a user: %v %+v", err, res.Metrics)
	}
	if notes := strings.Join(res.Metrics.Notes, "\n"); !strings.Contains(notes, "authentication enabled and no --user was given): watching the endpoints given") {
		t.Errorf("notes %s", notes)
	}
}

// TestMetricsThreeMembersOneKilled watches a 3-member cluster, each member
// a process of its own, under load, and kills a follower midway: it is
// reported as not answering in the intervals that follow while the others
// go on, and the verdict fails.
func TestMetricsThreeMembersOneKilled(t *testing.T) {
	ctx := context.Background()
	tg, err := lab.Open(ctx, lab.TargetOptions{DataDir: t.TempDir(), RunID: "metrics-three", Members: 3, ServerCommand: serverCommand(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	var victim cluster.Member
	var endpoints []string
	for _, m := range tg.Members() {
		endpoints = append(endpoints, m.ClientURL)
		if !m.Leader && victim.Name == "" {
			victim = m
		}
	}
	stop := make(chan struct{})
	wait := putsUntil(t, tg.Client().Client, stop, 2000)
	const killedAfter = 4
	o := MetricsOptions{Conn: cluster.ConnOptions{Endpoints: endpoints, DialTimeout: time.Second}, Interval: 300 * time.Millisecond, Duration: 3 * time.Second,
		Criteria: limits.Table}
	o.Sampled = func(r *result.Result) {
		if r.Metrics.Intervals != killedAfter {
			return
		}
		if err := syscall.Kill(victim.PID, syscall.SIGKILL); err != nil {
			t.Errorf("kill %s: %v", victim.Name, err)
		}
		for deadline := time.Now().Add(5 * time.Second); !tg.MemberExited(victim.Name) && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
	}
	res, err := Metrics(ctx, o)
	close(stop)
	wait()
	if err != nil {
		t.Fatal(err)
	}
	m := res.Metrics
	if m.Intervals != 10 || len(m.Members) != 3 {
		t.Fatalf("%d intervals, members %+v", m.Intervals, m.Members)
	}
	leaders := 0
	for _, mm := range m.Members {
		if len(mm.Series) != 10 {
			t.Fatalf("%s: %d samples", mm.Name, len(mm.Series))
		}
		if mm.Leader {
			leaders++
		}
		var fsyncs int64
		for i, s := range mm.Series {
			killed := mm.Name == victim.Name && i >= killedAfter
			if killed {
				if s.Up() || s.Error == "" {
					t.Errorf("%s at %vs, after it was killed: %+v", mm.Name, s.T, s)
				}
				continue
			}
			if !s.Up() {
				t.Errorf("%s did not answer at %vs: %s", mm.Name, s.T, s.Error)
				continue
			}
			if s.HasLeader != 1 || s.DBSize <= 0 || s.IsLeader != boolFloat(mm.Leader) || s.WALFsync == nil {
				t.Errorf("%s at %vs: %+v", mm.Name, s.T, s.MetricsSignals)
			}
			if s.WALFsync != nil {
				fsyncs += s.WALFsync.Count
			}
		}
		wantDown := 0
		if mm.Name == victim.Name {
			wantDown = 10 - killedAfter
		}
		if mm.Unreachable != wantDown || mm.Overall == nil || fsyncs == 0 || mm.Overall.WALFsync.Count != fsyncs {
			t.Errorf("%s: %d unreachable (want %d), %d fsyncs, overall %+v", mm.Name, mm.Unreachable, wantDown, fsyncs, mm.Overall)
		}
	}
	if leaders != 1 {
		t.Errorf("%d leaders flagged", leaders)
	}
	var down *result.Finding
	for i, f := range res.Findings {
		if f.ID == "metrics_unreachable" {
			down = &res.Findings[i]
		}
	}
	if down == nil || down.Severity != result.Critical || !strings.Contains(down.Title, victim.Name) || len(down.Evidence) != 1 ||
		!strings.Contains(down.Evidence[0].What, "did not answer 6 of 10 scrapes") {
		t.Errorf("finding on the killed member: %+v", down)
	}
	if res.Verdict != result.Fail || !strings.Contains(res.Summary, victim.Name+" missed 6") {
		t.Errorf("verdict %s, summary %q", res.Verdict, res.Summary)
	}
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// TestMetricsTLS watches a member that serves clients, and /metrics, only
// over TLS with client certificates.
func TestMetricsTLS(t *testing.T) {
	certs := testutil.NewCerts(t)
	ctx := context.Background()
	m, err := lab.StartMember(ctx, lab.MemberConfig{Name: "tls", DataDir: filepath.Join(t.TempDir(), "m"),
		ClientURL: fmt.Sprintf("https://127.0.0.1:%d", testutil.FreePort(t)), PeerURL: fmt.Sprintf("http://127.0.0.1:%d", testutil.FreePort(t)),
		TLS: &lab.ServerTLS{CertFile: certs.ServerCert, KeyFile: certs.ServerKey, TrustedCAFile: certs.CA, ClientCertAuth: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ep := m.Config().ClientURL
	conn := cluster.ConnOptions{Endpoints: []string{ep}, CACert: certs.CA, Cert: certs.ClientCert, Key: certs.ClientKey}
	res, err := Metrics(ctx, MetricsOptions{Conn: conn, Interval: 200 * time.Millisecond, Duration: 400 * time.Millisecond, Criteria: limits.Table})
	if err != nil {
		t.Fatal(err)
	}
	mm := res.Metrics.Members[0]
	if len(mm.Series) != 2 || !mm.Series[1].Up() || mm.Series[1].DBSize <= 0 || !strings.HasPrefix(mm.MetricsURL, "https://") || !res.Params.(*result.MetricsParams).TLS {
		t.Errorf("over TLS: %+v %v", mm, res.Params)
	}
	// Without the client certificate etcd refuses the connection: the
	// run cannot start.
	conn.Cert, conn.Key = "", ""
	_, err = Metrics(ctx, MetricsOptions{Conn: conn, Interval: 200 * time.Millisecond, Duration: 400 * time.Millisecond, Criteria: limits.Table})
	var ce *cluster.ConnError
	if !errors.As(err, &ce) || ce.Reason != cluster.BadClientCert {
		t.Errorf("without a client certificate: %v", err)
	}
}

// signalsFrom parses a scrape of the given text.
func signalsFrom(t *testing.T, text string) promscrape.Etcd {
	t.Helper()
	s, err := promscrape.Parse(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return s.EtcdSignals()
}

func TestSignalsBetween(t *testing.T) {
	// Every fsync of the interval under 1ms: p99 is "at most 1ms".
	prev := scrapeFromText(t, 10, 10).Snap.EtcdSignals()
	cur := scrapeFromText(t, 410, 410).Snap.EtcdSignals()
	s, _ := promscrape.SignalsBetween(&prev, cur, 2)
	if s.Seconds != 2 || s.WALFsync == nil || s.WALFsync.Count != 400 || !s.WALFsync.AtFloor() || s.LeaderChanges != 0 {
		t.Fatalf("signals %+v fsync %+v", s, s.WALFsync)
	}
	sample := result.MetricsSample{T: 2, MetricsSignals: s}
	res := &result.Result{Kind: result.KindMetrics, Metrics: &result.Metrics{Interval: 2, Intervals: 1, Members: []result.MetricsMember{{Name: "m", Series: []result.MetricsSample{sample}}}}}
	var txt, tab bytes.Buffer
	if err := render.Text(&txt, res); err != nil {
		t.Fatal(err)
	}
	if err := render.CSV(&tab, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(txt.String(), "<= 1ms") || !strings.Contains(tab.String(), ",400,<=0.001,") {
		t.Errorf("a p99 in the lowest bucket reads:\n%s\n%s", txt.String(), tab.String())
	}
	// The member's first answer: gauges only.
	first, _ := promscrape.SignalsBetween(nil, cur, 0)
	if first.WALFsync != nil || first.Seconds != 0 {
		t.Errorf("first answer %+v", first)
	}
	// A restart resets the counters: the later value is the delta.
	before := signalsFrom(t, "etcd_server_leader_changes_seen_total 7\netcd_server_slow_apply_total 5\netcd_server_has_leader 1\n")
	after := signalsFrom(t, "etcd_server_leader_changes_seen_total 1\netcd_server_slow_apply_total 7\netcd_server_has_leader 0\n")
	s, _ = promscrape.SignalsBetween(&before, after, 1)
	if s.LeaderChanges != 1 || s.SlowApplies != 2 || s.HasLeader != 0 {
		t.Errorf("across a restart: %+v", s)
	}
	// What the member does not expose is listed.
	for _, id := range []string{"wal_fsync", "backend_commit", "db_size", "rss", "slow_read_indexes"} {
		if !strings.Contains(strings.Join(s.Missing, ","), id) {
			t.Errorf("%s not in missing %v", id, s.Missing)
		}
	}
}

// TestJudgeMetricsNoLeader: a member that lost its leader for two
// intervals is a breach window and a critical finding, even though every
// check passes.
func TestJudgeMetricsNoLeader(t *testing.T) {
	sample := func(tm, hasLeader float64) result.MetricsSample {
		l := result.Latency{Count: 10, P99: 0.002, Bucketed: true, Resolution: 0.001}
		return result.MetricsSample{T: tm, MetricsSignals: &result.MetricsSignals{Seconds: 1, HasLeader: hasLeader, WALFsync: &l, BackendCommit: &l}}
	}
	res := result.New(result.KindMetrics)
	res.Metrics = &result.Metrics{Interval: 1, Intervals: 4, Seconds: 4, Members: []result.MetricsMember{{
		Name:   "m1",
		Series: []result.MetricsSample{sample(1, 1), sample(2, 0), sample(3, 0), sample(4, 1)},
	}}}
	m := &res.Metrics.Members[0]
	m.Overall = m.Series[3].MetricsSignals
	judge.Judge(res, limits.Table)
	if len(res.Metrics.Breaches) != 1 {
		t.Fatalf("breaches %+v", res.Metrics.Breaches)
	}
	b := res.Metrics.Breaches[0]
	if b.Check != "has_leader" || b.Instance != "m1" || b.Points != 2 || b.Total != 4 || len(b.Windows) != 1 ||
		b.Windows[0].To.Sub(b.Windows[0].From).Round(time.Millisecond) != time.Second {
		t.Errorf("breach %+v", b)
	}
	if limits.Verdict(res.Checks) != result.Pass || res.Verdict != result.Fail || len(res.Findings) == 0 ||
		res.Findings[0].ID != "metrics_has_leader" || res.Findings[0].Severity != result.Critical {
		t.Errorf("checks %+v, verdict %s, findings %+v", res.Checks, res.Verdict, res.Findings)
	}
}
