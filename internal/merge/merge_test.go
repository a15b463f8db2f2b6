package merge

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/hist"
	"github.com/etcdperf/etcdperf/internal/result"
)

// shard is a bench Result holding the latencies given, as one pod prints it.
func shard(host string, ops int64, lat, svc *hist.Histogram, series []result.Sample) *result.Result {
	r := result.New("bench")
	r.Env = &result.Env{Hostname: host, EtcdVersion: "3.7.3", CPUs: 2}
	r.Params = map[string]any{"workload": "put", "rate": 100.0, "shard": host}
	l, s := lat.Latency(true), svc.Latency(true)
	r.Bench = &result.Bench{Workload: "put", Ops: ops, Seconds: 10, Throughput: float64(ops) / 10,
		Latency: &l, ServiceLatency: &s, Series: series, Errors: map[string]int64{"DeadlineExceeded": 1}}
	r.Server = &result.Server{LeaderChanges: 1}
	return r
}

func TestMergeTwoHalvesEqualsTheWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	whole, a, b := hist.New(), hist.New(), hist.New()
	wholeSvc, aSvc, bSvc := hist.New(), hist.New(), hist.New()
	for i := range 20000 {
		// Log-normal latencies around 2ms with a tail to ~100ms.
		v := time.Duration(2e6 * math.Exp(rng.NormFloat64()))
		s := v / 2
		whole.Record(v)
		wholeSvc.Record(s)
		if i%3 == 0 {
			a.Record(v)
			aSvc.Record(s)
		} else {
			b.Record(v)
			bSvc.Record(s)
		}
	}
	ra := shard("pod-0", a.Count(), a, aSvc, []result.Sample{{T: 1, Ops: 10, P99: 0.004, Max: 0.01}, {T: 2, Ops: 5, P99: 0.003, Max: 0.02}})
	rb := shard("pod-1", b.Count(), b, bSvc, []result.Sample{{T: 1, Ops: 7, P99: 0.005, Max: 0.008}})
	m, err := Results([]*result.Result{ra, rb})
	if err != nil {
		t.Fatal(err)
	}
	for name, pair := range map[string][2]*result.Latency{
		"latency":         {m.Bench.Latency, ptr(whole.Latency(true))},
		"service_latency": {m.Bench.ServiceLatency, ptr(wholeSvc.Latency(true))},
	} {
		got, want := pair[0], pair[1]
		if got.Count != want.Count || got.Min != want.Min || got.Max != want.Max ||
			got.P50 != want.P50 || got.P90 != want.P90 || got.P99 != want.P99 || got.P999 != want.P999 || got.P9999 != want.P9999 {
			t.Errorf("%s: merged %+v\nwhole %+v", name, *got, *want)
		}
		// The Result holds stddev in whole nanoseconds: merging may move it by one.
		if !close(got.Mean, want.Mean) || math.Abs(got.Stddev-want.Stddev) > 1.001e-9 {
			t.Errorf("%s: mean/stddev %g/%g, whole %g/%g", name, got.Mean, got.Stddev, want.Mean, want.Stddev)
		}
		if got.HDR != want.HDR {
			t.Errorf("%s: the merged HDR histogram differs from the whole's", name)
		}
	}
	if m.Bench.Ops != 20000 || m.Bench.Throughput != 2000 || m.Bench.Errors["DeadlineExceeded"] != 2 || m.Bench.Seconds != 10 {
		t.Errorf("bench totals: %+v", m.Bench)
	}
	wantSeries := []result.Sample{{T: 1, Ops: 17, P99: 0.005, Max: 0.01}, {T: 2, Ops: 5, P99: 0.003, Max: 0.02}}
	if len(m.Bench.Series) != 2 || m.Bench.Series[0] != wantSeries[0] || m.Bench.Series[1] != wantSeries[1] {
		t.Errorf("series %+v, want %+v", m.Bench.Series, wantSeries)
	}
	if m.Env.Hostname != "" || m.Env.EtcdVersion != "3.7.3" || m.Env.CPUs != 2 {
		t.Errorf("env keeps what differs or drops what is shared: %+v", m.Env)
	}
	if _, ok := m.Params["shard"]; ok || m.Params["rate"] != 100.0 || m.Params["merged_results"] != 2 {
		t.Errorf("params %v", m.Params)
	}
	if m.Server != nil || m.Schema != result.Schema || m.Kind != "bench" {
		t.Errorf("merged result: server %v, schema %q, kind %q", m.Server, m.Schema, m.Kind)
	}
	// The merged Result merges again: three thirds give the whole too.
	again, err := Results([]*result.Result{m, ra})
	if err != nil || again.Bench.Latency.Count != 20000+a.Count() {
		t.Fatalf("merging a merged Result: %v", err)
	}
}

