package pipeline

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/load"
	"github.com/etcdperf/etcdperf/internal/profile"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

func profileOf(t *testing.T, name string) profile.Profile {
	t.Helper()
	p, err := profile.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkNames are the criteria a check Result lists, in this order.
var checkNames = []string{limits.Throughput, limits.SlowestRequest, limits.LatencyStddev, limits.RequestP99, limits.RequestErrors,
	limits.WALFsyncP99, limits.BackendCommitP99, limits.LeaderChanges, limits.ProposalsFailed}

func assertCheckResult(t *testing.T, res *result.Result, rate float64, secs float64) {
	t.Helper()
	if res.Kind != result.KindCheck || res.Verdict == "" || res.Summary == "" {
		t.Errorf("kind %q verdict %q summary %q", res.Kind, res.Verdict, res.Summary)
	}
	if len(res.Checks) != len(checkNames) {
		t.Fatalf("%d checks, want %d: %+v", len(res.Checks), len(checkNames), res.Checks)
	}
	for i, c := range res.Checks {
		if c.Name != checkNames[i] || c.Source == "" || c.Op == "" || c.Unit == "" || c.Status == "" {
			t.Errorf("check %d: %+v, want %s with its limit and source", i, c, checkNames[i])
		}
	}
	b, pf := res.Bench, res.Perf
	// The pacer sends request i at i/rate: within the run, no more than
	// rate x duration. A shared machine may stall the run; then the
	// Result must say who was behind.
	want := rate * secs
	if float64(b.Ops) > want+1 || b.Ops == 0 || len(b.Errors) != 0 {
		t.Errorf("%d requests (%v errors), want about %.0f", b.Ops, b.Errors, want)
	}
	if pf == nil || pf.TargetRate != rate || pf.Reached != b.Throughput/rate || pf.SentRate <= 0 || pf.CPUs < 1 {
		t.Fatalf("perf %+v", pf)
	}
	if c, _ := findCheck(res, limits.Throughput); (c.Status == result.StatusFail) != (pf.LimitedBy != "") {
		t.Errorf("throughput %s, limited by %q", c.Status, pf.LimitedBy)
	}
	if c, _ := findCheck(res, limits.Throughput); c.Observed != pf.Reached {
		t.Errorf("throughput check %v, perf reached %v", c.Observed, pf.Reached)
	}
	if c, _ := findCheck(res, limits.SlowestRequest); c.Observed != b.Latency.Max {
		t.Errorf("slowest check %v, latency max %v", c.Observed, b.Latency.Max)
	}
}

func findCheck(r *result.Result, name string) (result.Check, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return result.Check{}, false
}

// An embedded etcd in its own process: etcd's CPU and memory come from its
// metrics, etcdperf's CPU from its rusage, the device from /proc.
func TestCheckEmbedded(t *testing.T) {
	dir := t.TempDir()
	o := CheckOptions{Target: lab.TargetOptions{DataDir: dir, ServerCommand: serverCommand(t)},
		Profile: profileOf(t, "s"), Duration: 3 * time.Second, Criteria: limits.Table}
	res, err := Check(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	assertCheckResult(t, res, 150, 3)
	sameTextReadBack(t, res)
	pf := res.Perf
	if !pf.ClientOnly || pf.ClientCPU <= 0 || pf.ServerCPU <= 0 || len(pf.Members) != 1 || pf.Members[0].RSSAfter <= 0 || pf.Members[0].DBSize <= 0 {
		t.Errorf("perf: client only %v, client CPU %v, server CPU %v, members %+v", pf.ClientOnly, pf.ClientCPU, pf.ServerCPU, pf.Members)
	}
	if res.Bench.ClientCPU != pf.ClientCPU/float64(pf.CPUs) {
		t.Errorf("bench client CPU %v, perf %v of %d CPUs", res.Bench.ClientCPU, pf.ClientCPU, pf.CPUs)
	}
	if res.Host == nil || res.Host.Summary.Seconds < 2 {
		t.Errorf("host %+v", res.Host)
	}
	if res.Bench.ServiceLatency == nil || pf.InFlight <= 0 || pf.InFlight > 50 {
		t.Errorf("service latency %+v, in flight %v", res.Bench.ServiceLatency, pf.InFlight)
	}
	if p, ok := res.Params.(*result.CheckParams); !ok || p.Load != "s" || p.Duration != 3.0 || p.Compact != nil {
		t.Errorf("params %+v", res.Params)
	}
	if !strings.Contains(res.Bench.Description, "256-byte keys and 1024-byte values") {
		t.Errorf("description %q", res.Bench.Description)
	}
	testutil.AssertEmptyDir(t, dir)
}

// An external cluster: a prefix that holds keys is refused; the run's keys
// are deleted; --auto-compact and --auto-defrag act on it.
func TestCheckExternal(t *testing.T) {
	ep, cli := external(t)
	ctx := context.Background()
	if _, err := cli.Put(ctx, "/mine/a", "x"); err != nil {
		t.Fatal(err)
	}
	conn := cluster.ConnOptions{Endpoints: []string{ep}}
	o := CheckOptions{Target: lab.TargetOptions{Conn: conn}, Profile: profileOf(t, "s"), Duration: time.Second, Prefix: "/mine/", Criteria: limits.Table}
	if _, err := Check(ctx, o); !errors.Is(err, ErrPrefixInUse) {
		t.Fatalf("a prefix with keys: %v", err)
	}
	o.Prefix, o.AutoCompact, o.AutoDefrag = "/etcdperf/check-test/", true, true
	res, err := Check(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	assertCheckResult(t, res, 150, 1)
	if n, _ := cli.Get(ctx, "/etcdperf/", clientv3.WithPrefix(), clientv3.WithCountOnly()); n.Count != 0 {
		t.Errorf("%d keys left under /etcdperf/", n.Count)
	}
	if g, _ := cli.Get(ctx, "/mine/a"); len(g.Kvs) != 1 {
		t.Error("the user's key is gone")
	}
	if !strings.Contains(strings.Join(res.Perf.Notes, " "), "defragmented") || !res.Params.(*result.CheckParams).AutoCompact {
		t.Errorf("notes %v params %v", res.Perf.Notes, res.Params)
	}
	// The cluster's history was compacted to the deletion.
	if _, err := cli.Get(ctx, "/etcdperf/check-test/", clientv3.WithRev(1)); err == nil {
		t.Error("revision 1 can still be read: no compaction")
	}
}

// CompactEvery compacts etcd's history while the load runs (a capacity
// sweep's steps on its own etcd): the revisions of the load's first second
// are gone when it ends, with no compaction after it; without it, none is.
func TestCheckCompactsDuringLoad(t *testing.T) {
	ep, cli := external(t)
	ctx := context.Background()
	for _, every := range []time.Duration{0, 400 * time.Millisecond} {
		before, err := cli.Get(ctx, "/")
		if err != nil {
			t.Fatal(err)
		}
		start := before.Header.Revision
		o := CheckOptions{Target: lab.TargetOptions{Conn: cluster.ConnOptions{Endpoints: []string{ep}}}, Profile: profileOf(t, "s"),
			Duration: 2 * time.Second, Criteria: limits.Table, CompactEvery: every}
		res, err := Check(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		// At 150 puts/s, compactions at 0.2, 0.6, 1.0, 1.4 and 1.8s: the
		// one at 1.4s compacted past the 150th put.
		_, err = cli.Get(ctx, "/", clientv3.WithRev(start+150))
		if compacted := errors.Is(err, rpctypes.ErrCompacted); compacted != (every > 0) {
			t.Errorf("compacting every %s: revision %d read %v, want compacted %v (%d puts)", every, start+150, err, every > 0, res.Bench.Ops)
		}
		if every == 0 && err != nil {
			t.Errorf("no compaction: revision %d: %v", start+150, err)
		}
	}
}

// Overwrite: the puts overwrite keys written before the run (a capacity
// sweep's key space), which stay; with AutoCompact the history is
// compacted to the run's end, all of it.
func TestCheckOverwritesKeys(t *testing.T) {
	ep, cli := external(t)
	ctx := context.Background()
	prefix := "/etcdperf/sweep-keys/"
	for i := range 100 {
		if _, err := cli.Put(ctx, load.KeyName(prefix, profileOf(t, "s").KeySize, uint64(i)), "v"); err != nil {
			t.Fatal(err)
		}
	}
	o := CheckOptions{Target: lab.TargetOptions{Conn: cluster.ConnOptions{Endpoints: []string{ep}}}, Profile: profileOf(t, "s"),
		Duration: time.Second, Criteria: limits.Table, Prefix: prefix, KeySpace: 100, Overwrite: true, AutoCompact: true}
	res, err := Check(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	got, err := cli.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	overwritten := 0
	for _, kv := range got.Kvs {
		if kv.Version > 1 {
			overwritten++
		}
	}
	// 150 puts over 100 keys: most of them overwritten.
	if len(got.Kvs) != 100 || overwritten < 50 {
		t.Errorf("%d keys under %s, %d overwritten by %d puts; want the 100 keys kept, most overwritten", len(got.Kvs), prefix, overwritten, res.Bench.Ops)
	}
	if _, err := cli.Get(ctx, prefix, clientv3.WithRev(got.Header.Revision-1)); !errors.Is(err, rpctypes.ErrCompacted) {
		t.Errorf("revision %d before the end: %v, want compacted", got.Header.Revision-1, err)
	}
}

// Datascale reads the member's memory before and after its keys.
func TestDatascaleEmbedded(t *testing.T) {
	dir := t.TempDir()
	p, _ := profile.LookupScale("s")
	res, err := Datascale(context.Background(), DatascaleOptions{Target: lab.TargetOptions{DataDir: dir, ServerCommand: serverCommand(t)},
		Profile: p, Keys: 2000, Criteria: limits.Table})
	if err != nil {
		t.Fatal(err)
	}
	sameTextReadBack(t, res)
	ds := res.Datascale
	if res.Kind != result.KindDatascale || ds.Keys != 2000 || ds.KVSize != 1024 || res.Bench.Ops != 2000 || len(ds.Members) != 1 {
		t.Fatalf("datascale %+v, %d ops", ds, res.Bench.Ops)
	}
	// 2000 keys of 1 KiB (and their 512-byte keys in the index) cannot
	// fit in less than 1 MiB of memory.
	if ds.RSSBefore <= 0 || ds.Growth < 1<<20 || ds.PerKey != ds.Growth/2000 || ds.RSSAfter != ds.RSSBefore+ds.Growth {
		t.Errorf("memory %+v", ds)
	}
	if len(res.Checks) != 1 || res.Checks[0].Name != limits.RequestErrors || res.Verdict != result.Pass || !strings.Contains(res.Summary, "per key") {
		t.Errorf("checks %+v verdict %s summary %q", res.Checks, res.Verdict, res.Summary)
	}
	testutil.AssertEmptyDir(t, dir)
}
