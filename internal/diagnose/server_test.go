package diagnose

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/result"
)

func benchResult(walP99, commitP99 float64) *result.Result {
	r := result.New("bench")
	r.Env = &result.Env{Dir: "/data/etcdperf-x", FSType: "ext4", Device: "vda"}
	r.Target = &result.Target{Kind: "embedded"}
	r.Bench = &result.Bench{Ops: 100, Seconds: 1}
	r.Server = &result.Server{Members: []result.MemberServer{{Name: "m0", WALFsync: &result.Latency{Count: 10, P99: walP99}}}}
	for id, v := range map[string]float64{check.WALFsyncP99: walP99, check.BackendCommitP99: commitP99} {
		c, _ := check.Lookup(check.Table, id)
		r.Checks = append(r.Checks, check.Evaluate(c, v))
	}
	return r
}

func TestServerDiskSlow(t *testing.T) {
	cases := []struct {
		name     string
		r        *result.Result
		severity result.Severity // "" for no finding
		inTitle  []string
	}{
		{"fast", benchResult(0.002, 0.005), "", nil},
		{"slow WAL", benchResult(0.031, 0.012), result.Critical, []string{"point to the disk", "31ms", "/data/etcdperf-x (ext4 on vda)"}},
		{"slow commit only", benchResult(0.004, 0.060), result.Critical, []string{"backend commit p99 is 60ms"}},
		{"close", benchResult(0.009, 0.005), result.Warning, []string{"little headroom"}},
		// check and doctor judge their loads with rules that tell the
		// disk from the CPUs; this rule stays out of them.
		{"a check perf load", func() *result.Result { r := benchResult(0.031, 0.012); r.Perf = &result.Perf{}; return r }(), "", nil},
		// tmpfs: an fsync does no I/O, a slow one waited for a CPU.
		{"in memory", func() *result.Result {
			r := benchResult(0.031, 0.012)
			r.Env.Volatile, r.Host = true, &result.Host{}
			return r
		}(), "", nil},
		// saturated CPUs while the device flushed in a tenth of the p99
		{"starved CPUs", func() *result.Result {
			r := benchResult(0.031, 0.012)
			r.Host = &result.Host{Device: "vda"}
			r.Host.Summary.CPUBusy, r.Host.Summary.FlushIOPS, r.Host.Summary.FlushAwait = 0.99, 100, 0.001
			return r
		}(), "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []result.Finding
			for _, f := range Run(c.r) {
				if f.ID == "server_disk_slow" {
					got = append(got, f)
				}
			}
			if c.severity == "" {
				if len(got) != 0 {
					t.Errorf("unexpected finding %+v", got)
				}
				return
			}
			if len(got) != 1 || got[0].Severity != c.severity || len(got[0].Evidence) == 0 || got[0].Recommendation == "" {
				t.Fatalf("findings %+v, want one %s with evidence", got, c.severity)
			}
			for _, s := range c.inTitle {
				if !strings.Contains(got[0].Title, s) {
					t.Errorf("title %q lacks %q", got[0].Title, s)
				}
			}
		})
	}
	// A Prometheus history has its own rules: no server section, no finding.
	r := benchResult(0.031, 0.012)
	r.Server = nil
	for _, f := range Run(r) {
		if f.ID == "server_disk_slow" {
			t.Errorf("finding without a server section: %+v", f)
		}
	}
}

func TestEtcdStoppedAnswering(t *testing.T) {
	r := benchResult(0.002, 0.005)
	if got := ids(Run(r)); got["etcd_stopped_answering"] != "" {
		t.Errorf("finding without a stall: %v", got)
	}
	r.Bench.Stalled = &result.Stall{Timeout: 2, Failed: 7}
	fs := Run(r)
	if got := ids(fs); got["etcd_stopped_answering"] != result.Critical || Verdict(r.Checks, fs) != result.Fail {
		t.Errorf("findings %v verdict %s, want a critical etcd_stopped_answering and fail", got, Verdict(r.Checks, fs))
	}
}
