package diagnose

import (
	"math"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/result"
)

// scaleRun builds a scale Result of pods: for n objects at step i the
// figures come from the functions (nil: absent).
func scaleRun(objects []int64, rss, list, db func(n float64) float64) *result.Result {
	r := result.New("scale")
	sc := &result.Scale{Planned: len(objects), Quota: 1 << 30,
		Kinds: []result.ScaleKind{{Name: "pods", Target: objects[len(objects)-1], MeanValueSize: 3000}}}
	for i, n := range objects {
		st := result.ScaleStep{Step: i + 1, Objects: n, Kinds: map[string]int64{"pods": n}}
		if rss != nil {
			st.RSS = rss(float64(n))
		}
		if list != nil {
			v := list(float64(n))
			st.Lists = []result.ScaleList{{Kind: "pods", Latency: &result.Latency{Count: 3, P50: v, P99: v}}}
		}
		if db != nil {
			st.DBSize, st.DBSizeInUse = db(float64(n)), db(float64(n))
		}
		sc.Steps = append(sc.Steps, st)
	}
	r.Scale = sc
	return r
}

func finding(t *testing.T, fs []result.Finding, id string) (result.Finding, bool) {
	t.Helper()
	for _, f := range fs {
		if f.ID == id {
			if f.Title == "" || f.Recommendation == "" || len(f.Evidence) == 0 {
				t.Errorf("finding %s lacks a title, evidence or a recommendation: %+v", id, f)
			}
			return f, true
		}
	}
	return result.Finding{}, false
}

var steps = []int64{10000, 20000, 30000, 40000, 50000}

func TestScaleRSSGrowth(t *testing.T) {
	// 20 KiB per object over 100 MiB: informative, with the slope.
	f, ok := finding(t, Run(scaleRun(steps, func(n float64) float64 { return 100<<20 + 20*1024*n }, nil, nil)), "scale_rss_growth")
	if !ok || f.Severity != result.Info || !strings.Contains(f.Title, "195.3 MiB per 10,000 objects between 10000 and 50000 objects") {
		t.Errorf("%+v", f)
	}
	// The 950 KB per pod of OpenStack performance-docs' etcd health tests: memory grows far faster than the data.
	f, ok = finding(t, Run(scaleRun(steps, func(n float64) float64 { return 2e9 + 950e3*n }, nil, nil)), "scale_rss_growth")
	if !ok || f.Severity != result.Warning || !strings.Contains(f.Title, "times the objects' mean size") {
		t.Errorf("%+v", f)
	}
	// Memory that does not grow, or a single step: nothing to say.
	for _, r := range []*result.Result{
		scaleRun(steps, func(float64) float64 { return 100 << 20 }, nil, nil),
		scaleRun(steps[:1], func(n float64) float64 { return n }, nil, nil),
	} {
		if f, ok := finding(t, Run(r), "scale_rss_growth"); ok {
			t.Errorf("%+v", f)
		}
	}
}

func TestScaleListSuperlinear(t *testing.T) {
	// Quadratic: 10ms at 10k objects, 250ms at 50k.
	f, ok := finding(t, Run(scaleRun(steps, nil, func(n float64) float64 { return 0.01 * (n / 1e4) * (n / 1e4) }, nil)), "scale_list_superlinear")
	if !ok || f.Severity != result.Warning || !strings.Contains(f.Title, "objects^2.0") || !strings.Contains(f.Recommendation, "avoid queries with large range") {
		t.Errorf("%+v", f)
	}
	// Linear, a constant overhead (sublinear), and quadratic growth that
	// stays under 10ms but for two steps: no finding.
	for name, list := range map[string]func(float64) float64{
		"linear":   func(n float64) float64 { return 0.02 * n / 1e4 },
		"overhead": func(n float64) float64 { return 0.05 + 0.001*n/1e4 },
		"noise":    func(n float64) float64 { return 1e-3 * (n / 1e4) * (n / 1e4) },
	} {
		if f, ok := finding(t, Run(scaleRun(steps, nil, list, nil)), "scale_list_superlinear"); ok {
			t.Errorf("%s: %+v", name, f)
		}
	}
}

