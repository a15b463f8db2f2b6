package judge

import (
	"strconv"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
)

// A run that ended early (Ctrl-C, an error) had no check fail, but it did
// not show that the cluster sustains the profile for the whole duration.
func TestCheckSummaryOfAnInterruptedRun(t *testing.T) {
	res := &result.Result{Kind: result.KindCheck,
		Bench:  &result.Bench{Throughput: 150, Latency: &result.Latency{Count: 300, P99: 0.005, Max: 0.007}},
		Perf:   &result.Perf{Profile: "s", TargetRate: 150, Reached: 1},
		Server: &result.Server{}}
	Judge(res, limits.Table)
	if s := res.Summary; res.Verdict != result.Pass || !strings.HasSuffix(s, ": this cluster sustains the profile.") {
		t.Errorf("whole run: verdict %s, summary %q", res.Verdict, s)
	}
	res.Error = "interrupted"
	Judge(res, limits.Table)
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
	Judge(res, limits.Table)
	if !steal(res) || res.Limits != nil {
		t.Fatalf("by limits.Table: findings %+v, limits %+v; want the steal noted and no limits recorded", res.Findings, res.Limits)
	}
	criteria, err := limits.Override(limits.Table, []string{limits.HostCPUSteal + "=20%"})
	if err != nil {
		t.Fatal(err)
	}
	Judge(res, criteria)
	if steal(res) || len(res.Limits) != 1 || res.Limits[0].Name != limits.HostCPUSteal || res.Limits[0].Limit != 0.2 {
		t.Fatalf("by host_cpu_steal=20%%: findings %+v, limits %+v", res.Findings, res.Limits)
	}
	Again(res)
	if steal(res) || len(res.Limits) != 1 {
		t.Errorf("judged again: findings %+v, limits %+v; want the level set kept", res.Findings, res.Limits)
	}
}

// A level set with --limit reaches the findings of every run of a doctor
// Result, its load under noise included (judged through its target), and
// a Result judged again keeps it there.
func TestDoctorLevelsReachNoiseRun(t *testing.T) {
	res, err := result.ReadFile("../render/testdata/doctor-noise.json")
	if err != nil {
		t.Fatal(err)
	}
	noisy := func() *result.Result { return &res.Runs[0].Runs[0] }
	busy := func() bool {
		for _, f := range noisy().Findings {
			if f.ID == "device_busy" {
				return true
			}
		}
		return false
	}
	Judge(res, limits.Table)
	if !busy() {
		t.Fatalf("by limits.Table: the noisy run's findings %+v; want device_busy (its device 84%% busy)", noisy().Findings)
	}
	criteria, err := limits.Override(limits.Table, []string{limits.DeviceBusy + "=90%"})
	if err != nil {
		t.Fatal(err)
	}
	Judge(res, criteria)
	if busy() || len(noisy().Limits) != 1 || noisy().Limits[0].Name != limits.DeviceBusy {
		t.Fatalf("by device_busy=90%%: the noisy run's findings %+v, limits %+v", noisy().Findings, noisy().Limits)
	}
	Again(res)
	if busy() {
		t.Errorf("judged again: the noisy run's findings %+v; want the level set kept", noisy().Findings)
	}
}

// A source that differs from limits.Table's, as a Result of an earlier
// version quotes it, is no level set with --limit.
func TestChangedIgnoresOldSources(t *testing.T) {
	old := append([]limits.Criterion(nil), limits.Table...)
	old[0].Source = "an earlier wording"
	if ch := limits.Changed(old); len(ch) != 0 {
		t.Errorf("changed %+v; want none", ch)
	}
	set, err := limits.Override(limits.Table, []string{old[0].ID + "=" + strconv.FormatFloat(old[0].Limit, 'g', -1, 64)})
	if err != nil {
		t.Fatal(err)
	}
	if ch := limits.Changed(set); len(ch) != 1 || ch[0].Name != old[0].ID {
		t.Errorf("set to its own value with --limit: changed %+v; want it recorded", ch)
	}
}
