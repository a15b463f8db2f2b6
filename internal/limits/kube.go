package limits

import (
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/internal/result"
)

// WithLimitsOf returns table with the limit, warning level and source of
// each of checks (as a Result judged with --limit holds them).
func WithLimitsOf(table []Criterion, checks []result.Check) []Criterion {
	ls := make([]result.Limit, len(checks))
	for i, c := range checks {
		ls[i] = result.Limit{Name: c.Name, Limit: c.Limit, Warn: c.Warn, Source: c.Source}
	}
	return WithLimits(table, ls)
}

// KubeCallCriterion is the SLO a call is judged by: mutating calls per
// resource and verb, reads per resource and scope; "" for a call the SLO
// leaves out (a cluster-wide list is not made).
func KubeCallCriterion(c result.KubeCall) string {
	switch {
	case c.Verb == "GET" && c.Scope == "resource":
		return APIGetP99
	case c.Verb == "LIST" && c.Scope == "namespace":
		return APIListP99
	case c.Verb == "POST" || c.Verb == "PUT" || c.Verb == "PATCH" || c.Verb == "DELETE":
		return APIMutatingP99
	}
	return ""
}

// KubeCallLatency is the latency a call is judged by: the API server's own
// histogram (what the SLO measures) when it saw the calls, else the one
// etcdperf measured; who says which.
func KubeCallLatency(c result.KubeCall) (l *result.Latency, who string) {
	if c.Server != nil && c.Server.Count > 0 {
		return c.Server, "API server"
	}
	if c.Client != nil && c.Client.Count > 0 {
		return c.Client, "etcdperf"
	}
	return nil, ""
}

// KubeStepChecks judges one step of a density run through the API server:
// each resource and verb's p99 against the SLO, and its failed calls.
func KubeStepChecks(st result.KubeStep, criteria []Criterion) []result.Check {
	var out []result.Check
	var failed int64
	var what []string
	for _, c := range st.Calls {
		id := KubeCallCriterion(c)
		if l, who := KubeCallLatency(c); id != "" && l != nil {
			if ch, ok := Judge(criteria, id, l.P99); ok {
				ch.Title = fmt.Sprintf("%s %s p99 (%s)", c.Verb, c.Resource, who)
				ch.Bound = l.Bucketed && l.Resolution > 0 && l.P99 <= l.Resolution
				out = append(out, ch)
			}
		}
		if n := result.ErrorTotal(c.Errors); n > 0 {
			failed += n
			what = append(what, fmt.Sprintf("%s %s", c.Verb, c.Resource))
		}
	}
	if ch, ok := Judge(criteria, APIErrors, float64(failed)); ok {
		if len(what) > 0 {
			ch.Title = "failed API calls (" + strings.Join(what, ", ") + ")"
		}
		out = append(out, ch)
	}
	return out
}
