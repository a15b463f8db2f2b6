package diagnose

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// The rule over density runs through the API server.
func init() {
	Register(Rule{ID: "api_slo_broken", Apply: apiSLOBroken})
}

// kubeBreak is the first step of a run through the API server whose calls
// broke the SLO or failed, with the checks that did.
type kubeBreak struct {
	step   result.KubeStep
	failed []result.Check
}

func firstKubeBreak(r *result.Result) (kubeBreak, bool) {
	if r.Kube == nil {
		return kubeBreak{}, false
	}
	criteria := limits.WithLimitsOf(limits.Table, r.Checks)
	for _, st := range r.Kube.Steps {
		var failed []result.Check
		for _, ch := range limits.KubeStepChecks(st, criteria) {
			if ch.Status == result.StatusFail {
				failed = append(failed, ch)
			}
		}
		if len(failed) > 0 {
			return kubeBreak{st, failed}, true
		}
	}
	return kubeBreak{}, false
}

// etcdBreak is the first step whose etcd WAL fsync or backend commit p99
// passed its limit, with the check that did.
func etcdBreak(r *result.Result) (result.KubeStep, result.Check, bool) {
	for _, st := range r.Kube.Steps {
		if chs := etcdStepChecks(r, st); len(chs) > 0 && chs[0].Status == result.StatusFail {
			return st, chs[0], true
		}
	}
	return result.KubeStep{}, result.Check{}, false
}

// etcdStepChecks judges etcd's histograms over one step, the failed first.
func etcdStepChecks(r *result.Result, st result.KubeStep) []result.Check {
	var out []result.Check
	criteria := limits.WithLimitsOf(limits.Table, r.Checks)
	for _, h := range []struct {
		id string
		l  *result.Latency
	}{{limits.WALFsyncP99, st.WALFsync}, {limits.BackendCommitP99, st.BackendCommit}} {
		if h.l != nil && h.l.Count > 0 {
			limits.Apply(&out, criteria, h.id, h.l.P99, h.l.AtFloor())
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Status == result.StatusFail && out[j].Status != result.StatusFail })
	return out
}

func breakWords(chs []result.Check) string {
	var parts []string
	for _, c := range chs {
		if c.Name == limits.APIErrors {
			parts = append(parts, fmt.Sprintf("%.0f %s", c.Observed, c.Title))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s (limit %s)", c.Title, LatencyText(c), units.Value(c.Limit, c.Unit)))
	}
	return strings.Join(parts, ", ")
}

// FirstKubeBreak says, for a run through the API server, when the SLO on
// API call latency broke first and when etcd's own limits did, in words;
// false when the SLO held.
func FirstKubeBreak(r *result.Result) (string, bool) {
	b, ok := firstKubeBreak(r)
	if !ok {
		return "", false
	}
	s := fmt.Sprintf("the SLO on API call latency broke first at %d objects (step %d): %s", b.step.Objects, b.step.Step, breakWords(b.failed))
	if st, c, ok := etcdBreak(r); ok {
		s += fmt.Sprintf("; etcd's %s passed its limit at %d objects (step %d): %s",
			symptomNames[c.Name], st.Objects, st.Step, LatencyText(c))
	}
	return s, true
}

func apiSLOBroken(r *result.Result) []result.Finding {
	b, ok := firstKubeBreak(r)
	if !ok {
		return nil
	}
	f := result.Finding{
		ID:       "api_slo_broken",
		Severity: result.Critical,
		Title: fmt.Sprintf("Kubernetes API calls broke the SLO on API call latency at %d objects (step %d of %d): %s",
			b.step.Objects, b.step.Step, r.Kube.Planned, breakWords(b.failed)),
	}
	for _, c := range b.failed {
		f.Evidence = append(f.Evidence, EvidenceOf(c))
	}
	for _, c := range b.step.Calls {
		if len(c.Errors) > 0 {
			top, n := result.TopError(c.Errors)
			f.Evidence = append(f.Evidence, result.Evidence{What: fmt.Sprintf("%s %s failed: %s", c.Verb, c.Resource, top), Observed: float64(n), Unit: "count", Source: "the API server's answers"})
		}
	}
	if e := slowestEtcdRequest(r.Kube, b.step); e != nil {
		f.Evidence = append(f.Evidence, result.Evidence{What: fmt.Sprintf("the API server's %s of %s in etcd, p99 over the step", e.Operation, e.Type),
			Observed: e.Latency.P99, Unit: "s", Source: "etcd_request_duration_seconds"})
	}
	etcdChs := etcdStepChecks(r, b.step)
	for _, c := range etcdChs {
		e := EvidenceOf(c)
		e.What = fmt.Sprintf("etcd's %s over step %d", symptomNames[c.Name], b.step.Step)
		f.Evidence = append(f.Evidence, e)
	}
	switch {
	case len(etcdChs) > 0 && etcdChs[0].Status == result.StatusFail:
		f.Recommendation = "etcd's own write path was slow in the same step: the API server waited for etcd. " +
			"The member findings name the member and whether its disk or its CPU; fix that first (etcd's hardware guide), then run again."
	case len(etcdChs) > 0:
		f.Recommendation = "etcd's WAL fsync and backend commit stayed under their limits in that step: look at the API server itself " +
			"(its CPU and memory, admission webhooks, API Priority and Fairness queues: apiserver_flowcontrol_request_wait_duration_seconds) " +
			"and at the network between it and etcd (etcd_request_duration_seconds against etcd's own figures)."
	default:
		f.Recommendation = "etcd's own figures were not read: run again with --endpoints of the etcd behind this API server " +
			"(and its certificates) to see whether etcd's disk or CPU explains the latency."
	}
	return []result.Finding{f}
}

// slowestEtcdRequest is the API server's etcd request of the run's
// resources with the highest p99 over the step.
func slowestEtcdRequest(k *result.Kube, st result.KubeStep) *result.KubeEtcdCall {
	var worst *result.KubeEtcdCall
	for i := range st.Etcd {
		e := &st.Etcd[i]
		if !slices.ContainsFunc(k.Kinds, func(kk result.KubeKind) bool { return kk.Resource == e.Type }) {
			continue
		}
		if e.Latency != nil && e.Latency.Count > 0 && (worst == nil || e.Latency.P99 > worst.Latency.P99) {
			worst = e
		}
	}
	return worst
}