func TestScaleDBQuota(t *testing.T) {
	r := scaleRun(steps, nil, nil, func(n float64) float64 { return 5000 * n })
	f, ok := finding(t, Run(r), "scale_db_quota")
	// 5000 B per object: 1 GiB holds about 215,000.
	if !ok || f.Severity != result.Info || !strings.Contains(f.Title, "fits about 215000 objects") {
		t.Errorf("%+v", f)
	}
	if _, ok := finding(t, Run(r), "db_near_quota"); ok {
		t.Errorf("a database at 23%% of its quota said to be near it")
	}
	// Past db_quota_used's limit, the quota rule says so of the largest
	// member, a warning; past db_quota_alarm, critical; the projection
	// stays a projection.
	r.Scale.Steps[4].DBSize = 0.9 * (1 << 30)
	if f, _ := finding(t, Run(r), "db_near_quota"); f.Severity != result.Warning {
		t.Errorf("%+v", f)
	}
	r.Scale.Steps[4].DBSize = 0.97 * (1 << 30)
	fs := Run(r)
	if f, _ := finding(t, fs, "db_near_quota"); f.Severity != result.Critical || !strings.Contains(f.Title, "The database of the largest member is close to its quota") ||
		!strings.Contains(f.Recommendation, "defragment") {
		t.Errorf("%+v", f)
	}
	if f, _ := finding(t, fs, "scale_db_quota"); f.Severity != result.Info {
		t.Errorf("%+v", f)
	}
	// Fragmented: a large database mostly free.
	r = scaleRun(steps, nil, nil, func(n float64) float64 { return 5000 * n })
	r.Scale.Steps[4].DBSizeInUse = r.Scale.Steps[4].DBSize / 4
	if f, ok := finding(t, Run(r), "db_fragmented"); !ok || f.Severity != result.Info || !strings.Contains(f.Title, "the largest member's database file is 238.4 MiB but only 59.6 MiB of it is in use") {
		t.Errorf("%+v", f)
	}
}

func TestScaleStoppedErrorsSlowAppliesWatchLag(t *testing.T) {
	r := scaleRun(steps[:3], nil, nil, nil)
	r.Scale.Planned = 5
	r.Scale.Stopped = "3 requests failed at 30000 objects (step 3)"
	r.Scale.Steps[1].SlowApplies = 2
	r.Scale.Steps[2].LogWarnings = map[string]int64{"slow_apply": 1, "slow_read_only_range": 4, "heartbeat_late": 9}
	r.Scale.Steps[2].Errors = map[string]int64{"put: Unavailable: etcdserver: request timed out": 3}
	r.Scale.Steps[2].WatchLag = &result.Latency{Count: 10, P99: 2.5}
	fs := Run(r)
	if f, ok := finding(t, fs, "scale_stopped"); !ok || f.Severity != result.Critical || !strings.Contains(f.Title, "at 30000 objects (step 3 of 5)") {
		t.Errorf("stopped %+v", f)
	}
	if f, ok := finding(t, fs, "scale_errors"); !ok || !strings.Contains(f.Title, "3 requests failed, from step 3 (30000 objects)") || !strings.Contains(f.Recommendation, "--command-timeout") {
		t.Errorf("errors %+v", f)
	}
	f, ok := finding(t, fs, "scale_slow_applies")
	if !ok || !strings.Contains(f.Title, "from step 2 (20000 objects) on, mostly read-only ranges") || f.Evidence[0].Observed != 2 ||
		f.Evidence[1].Observed != 1 || f.Evidence[2].Observed != 4 {
		t.Errorf("slow applies %+v", f)
	}
	if f, ok := finding(t, fs, "scale_watch_lag"); !ok || !strings.Contains(f.Title, "2.5s after their puts") {
		t.Errorf("watch lag %+v", f)
	}
	if v := Verdict(r.Checks, fs); v != result.Fail {
		t.Errorf("verdict %s", v)
	}
	// A clean run has none of these.
	clean := scaleRun(steps, nil, nil, nil)
	for _, f := range Run(clean) {
		if f.Severity != result.Info {
			t.Errorf("clean run: %+v", f)
		}
	}
}

func TestFitSlopeAndRoundCount(t *testing.T) {
	if s, ok := fitSlope([]float64{1, 2, 3}, []float64{2, 4, 6}); !ok || math.Abs(s-2) > 1e-12 {
		t.Errorf("slope %v %v", s, ok)
	}
	if _, ok := fitSlope([]float64{1, 1}, []float64{2, 4}); ok {
		t.Error("a slope from one x")
	}
	for v, want := range map[float64]string{12345: "12300", 999: "999", 2.5e6: "2.5 million", 0: "0"} {
		if got := roundCount(v); got != want {
			t.Errorf("roundCount(%v) = %q, want %q", v, got, want)
		}
	}
}
