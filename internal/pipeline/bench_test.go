package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/load"
	"github.com/etcdperf/etcdperf/internal/loadrun"
	"github.com/etcdperf/etcdperf/internal/promscrape"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

func putLoad(total int64) load.Options {
	return load.Options{Workload: load.Put, Clients: 4, Total: total, KeySize: 8, ValSize: 64, KeySpaceSize: 10,
		SequentialKeys: true, CommandTimeout: 5 * time.Second}
}

func TestBenchEmbedded(t *testing.T) {
	dir := t.TempDir()
	o := benchOf(loadrun.Options{Target: lab.TargetOptions{DataDir: dir}, Load: putLoad(300), Conns: 2, TargetLeader: true})
	res, err := Bench(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	sameTextReadBack(t, res)
	b := res.Bench
	if res.Kind != "bench" || b.Ops != 300 || len(b.Errors) != 0 || b.Throughput <= 0 || b.Latency == nil || b.Latency.HDR == "" {
		t.Fatalf("bench section %+v", b)
	}
	var inHist int64
	for _, h := range b.Histogram {
		inHist += h.Count
	}
	if inHist != 300 || len(b.Histogram) != 11 || len(b.Percentiles) != 8 {
		t.Errorf("histogram holds %d of 300 requests in %d buckets; %d percentiles", inHist, len(b.Histogram), len(b.Percentiles))
	}
	if res.Server == nil || res.Server.WALFsync == nil || res.Server.WALFsync.Count == 0 || !res.Server.WALFsync.Bucketed {
		t.Errorf("server section %+v", res.Server)
	}
	if res.Target == nil || res.Target.Kind != lab.Embedded || len(res.Target.Members) != 1 || !strings.HasPrefix(res.Target.DataDir, dir) {
		t.Errorf("target %+v", res.Target)
	}
	// The storage the user chose, not the run's folder that is gone now.
	if res.Env == nil || res.Env.EtcdVersion == "" || res.Env.FSType == "" || res.Env.Dir != dir {
		t.Errorf("env %+v, want the dir %s", res.Env, dir)
	}
	names := map[string]bool{}
	for _, c := range res.Checks {
		names[c.Name] = true
	}
	for _, want := range []string{limits.WALFsyncP99, limits.LeaderChanges, limits.ProposalsFailed} {
		if !names[want] {
			t.Errorf("no %s check in %v", want, names)
		}
	}
	if res.Verdict == "" || !strings.Contains(res.Summary, "300 put requests") {
		t.Errorf("verdict %q summary %q", res.Verdict, res.Summary)
	}
	if p := res.LoadParams(); p == nil || !strings.HasPrefix(p.Prefix, "/etcdperf/") || p.TargetLeader == nil || !*p.TargetLeader {
		t.Errorf("params %+v", p)
	}
	testutil.AssertEmptyDir(t, dir)
}

// external starts an etcd that the test owns, as a user's cluster.
func external(t *testing.T) (string, *clientv3.Client) {
	t.Helper()
	tg, err := lab.Open(context.Background(), lab.TargetOptions{DataDir: t.TempDir(), RunID: "ext"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg.Members()[0].ClientURL, tg.Client().Client
}

func countPrefix(t *testing.T, c *clientv3.Client, p string) int64 {
	t.Helper()
	r, err := c.Get(context.Background(), p, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return r.Count
}

func TestBenchExternalKeysAndPrefix(t *testing.T) {
	ep, cli := external(t)
	ctx := context.Background()
	conn := cluster.ConnOptions{Endpoints: []string{ep}}

	// Keys are deleted at the end...
	res, err := Bench(ctx, benchOf(loadrun.Options{Target: lab.TargetOptions{Conn: conn}, Load: putLoad(100), Conns: 2}))
	if err != nil {
		t.Fatal(err)
	}
	if n := countPrefix(t, cli, "/etcdperf/"); n != 0 {
		t.Errorf("%d keys left under /etcdperf/", n)
	}
	if res.Target.Kind != lab.External || res.Bench.ClientCPU <= 0 {
		t.Errorf("target %+v client CPU %v", res.Target, res.Bench.ClientCPU)
	}
	// ...unless kept, and then the prefix is in use.
	lo := putLoad(50)
	lo.Prefix = "/etcdperf/test-keep/"
	if _, err := Bench(ctx, benchOf(loadrun.Options{Target: lab.TargetOptions{Conn: conn}, Load: lo, KeepKeys: true})); err != nil {
		t.Fatal(err)
	}
	if n := countPrefix(t, cli, lo.Prefix); n != 10 {
		t.Errorf("%d keys kept, want the key space of 10", n)
	}
	_, err = Bench(ctx, benchOf(loadrun.Options{Target: lab.TargetOptions{Conn: conn}, Load: lo}))
	if !errors.Is(err, ErrPrefixInUse) || !strings.Contains(err.Error(), "10 keys") {
		t.Errorf("a used prefix: %v", err)
	}
	// --compact compacts etcd's history up to the deletion of the keys.
	before, err := cli.Get(ctx, "/etcdperf/")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Bench(ctx, benchOf(loadrun.Options{Target: lab.TargetOptions{Conn: conn}, Load: putLoad(20), Compact: true})); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Get(ctx, "/etcdperf/", clientv3.WithRev(before.Header.Revision)); err == nil || !strings.Contains(err.Error(), "compacted") {
		t.Errorf("a read at revision %d after --compact: %v, want compacted", before.Header.Revision, err)
	}
	// Cancelled midway: a partial Result, and the keys are gone.
	lo = putLoad(0)
	lo.Duration = time.Minute
	cctx, cancel := context.WithCancel(ctx)
	o := benchOf(loadrun.Options{Target: lab.TargetOptions{Conn: conn}, Load: lo})
	o.Started = func() { time.AfterFunc(300*time.Millisecond, cancel) }
	res, err = Bench(cctx, o)
	if !errors.Is(err, context.Canceled) || res == nil || res.Error != "interrupted" || res.Bench.Ops == 0 {
		t.Errorf("cancelled run: %v %+v", err, res)
	}
	if n := countPrefix(t, cli, "/etcdperf/") - 10; n != 0 {
		t.Errorf("%d keys left by the cancelled run", n)
	}
}

func TestBenchTLSAndAuth(t *testing.T) {
	certs := testutil.NewCerts(t)
	dir := t.TempDir()
	ctx := context.Background()
	m, err := lab.StartMember(ctx, lab.MemberConfig{Name: "tls", DataDir: filepath.Join(dir, "m"),
		ClientURL: fmt.Sprintf("https://127.0.0.1:%d", testutil.FreePort(t)), PeerURL: fmt.Sprintf("http://127.0.0.1:%d", testutil.FreePort(t)),
		TLS: &lab.ServerTLS{CertFile: certs.ServerCert, KeyFile: certs.ServerKey, TrustedCAFile: certs.CA, ClientCertAuth: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	conn := cluster.ConnOptions{Endpoints: []string{m.Config().ClientURL}, CACert: certs.CA, Cert: certs.ClientCert, Key: certs.ClientKey}
	for _, clients := range []int{1, 4} { // one client per connection, and shared connections
		lo := putLoad(100)
		lo.Clients = clients
		res, err := Bench(ctx, benchOf(loadrun.Options{Target: lab.TargetOptions{Conn: conn}, Load: lo, Conns: 1}))
		if err != nil || res.Bench.Ops != 100 || len(res.Bench.Errors) != 0 {
			t.Fatalf("bench over TLS with %d clients: %v %+v", clients, err, res)
		}
		if p := res.LoadParams(); p == nil || !p.TLS || res.Server == nil {
			t.Errorf("params %+v server %+v", p, res.Server)
		}
	}

	// Auth: a user that may write under /etcdperf/ only.
	ep, root := external(t)
	testutil.EnableAuth(t, root, "bench", "s3cret", "/etcdperf/")
	auth := cluster.ConnOptions{Endpoints: []string{ep}, User: "bench", Password: "s3cret"}
	res, err := Bench(ctx, benchOf(loadrun.Options{Target: lab.TargetOptions{Conn: auth}, Load: putLoad(100), Conns: 2}))
	if err != nil || res.Bench.Ops != 100 || len(res.Bench.Errors) != 0 {
		t.Fatalf("bench with auth: %v %+v", err, res)
	}
	if js, _ := json.Marshal(res.Params); res.LoadParams().User != "bench" || strings.Contains(string(js), "s3cret") {
		t.Errorf("params %s", js)
	}
	if res.Server == nil {
		t.Error("no server metrics with auth (etcd serves /metrics without auth)")
	}
}

func TestServerSectionAtFloor(t *testing.T) {
	// Every fsync under 1ms: p99 is "at most 1ms", not 0.99ms, and a note
	// says so.
	before := scrapeFromText(t, 10, 10)
	after := scrapeFromText(t, 510, 510)
	srv, notes := promscrape.ServerSection([]promscrape.MemberScrape{before}, []promscrape.MemberScrape{after})
	if srv == nil || srv.WALFsync == nil || srv.WALFsync.Count != 500 || srv.WALFsync.P99 != 0.001 || srv.WALFsync.Resolution != 0.001 {
		t.Fatalf("server %+v", srv)
	}
	if len(notes) == 0 || !strings.Contains(notes[0], "all 500 WAL fsyncs took under 1ms") {
		t.Errorf("notes %v", notes)
	}
	res := &result.Result{Kind: result.KindBench, Bench: &result.Bench{Workload: "put", Ops: 1}, Server: srv}
	judge.Judge(res, limits.Table)
	if !strings.Contains(res.Summary, "WAL fsync p99 <= 1ms") {
		t.Errorf("summary %q", res.Summary)
	}
}

// benchOf is a bench of o judged by limits.Table.
func benchOf(o loadrun.Options) BenchOptions { return BenchOptions{Options: o, Criteria: limits.Table} }
