package judge

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/result"
)

// A run that ended early (Ctrl-C, an error) had no check fail, but it did
// not show that the cluster sustains the profile for the whole duration.
func TestCheckSummaryOfAnInterruptedRun(t *testing.T) {
	res := &result.Result{Kind: result.KindCheck,
		Bench:  &result.Bench{Throughput: 150, Latency: &result.Latency{Count: 300, P99: 0.005, Max: 0.007}},
		Perf:   &result.Perf{Profile: "s", TargetRate: 150, Reached: 1},
		Server: &result.Server{}}
	Judge(res, check.Table)
	if s := res.Summary; res.Verdict != result.Pass || !strings.HasSuffix(s, ": this cluster sustains the profile.") {
		t.Errorf("whole run: verdict %s, summary %q", res.Verdict, s)
	}
	res.Error = "interrupted"
	Judge(res, check.Table)
	if s := res.Summary; res.Verdict != result.Incomplete || strings.Contains(s, ": this cluster sustains") || !strings.Contains(s, "ended early") {
		t.Errorf("interrupted run: verdict %s, summary %q, want it to say the run ended early and claim nothing", res.Verdict, s)
	}
}

// A level set with --limit is recorded in the Result and holds when it is
// judged again (report, compare).
func TestLevelSetWithLimitHoldsAgain(t *testing.T) {
	res := &result.Result{Kind: result.KindCheck,
		Bench:  &result.Bench{Throughput: 150, Latency: &result.Latency{Count: 300, P99: 0.005, Max: 0.007}},
		Perf:   &result.Perf{Profile: "s", TargetRate: 150, Reached: 1},
		Server: &result.Server{},
		Host:   &result.Host{Hostname: "h", Summary: result.HostSample{CPUBusy: 0.5, Steal: 0.15}}}
	steal := func(r *result.Result) bool {
		for _, f := range r.Findings {
			if f.ID == "host_cpu_steal" {
				return true
			}
		}
		return false
	}
	Judge(res, check.Table)
	if !steal(res) || res.Limits != nil {
		t.Fatalf("by check.Table: findings %+v, limits %+v; want the steal warned of and no limits recorded", res.Findings, res.Limits)
	}
	criteria, err := check.Override(check.Table, []string{check.HostCPUSteal + "=20%"})
	if err != nil {
		t.Fatal(err)
	}
	Judge(res, criteria)
	if steal(res) || len(res.Limits) != 1 || res.Limits[0].Name != check.HostCPUSteal || res.Limits[0].Limit != 0.2 {
		t.Fatalf("by host_cpu_steal=20%%: findings %+v, limits %+v", res.Findings, res.Limits)
	}
	Again(res)
	if steal(res) || len(res.Limits) != 1 {
		t.Errorf("judged again: findings %+v, limits %+v; want the level set kept", res.Findings, res.Limits)
	}
}
