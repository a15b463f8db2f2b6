package judge

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
)

func lat(p99 float64) *result.Latency {
	return &result.Latency{Count: 100, P99: p99, P50: p99 / 2, Bucketed: true, Resolution: 0.005}
}

// kubeStep is a step of a run through the API server: POST pods at the
// API server's p99 post, GET pods at 5ms, etcd's WAL fsync p99 at wal.
func kubeStep(n int, objects int64, post, wal float64, errs map[string]int64) result.KubeStep {
	return result.KubeStep{Step: n, Objects: objects, Calls: []result.KubeCall{
		{Resource: "pods", Verb: "GET", Scope: "resource", Client: lat(0.004), Server: lat(0.005)},
		{Resource: "pods", Verb: "POST", Scope: "resource", Client: lat(post), Server: lat(post), Errors: errs},
	}, WALFsync: lat(wal), BackendCommit: lat(wal)}
}

func kubeResult(steps ...result.KubeStep) *result.Result {
	r := result.New(result.KindScale)
	r.Kube = &result.Kube{Server: "https://127.0.0.1:6443", QPS: 100, Burst: 200, Planned: 3, Steps: steps}
	return r
}

func TestKubeJudgement(t *testing.T) {
	cases := []struct {
		name    string
		r       *result.Result
		verdict result.Verdict
		// title: the api_slo_broken finding's title has it ("" for none);
		// summary and advice: the summary and its recommendation have them.
		title, summary, advice string
	}{
		{name: "the SLO held", verdict: result.Pass,
			r:       kubeResult(kubeStep(1, 100, 0.02, 0.002, nil), kubeStep(2, 200, 0.03, 0.003, nil)),
			summary: "the SLO on API call latency held, worst POST pods p99 (API server) 30ms"},
		{name: "writes slower than 1s at step 2, etcd's WAL fsync over its limit from step 1", verdict: result.Fail,
			r:       kubeResult(kubeStep(1, 100, 0.3, 0.015, nil), kubeStep(2, 200, 1.5, 0.2, nil)),
			title:   "at 200 objects (step 2 of 3): POST pods p99 (API server) 1.5s (limit 1s)",
			summary: "etcd's WAL fsync p99 passed its limit at 100 objects (step 1)", advice: "the API server waited for etcd"},
		{name: "failed writes only, etcd's figures under its limits", verdict: result.Fail,
			r:     kubeResult(kubeStep(1, 100, 0.02, 0.002, map[string]int64{"Timeout: etcdserver: request timed out": 2})),
			title: "2 failed API calls (POST pods)", advice: "look at the API server itself"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := c.r
			Judge(r, limits.Table)
			if r.Verdict != c.verdict {
				t.Errorf("verdict %s, want %s: %s", r.Verdict, c.verdict, r.Summary)
			}
			var f *result.Finding
			for i := range r.Findings {
				if r.Findings[i].ID == "api_slo_broken" {
					f = &r.Findings[i]
				}
			}
			switch {
			case c.title == "" && f != nil:
				t.Errorf("a finding on a run that held the SLO: %s", f.Title)
			case c.title != "" && (f == nil || !strings.Contains(f.Title, c.title)):
				t.Errorf("no api_slo_broken finding with %q: %+v", c.title, r.Findings)
			case c.advice != "" && (f == nil || !strings.Contains(f.Recommendation, c.advice)):
				t.Errorf("the finding's advice lacks %q: %+v", c.advice, f)
			}
			if !strings.Contains(r.Summary, c.summary) || !strings.Contains(r.Summary, "QPS 100, burst 200") {
				t.Errorf("summary %q lacks %q or the client's QPS and burst", r.Summary, c.summary)
			}
			// A Result read back is judged the same.
			again := *r
			Again(&again)
			if again.Verdict != r.Verdict || again.Summary != r.Summary || len(again.Findings) != len(r.Findings) {
				t.Errorf("judged again: %s %q, first %s %q", again.Verdict, again.Summary, r.Verdict, r.Summary)
			}
		})
	}
	if why := KubeStopReason(kubeStep(2, 200, 1.5, 0.002, nil), limits.Table); !strings.Contains(why, "POST pods") || !strings.Contains(why, "step 2") {
		t.Errorf("stop reason of a step with 1.5s writes: %q", why)
	}
	if why := KubeStopReason(kubeStep(1, 100, 0.02, 0.002, nil), limits.Table); why != "" {
		t.Errorf("stop reason of a healthy step: %q", why)
	}
}
