package memberwatch

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/promscrape"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// countingTransport counts the requests made through it.
type countingTransport struct{ n atomic.Int64 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

func startEtcd(t *testing.T) *lab.Target {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tg, err := lab.Open(ctx, lab.TargetOptions{DataDir: t.TempDir(), RunID: "memberwatch-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}

func put(t *testing.T, tg *lab.Target, n int, prefix string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range n {
		if _, err := tg.Client().Put(ctx, fmt.Sprintf("%s%d", prefix, i), "v"); err != nil {
			t.Fatal(err)
		}
	}
}

// A window scrapes each member once at each boundary (Start, each Mark,
// Stop; End none), and its figures add up: the marks' WAL fsyncs are the
// window's, the member in this process is said so, and the member's row
// holds its database.
func TestWindowOneScrapePerBoundary(t *testing.T) {
	tg := startEtcd(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ct := &countingTransport{}
	client := &http.Client{Transport: ct}
	members := tg.Members()
	if len(members) != 1 {
		t.Fatalf("members %+v, want one", members)
	}

	w := Start(ctx, client, members, Options{Host: true})
	if got := ct.n.Load(); got != 1 {
		t.Fatalf("Start scraped %d times, want once", got)
	}
	if w.First()[0].Err != nil {
		t.Fatalf("first scrape: %v", w.First()[0].Err)
	}
	put(t, tg, 20, "/mw/a/")
	m1 := w.Mark(ctx)
	put(t, tg, 5, "/mw/b/")
	m2 := w.Mark(ctx)
	if got := ct.n.Load(); got != 3 {
		t.Fatalf("after two marks: %d scrapes, want 3", got)
	}
	if m2.Before[0].At != m1.After[0].At || m1.Before[0].At != w.First()[0].At {
		t.Errorf("the marks do not follow each other: %v %v %v", m1.Before[0].At, m1.After[0].At, m2.Before[0].At)
	}
	h1, h2 := m1.Hist(promscrape.MetricWALFsync), m2.Hist(promscrape.MetricWALFsync)
	if h1.Count < 1 || h2.Count < 1 {
		t.Fatalf("WAL fsyncs over the marks: %v and %v, want some in each", h1.Count, h2.Count)
	}

	obs := w.Stop(ctx)
	if got := ct.n.Load(); got != 4 {
		t.Fatalf("after Stop: %d scrapes, want 4", got)
	}
	if again := w.Stop(ctx); again != obs || ct.n.Load() != 4 {
		t.Errorf("a second Stop scraped again or saw something else")
	}
	if obs.Server == nil || obs.Server.WALFsync == nil {
		t.Fatalf("server section %+v, notes %v", obs.Server, obs.Notes)
	}
	// Nothing was written between the last mark and Stop.
	if got, want := obs.Server.WALFsync.Count, int64(h1.Count+h2.Count); got != want {
		t.Errorf("the window's WAL fsyncs %d, want the marks' %d", got, want)
	}
	if obs.ClientOnly {
		t.Error("the embedded member runs in this process: not client only")
	}
	if len(obs.Members) != 1 || obs.Members[0].Name != members[0].Name || obs.Members[0].DBSize <= 0 || obs.Members[0].RSSAfter <= 0 {
		t.Errorf("member rows %+v", obs.Members)
	}
	if !obs.HasServerCPU || obs.Elapsed <= 0 || obs.CPUs < 1 {
		t.Errorf("cpu %v/%v, elapsed %s, cpus %d", obs.ServerCPU, obs.HasServerCPU, obs.Elapsed, obs.CPUs)
	}
	if len(obs.Server.Processes) != 1 || obs.Server.Processes[0].PID != os.Getpid() {
		t.Errorf("processes %+v, want this one", obs.Server.Processes)
	}
	if obs.Host == nil || obs.Host.Hostname == "" {
		t.Errorf("host %+v, want the host sampled", obs.Host)
	}
}

// End closes the window at its last mark without scraping; a member that
// does not answer is said in the notes and has no row.
func TestWindowEndAtLastMark(t *testing.T) {
	tg := startEtcd(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ct := &countingTransport{}
	members := append(tg.Members(), cluster.Member{Name: "gone", MetricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", testutil.FreePort(t))})
	w := Start(ctx, &http.Client{Transport: ct}, members, Options{})
	put(t, tg, 10, "/mw/c/")
	mk := w.Mark(ctx)
	obs := w.End()
	if got := ct.n.Load(); got != 4 {
		t.Errorf("%d scrapes, want 2 members × 2 boundaries", got)
	}
	if mk.After[1].Err == nil {
		t.Fatal("the silent member answered")
	}
	if obs.Host != nil {
		t.Errorf("host sampled without Options.Host: %+v", obs.Host)
	}
	if obs.Server == nil || obs.Server.WALFsync == nil || obs.Server.WALFsync.Count != int64(mk.Hist(promscrape.MetricWALFsync).Count) {
		t.Fatalf("server %+v, want the mark's WAL fsyncs", obs.Server)
	}
	if len(obs.Members) != 1 || len(obs.Notes) == 0 || !strings.Contains(strings.Join(obs.Notes, "\n"), "no server metrics from member gone") {
		t.Errorf("members %+v, notes %q", obs.Members, obs.Notes)
	}
}
