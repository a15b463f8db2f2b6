package judge

import (
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// kube judges a density run through the API server: each resource and
// verb's worst step against the SLO on API call latency, the failed
// calls, and etcd's disk histograms over the whole run beside them.
func kube(r *result.Result, criteria []limits.Criterion) {
	k := r.Kube
	r.Checks = nil
	etcdChecks(r, criteria)
	worst := map[string]int{}
	var failed float64
	failedTitle := ""
	for _, st := range k.Steps {
		for _, ch := range limits.KubeStepChecks(st, criteria) {
			if ch.Name == limits.APIErrors {
				// Failed calls add up over the run.
				failed += ch.Observed
				if ch.Observed > 0 && failedTitle == "" {
					failedTitle = ch.Title
				}
				continue
			}
			key := ch.Name + "\x00" + ch.Title
			if i, seen := worst[key]; !seen {
				worst[key] = len(r.Checks)
				r.Checks = append(r.Checks, ch)
			} else if worse(ch, r.Checks[i]) {
				r.Checks[i] = ch
			}
		}
	}
	if len(k.Steps) > 0 {
		if ch, ok := limits.Judge(criteria, limits.APIErrors, failed); ok {
			if failedTitle != "" {
				ch.Title = failedTitle
			}
			r.Checks = append(r.Checks, ch)
		}
	}
	conclude(r)
	r.Summary = kubeSummary(r)
}

// KubeStopReason says why a density run through the API server must not go
// on after step st: a call that broke the SLO or failed; "" to go on.
func KubeStopReason(st result.KubeStep, criteria []limits.Criterion) string {
	for _, ch := range limits.KubeStepChecks(st, criteria) {
		if ch.Status == result.StatusFail {
			return fmt.Sprintf("%s %s at %d objects (step %d) broke its limit (%s %s)",
				ch.Title, units.Value(ch.Observed, ch.Unit), st.Objects, st.Step, ch.Op, units.Value(ch.Limit, ch.Unit))
		}
	}
	return ""
}

func kubeSummary(r *result.Result) string {
	k := r.Kube
	if len(k.Steps) == 0 {
		return "no step completed."
	}
	last := k.Steps[len(k.Steps)-1]
	var s strings.Builder
	fmt.Fprintf(&s, "%d objects through the API server in %d of %d steps (%s, client-go QPS %g, burst %d)",
		last.Objects, len(k.Steps), k.Planned, units.Seconds(k.Seconds), k.QPS, k.Burst)
	if f, ok := diagnose.FirstKubeBreak(r); ok {
		fmt.Fprintf(&s, "; %s", f)
	} else {
		var worstMut, worstGet *result.Check
		for i := range r.Checks {
			c := &r.Checks[i]
			switch c.Name {
			case limits.APIMutatingP99:
				if worstMut == nil || c.Observed > worstMut.Observed {
					worstMut = c
				}
			case limits.APIGetP99:
				if worstGet == nil || c.Observed > worstGet.Observed {
					worstGet = c
				}
			}
		}
		s.WriteString("; the SLO on API call latency held")
		for _, c := range []*result.Check{worstMut, worstGet} {
			if c != nil {
				fmt.Fprintf(&s, ", worst %s %s", c.Title, diagnose.LatencyText(*c))
			}
		}
	}
	if k.Stopped != "" {
		fmt.Fprintf(&s, "; stopped: %s", k.Stopped)
	}
	s.WriteString(overLimits(etcdOnly(r.Checks)))
	s.WriteString(".")
	return s.String()
}

// etcdOnly keeps etcd's own checks (the API's are said apart).
func etcdOnly(checks []result.Check) []result.Check {
	var out []result.Check
	for _, c := range checks {
		if c.Name == limits.WALFsyncP99 || c.Name == limits.BackendCommitP99 {
			out = append(out, c)
		}
	}
	return out
}
