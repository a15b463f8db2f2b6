package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/promexport"
	"github.com/etcdperf/etcdperf/internal/promscrape"
	"github.com/etcdperf/etcdperf/internal/render"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// TestMetricsUpkeep watches an embedded etcd that is compacted three
// times and defragmented once: metrics reports each in its window, from
// etcd's own histograms, and the stall a live member's next
// defragmentation would cause comes from the one it did.
func TestMetricsUpkeep(t *testing.T) {
	em := testutil.StartEmbeddedEtcd(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ep := em.Client.Endpoints()[0]
	done := make(chan error, 1)
	upkeep := func() error {
		for i := 0; i < 3; i++ {
			var rev int64
			for k := 0; k < 20; k++ {
				resp, err := em.Client.Put(ctx, fmt.Sprintf("/upkeep/%d", k), "v")
				if err != nil {
					return err
				}
				rev = resp.Header.Revision
			}
			if _, err := em.Client.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
				return err
			}
			time.Sleep(600 * time.Millisecond)
		}
		_, err := em.Client.Defragment(ctx, ep)
		return err
	}
	// The watch runs until the upkeep is done and one more interval has
	// been scraped, however long a busy host makes it take.
	wctx, endWatch := context.WithCancel(ctx)
	defer endWatch()
	res, err := Metrics(wctx, MetricsOptions{Conn: cluster.ConnOptions{Endpoints: []string{ep}}, Interval: 300 * time.Millisecond, Criteria: limits.Table,
		Started: func(_ *result.Result) {
			go func() {
				err := upkeep()
				time.Sleep(700 * time.Millisecond)
				endWatch()
				done <- err
			}()
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatal("the upkeep took over 30s")
	}
	m := res.Metrics
	if len(m.Compactions) != 1 || m.Compactions[0].Count != 3 || m.Compactions[0].Source != result.CompactionMetric {
		t.Errorf("compactions %+v, want 3 from %s", m.Compactions, result.CompactionMetric)
	}
	if len(m.Defrags) != 1 || m.Defrags[0].Count != 1 || m.Defrags[0].Seconds <= 0 || m.Defrags[0].Longest < m.Defrags[0].Seconds {
		t.Errorf("defragmentations %+v, want one", m.Defrags)
	}
	var text bytes.Buffer
	if err := render.Text(&text, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "scheduled compactions:") || !strings.Contains(text.String(), "defragmentations:") {
		t.Errorf("text view:\n%s", text.String())
	}

	// The member's next defragmentation, from the one it did.
	snap, err := promscrape.Scrape(ctx, http.DefaultClient, "http://"+strings.TrimPrefix(ep, "http://")+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	e := promscrape.ExpectedDefrag("m1", snap)
	if e == nil || e.Past == nil || e.Past.Count < 1 || e.Seconds <= 0 || e.DBSize <= 0 || e.Missing != "" {
		t.Errorf("expected from the member's own defragmentation: %+v", e)
	}
	// A member that never defragmented (etcd 3.4.13's captured metrics):
	// what it would need.
	if e := promscrape.ExpectedDefrag("etcd-0", capturedMetrics(t, "etcd-3.4.13.metrics")); e == nil || e.Seconds != 0 || !strings.Contains(e.Missing, "etcdperf doctor --data-dir") || e.DBSize != 65536 {
		t.Errorf("expected without a past defragmentation: %+v", e)
	}

}

// TestPromCheckUpkeep: a real Prometheus scrapes an embedded etcd that is
// compacted three times, 1s apart, and defragmented once; prom check
// reads each compaction at the evaluation point after it and the
// defragmentation over the period.
func TestPromCheckUpkeep(t *testing.T) {
	em := testutil.StartEmbeddedEtcd(t)
	ep := em.Client.Endpoints()[0]
	prom := testutil.StartPrometheus(t, testutil.PrometheusOptions{Interval: 500 * time.Millisecond, Jobs: map[string][]string{"etcd": {ep}}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	t0 := time.Now()
	prom.WaitFor(t, 10*time.Second, `count(etcd_debugging_mvcc_db_compaction_total_duration_milliseconds_count)`, func(m map[string]float64) bool { return m[""] >= 1 })
	start := time.Now()
	t.Logf("first scrape after %s", start.Sub(t0))
	for i := 0; i < 3; i++ {
		if i > 0 {
			time.Sleep(time.Second)
		}
		resp, err := em.Client.Put(ctx, "/upkeep/k", fmt.Sprint(i))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := em.Client.Compact(ctx, resp.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := em.Client.Defragment(ctx, ep); err != nil {
		t.Fatal(err)
	}
	// until Prometheus has scraped the defragmentation
	prom.WaitFor(t, 10*time.Second, fmt.Sprintf(`sum(increase(etcd_disk_backend_defrag_duration_seconds_count[%ds]))`, int(time.Since(start).Seconds())+3), func(m map[string]float64) bool { return m[""] >= 0.5 })
	end := time.Now().Add(time.Second)
	res, err := PromCheck(ctx, PromCheckOptions{Conn: promexport.Options{URL: prom.URL, Timeout: 10 * time.Second},
		Range: promexport.Resolved{Start: start.Add(-2 * time.Second).Truncate(time.Second), End: end.Truncate(time.Second), Step: 500 * time.Millisecond}, Criteria: limits.Table})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Prom
	if len(p.Compactions) != 1 || p.Compactions[0].Count != 3 || p.Compactions[0].Period < 0.5 || p.Compactions[0].Period > 1.5 {
		t.Errorf("compactions %+v, want 3, 1s apart", p.Compactions)
	}
	if len(p.Defrags) != 1 || p.Defrags[0].Count != 1 || p.Defrags[0].Seconds <= 0 {
		t.Errorf("defragmentations %+v, want one", p.Defrags)
	}
}

// A load on a live member (doctor --node --load) states the stall of its
// next defragmentation as the watch without load does: from its database
// size in use before the load wrote anything, and from its own past
// defragmentation; nothing more is written for it. Without a member to
// state it for (check, doctor --endpoints) there is none.
func TestCheckStatesMemberDefrag(t *testing.T) {
	em := testutil.StartEmbeddedEtcd(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ep := em.Client.Endpoints()[0]
	for k := 0; k < 200; k++ {
		if _, err := em.Client.Put(ctx, fmt.Sprintf("/member/%d", k), strings.Repeat("v", 1024)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := em.Client.Defragment(ctx, ep); err != nil {
		t.Fatal(err)
	}
	scrape := func() promscrape.Etcd {
		t.Helper()
		snap, err := promscrape.Scrape(ctx, http.DefaultClient, "http://"+strings.TrimPrefix(ep, "http://")+"/metrics")
		if err != nil {
			t.Fatal(err)
		}
		return snap.EtcdSignals()
	}
	// An embedded etcd's metrics are its process's: the defragmentations
	// of other tests' members count too.
	sig := scrape()
	before, defrags := sig.Values["db_size_in_use"], sig.Histograms["defrag"].Count
	o := CheckOptions{Target: lab.TargetOptions{Conn: cluster.ConnOptions{Endpoints: []string{ep}}}, Profile: profileOf(t, "s"),
		Duration: time.Second, Prefix: "/etcdperf/defrag-test/", Criteria: limits.Table, DefragMember: "m1"}
	res, err := runCheck(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	after := scrape().Values["db_size_in_use"]
	e := res.ExpectedDefrag
	if e == nil {
		t.Fatal("no expected defragmentation for the member")
	}
	// Before the load: at least the size before the run (the run checks
	// that its prefix is writable with one key, put and deleted, before
	// the load), nearer to it than to the size the load's keys grew it to.
	if e.Member != "m1" || e.DBSize < before || e.DBSize-before >= (after-before)/2 ||
		!strings.Contains(e.DBSizeFrom, "etcd_mvcc_db_total_size_in_use_in_bytes, before the load") {
		t.Errorf("size %v from %q of %q; want about %v in use before the load (after it: %v)", e.DBSize, e.DBSizeFrom, e.Member, before, after)
	}
	if e.Past == nil || defrags < 1 || e.Past.Count != defrags || e.Seconds <= 0 || e.Seconds != e.Past.Seconds/e.Past.Count ||
		e.Rate != e.DBSize/e.Seconds || e.Missing != "" {
		t.Errorf("the stall from the member's own defragmentation: %+v past %+v", e, e.Past)
	}
	if n, _ := em.Client.Get(ctx, "/etcdperf/", clientv3.WithPrefix(), clientv3.WithCountOnly()); n.Count != 0 {
		t.Errorf("%d keys left under /etcdperf/", n.Count)
	}

	o.DefragMember, o.Prefix = "", "/etcdperf/defrag-test-2/"
	res, err = runCheck(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExpectedDefrag != nil {
		t.Errorf("without a member: expected %+v", res.ExpectedDefrag)
	}
}

// capturedMetrics is a real etcd's /metrics captured in promscrape's
// testdata.
func capturedMetrics(t *testing.T, name string) promscrape.Snapshot {
	t.Helper()
	f, err := os.Open("../promscrape/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := promscrape.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