func TestMergeRefuses(t *testing.T) {
	h := hist.New()
	h.Record(time.Millisecond)
	good := func() *result.Result { return shard("p", 1, h, h, nil) }
	noHDR := good()
	noHDR.Bench.Latency.HDR = ""
	disk := result.New("disk")
	disk.Disk = &result.Disk{}
	otherKind := good()
	otherKind.Kind = "check"
	noSvc := good()
	noSvc.Bench.ServiceLatency = nil
	for name, c := range map[string]struct {
		in    []*result.Result
		index int
		says  string
	}{
		"no HDR":        {[]*result.Result{good(), noHDR}, 1, "no HDR"},
		"disk":          {[]*result.Result{disk, good()}, 0, "without a bench section"},
		"kinds":         {[]*result.Result{good(), otherKind}, 1, "cannot be merged with"},
		"missing field": {[]*result.Result{good(), noSvc}, 1, "service_latency is missing"},
	} {
		_, err := Results(c.in)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Index != c.index || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Results([]*result.Result{good()}); err == nil {
		t.Error("merged a single Result")
	}
}

// A merged load is judged as one run of its kind is: the sharded
// Kubernetes Job's Result gets a summary and the findings of its failed
// requests.
func TestMergedResultIsJudged(t *testing.T) {
	h := hist.New()
	h.Record(time.Millisecond)
	a, b := shard("a", 10, h, h, nil), shard("b", 30, h, h, nil)
	m, err := Results([]*result.Result{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.Summary, "40 put requests in ") || !strings.Contains(m.Summary, "2 failed") || m.Verdict != result.Warn || len(m.Findings) == 0 {
		t.Errorf("merged: verdict %s, summary %q; want the 40 requests, 2 failed, judged", m.Verdict, m.Summary)
	}
}

// Of other kinds only the load merges: the merged Result gets the
// findings its load supports, not a judgement of sections it lacks (a
// datascale's memory, a check's profile).
func TestMergedDatascaleIsNotJudgedAsOne(t *testing.T) {
	h := hist.New()
	h.Record(time.Millisecond)
	a, b := shard("a", 10, h, h, nil), shard("b", 30, h, h, nil)
	a.Kind, b.Kind = result.KindDatascale, result.KindDatascale
	m, err := Results([]*result.Result{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if m.Summary != "" || len(m.Checks) != 0 || m.Verdict == "" {
		t.Errorf("merged datascale: summary %q, checks %+v, verdict %q; want no summary or check, a verdict from the findings", m.Summary, m.Checks, m.Verdict)
	}
}

func ptr(l result.Latency) *result.Latency { return &l }

func close(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// Real series are not on whole seconds: each shard's sampler ticks a
// little after each second of its own run, and its last sample ends with
// the run. Samples of the same second add up all the same.
func TestSeriesOfShardsThatTickApart(t *testing.T) {
	h := hist.New()
	h.Record(time.Millisecond)
	ra := shard("pod-0", 1, h, h, []result.Sample{{T: 1.0021, Ops: 10, Max: 0.01}, {T: 2.0013, Ops: 5, Max: 0.02}, {T: 2.31, Ops: 1, Max: 0.03}})
	rb := shard("pod-1", 1, h, h, []result.Sample{{T: 0.9987, Ops: 7, Max: 0.008}, {T: 2.0102, Ops: 4, Err: 1, Max: 0.01}})
	m, err := Results([]*result.Result{ra, rb})
	if err != nil {
		t.Fatal(err)
	}
	want := []result.Sample{{T: 1.0021, Ops: 17, Max: 0.01}, {T: 2.0102, Ops: 9, Err: 1, Max: 0.02}, {T: 2.31, Ops: 1, Max: 0.03}}
	if !slices.Equal(m.Bench.Series, want) {
		t.Errorf("series %+v\nwant   %+v", m.Bench.Series, want)
	}
}
