package diagnose

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/result"
)

// Spikes every 5 minutes with the compactions are compaction's; spikes
// elsewhere, or compactions without a period, are not.
func TestCompactionSpikes(t *testing.T) {
	var ends, took, spikes []float64
	for i := 0; i < 6; i++ { // etcd-io/etcd#19406: a spike every 5 minutes, with the compaction
		e := float64(i * 300)
		ends, took = append(ends, e), append(took, 0.8)
		spikes = append(spikes, e-0.5, e+1)
	}
	spikes = append(spikes, 1000) // one elsewhere
	for _, c := range []struct {
		name   string
		c      result.Compactions
		wanted bool
	}{
		{"with the compactions", result.NewCompactions("etcd-0", "log", ends, took, spikes, 5, 0), true},
		{"elsewhere", result.NewCompactions("etcd-0", "log", ends, took, []float64{100, 150, 400, 450, 700}, 5, 0), false},
		{"two compactions only", result.NewCompactions("etcd-0", "log", ends[:2], took[:2], spikes[:4], 5, 0), false},
		{"no period", result.NewCompactions("etcd-0", "log", []float64{0, 10, 300, 320, 900}, nil, []float64{0, 10, 300, 320, 900}, 5, 0), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := logsResult(map[string]int64{"compaction": c.c.Count}, nil, nil, 0)
			r.Logs.Compactions = []result.Compactions{c.c}
			fs := compactionSpikes(r)
			if (len(fs) == 1) != c.wanted {
				t.Fatalf("findings %+v for %+v, want one: %v", fs, c.c, c.wanted)
			}
			if c.wanted && (!strings.Contains(fs[0].Title, "12 of its 13 latency spikes") || !strings.Contains(fs[0].Title, "every 5m0s") || !strings.Contains(fs[0].Title, "not with a slow disk") ||
				len(fs[0].Members) != 1 || fs[0].Members[0] != "etcd-0") {
				t.Errorf("title %q, members %q", fs[0].Title, fs[0].Members)
			}
		})
	}
}

// A defragmentation longer than the 10s renew deadline is named, with
// etcd's advice; a bucket's bound says so.
func TestDefragStall(t *testing.T) {
	r := logsResult(map[string]int64{"defrag": 3}, nil, nil, 0)
	// gardener/etcd-backup-restore#1061: 3.84 GB defragmented in 21s, then 17s, then 17s
	r.Logs.Defrags = []result.Defrags{{Member: "etcd-main-0", Count: 3, Seconds: 55, Longest: 21, Source: "log"}}
	fs := defragStall(r)
	if len(fs) != 1 || !strings.Contains(fs[0].Title, "renew deadline (10s") || !strings.Contains(fs[0].Recommendation, "followers first") ||
		!strings.Contains(fs[0].Recommendation, "move-leader") || !strings.Contains(fs[0].Recommendation, "never while a compaction runs") {
		t.Fatalf("findings %+v", fs)
	}
	// From etcd's histogram: one took its sum; of several, the longest
	// lies in its bucket, at least their mean and at most their sum.
	r.Logs.Defrags = []result.Defrags{{Member: "m1", Count: 1, Seconds: 12, Longest: 12.8, Bucketed: true, Source: "etcd_disk_backend_defrag_duration_seconds"}}
	if fs := defragStall(r); len(fs) != 1 || !strings.Contains(fs[0].Evidence[0].What, "the longest 12s") || fs[0].Evidence[0].Observed != 12 {
		t.Errorf("bucketed, one: %+v", fs)
	}
	r.Logs.Defrags = []result.Defrags{{Member: "m1", Count: 2, Seconds: 20, Longest: 12.8, Bucketed: true, Source: "etcd_disk_backend_defrag_duration_seconds"}}
	if fs := defragStall(r); len(fs) != 1 || !strings.Contains(fs[0].Evidence[0].What, "between 10s and 12.8s") {
		t.Errorf("bucketed, two: %+v", fs)
	}
	r.Logs.Defrags = []result.Defrags{{Member: "m1", Count: 1, Seconds: 7, Longest: 12.8, Bucketed: true, Source: "etcd_disk_backend_defrag_duration_seconds"}}
	if fs := defragStall(r); len(fs) != 0 {
		t.Errorf("one of 7s in the bucket up to 12.8s: %+v", fs)
	}
	r.Logs.Defrags = []result.Defrags{{Member: "m1", Count: 2, Seconds: 3, Longest: 2, Source: "log"}}
	if fs := defragStall(r); len(fs) != 0 {
		t.Errorf("a 2s defragmentation: %+v", fs)
	}
}

// The stall doctor expects is stated: under the lease renew deadline as
// information, past it as a warning that says so, and without a rate what
// it would need.
func TestExpectedDefragStall(t *testing.T) {
	for _, c := range []struct {
		name     string
		e        result.ExpectedDefrag
		severity result.Severity
		words    string
	}{
		{"under the deadline", result.ExpectedDefrag{DBSize: 1 << 30, DBSizeFrom: "--db-size", Rate: 256 << 20, RateFrom: "rehearsal", Seconds: 4}, result.Info, "under a Kubernetes controller's lease renew deadline (10s"},
		{"past the deadline", result.ExpectedDefrag{DBSize: 4 << 30, DBSizeFrom: "--db-size", Rate: 128 << 20, RateFrom: "rehearsal", Seconds: 32}, result.Warning, "would lose their leases"},
		{"not known", result.ExpectedDefrag{Member: "etcd-0", DBSize: 1 << 30, DBSizeFrom: "the member's etcd_mvcc_db_total_size_in_use_in_bytes", Missing: "Run etcdperf doctor --data-dir DIR."}, result.Info, "is not known"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := result.New(result.KindDoctor)
			r.ExpectedDefrag = &c.e
			fs := expectedDefragStall(r)
			if len(fs) != 1 || fs[0].Severity != c.severity || !strings.Contains(fs[0].Title, c.words) {
				t.Fatalf("findings %+v, want one %s saying %q", fs, c.severity, c.words)
			}
			if !strings.Contains(fs[0].Recommendation, "followers first") || (c.e.Missing != "" && !strings.HasPrefix(fs[0].Recommendation, c.e.Missing)) {
				t.Errorf("recommendation %q", fs[0].Recommendation)
			}
		})
	}
}

// A 3s schedule that a history places at 1s evaluation points (a CI run
// of prom check: the compactions ended 3.1, 2.8, 3.1 and 3.0s apart, at
// points 3, 2, 4 and 3s apart) is a schedule: each end is known to within
// the step. The same ends from a log's timestamps are not, nor at points
// half the period apart, which cannot tell a schedule.
func TestCompactionSpikesAtAStep(t *testing.T) {
	ends := []float64{37, 40, 42, 46, 49}
	spikes := []float64{37, 40, 42, 46}
	for _, c := range []struct {
		resolution float64
		wanted     bool
	}{{1, true}, {0, false}, {1.5, false}} {
		cs := result.NewCompactions("m", "history", ends, nil, spikes, 1, c.resolution)
		r := logsResult(map[string]int64{"compaction": cs.Count}, nil, nil, 0)
		r.Logs.Compactions = []result.Compactions{cs}
		if fs := compactionSpikes(r); (len(fs) == 1) != c.wanted || cs.Period != 3 {
			t.Errorf("at a resolution of %gs: period %g, regular %v, findings %+v; want one: %v", c.resolution, cs.Period, cs.Regular, fs, c.wanted)
		}
	}
}
