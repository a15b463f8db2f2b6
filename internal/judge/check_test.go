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
