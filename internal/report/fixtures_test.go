package report

import (
	"bytes"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/hist"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// benchResult builds a bench Result as DESIGN.md and package result
// document it (bench latency with HDR, a per-second series, server
// quantiles from etcd's histograms with their 1 ms resolution), from a
// seeded generator so that it is the same on every run. slow scales the
// latencies; the secrets in params and env are there to be redacted.
func benchResult(name string, seed uint64, slow float64, leaderChanges float64) *result.Result {
	rng := rand.New(rand.NewPCG(seed, 7))
	start := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	r := &result.Result{
		Schema: result.Schema, Kind: "bench", Name: name,
		Tool:    result.Tool{Name: "etcdperf", Version: "devel"},
		Started: start, Finished: start.Add(20 * time.Second),
		Env: &result.Env{Hostname: "client-0", CPUs: 2, OS: "linux", Arch: "amd64", EtcdVersion: "3.7.3",
			Endpoints: "https://root:hunter2@10.0.0.1:2379"},
		Params: result.RawParams{"workload": "put", "rate": 1000.0, "clients": 50.0, "conns": 10.0,
			"key_size": 256.0, "val_size": 1024.0, "total": 20000.0,
			"user": "root:hunter2", "password": "hunter2",
			"tls": map[string]any{"cert": "/etc/etcd/client.crt", "auth_token": "s3cr3t"}},
	}
	all, svc := hist.New(), hist.New()
	var series []result.Sample
	for sec := range 20 {
		h := hist.New()
		n := 1000 + rng.IntN(50)
		// Second 12 stalls: a slow fsync holds every request behind it.
		stall := 1.0
		if sec == 12 {
			stall = 8
		}
		for range n {
			s := time.Duration(slow * stall * 2e6 * math.Exp(0.6*rng.NormFloat64()))
			q := time.Duration(rng.ExpFloat64() * 2e5 * slow)
			all.Record(s + q)
			svc.Record(s)
			h.Record(s + q)
		}
		series = append(series, result.Sample{T: float64(sec + 1), Ops: h.Count(),
			P50: h.Quantile(50).Seconds(), P99: h.Quantile(99).Seconds(), Max: h.Max().Seconds()})
	}
	lat, service := all.Latency(true), svc.Latency(true)
	r.Bench = &result.Bench{Workload: "put", Ops: all.Count(), Seconds: 20, Throughput: float64(all.Count()) / 20,
		Latency: &lat, ServiceLatency: &service, Series: series, Errors: map[string]int64{"DeadlineExceeded": int64(3 * slow)}}
	bucketed := func(p50, p90, p99 float64) *result.Latency {
		return &result.Latency{Count: all.Count(), Bucketed: true, Resolution: 0.001, Mean: p50,
			P50: p50, P90: p90, P99: p99, P999: p99 * 2, P9999: p99 * 4}
	}
	r.Server = &result.Server{
		WALFsync:      bucketed(0.001, 0.0016*slow, 0.0034*slow),
		BackendCommit: bucketed(0.001*slow, 0.004*slow, 0.012*slow),
		LeaderChanges: leaderChanges,
	}
	for _, c := range []struct {
		id string
		v  float64
	}{{limits.RequestP99, lat.P99}, {limits.WALFsyncP99, r.Server.WALFsync.P99}, {limits.LeaderChanges, leaderChanges}} {
		cr, _ := limits.Lookup(limits.Table, c.id)
		r.Checks = append(r.Checks, limits.Evaluate(cr, c.v))
	}
	r.Verdict = limits.Verdict(r.Checks)
	if leaderChanges > 0 {
		r.Findings = []result.Finding{{ID: "leader_changes", Severity: result.Critical,
			Title:          "etcd lost its leader during the load: heartbeats were missed",
			Evidence:       []result.Evidence{{What: "leader changes", Observed: leaderChanges, Unit: "count", Source: "etcd_server_leader_changes_seen_total"}},
			Recommendation: "Look at the WAL fsync latency of every member first; then at CPU starvation of the etcd process."}}
		r.Verdict = result.Fail
	}
	r.Summary = "request p99 " + formatUnit(lat.P99, "s") + " at " + formatUnit(r.Bench.Throughput, "ops/s")
	return r
}

// TestFixtures keeps the generated Results in testdata, where report and
// compare read them like any file (-update rewrites them).
func TestFixtures(t *testing.T) {
	for _, f := range []struct {
		file  string
		build func() *result.Result
	}{
		{"bench-nvme.json", func() *result.Result { return benchResult("nvme", 1, 1, 0) }},
		{"bench-gp2.json", func() *result.Result { return benchResult("gp2", 2, 3, 1) }},
	} {
		var buf bytes.Buffer
		if err := result.Encode(&buf, f.build()); err != nil {
			t.Fatal(err)
		}
		testutil.Golden(t, f.file, buf.Bytes())
	}
}

// load reads Results from testdata as the report command does.
func load(t *testing.T, names ...string) []Input {
	t.Helper()
	var paths []string
	for _, n := range names {
		paths = append(paths, filepath.Join("testdata", n))
	}
	in, err := Load(paths, nil)
	if err != nil {
		t.Fatal(err)
	}
	return in
}
