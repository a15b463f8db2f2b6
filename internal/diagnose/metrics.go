package diagnose

import (
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// The rules of `etcdperf metrics`: they read each member's signals per
// interval and over the run (r.Metrics). The breaches, slow applies and
// late heartbeats are told as `prom check` tells them from Prometheus'
// history.
func init() {
	Register(
		Rule{ID: "metrics_unreachable", Apply: metricsUnreachable},
		Rule{ID: "metrics_breaches", Apply: func(r *result.Result) []result.Finding {
			if r.Metrics == nil {
				return nil
			}
			step := seconds(r.Metrics.Interval)
			return breachFindings(r, r.Metrics.Breaches, "metrics_", step, step)
		}},
		Rule{ID: "metrics_slow_applies", Apply: func(r *result.Result) []result.Finding {
			if r.Metrics == nil {
				return nil
			}
			return slowApplies(etcdMembers(r), "metrics_slow_applies")
		}},
		Rule{ID: "metrics_heartbeat_failures", Apply: func(r *result.Result) []result.Finding {
			if r.Metrics == nil {
				return nil
			}
			return heartbeatFailures(etcdMembers(r), "metrics_heartbeat_failures")
		}},
		Rule{ID: "metrics_slow_read_indexes", Apply: metricsSlowReadIndexes},
	)
}

// metricsUnreachable reports the members that did not answer a scrape: a
// member still silent at the end is critical (the cluster has lost it, or
// this machine cannot reach it), one that came back is a warning.
func metricsUnreachable(r *result.Result) []result.Finding {
	m := r.Metrics
	if m == nil {
		return nil
	}
	f := result.Finding{ID: "metrics_unreachable", Severity: result.Warning}
	var names []string
	never := false
	for _, mm := range m.Members {
		if mm.Unreachable == 0 {
			continue
		}
		names = append(names, mm.Name)
		first, last, lastErr := -1.0, -1.0, ""
		for _, s := range mm.Series {
			if !s.Up() {
				if first < 0 {
					first = s.T
				}
				lastErr = s.Error
			} else {
				last = s.T
			}
		}
		down := len(mm.Series) > 0 && !mm.Series[len(mm.Series)-1].Up()
		what := fmt.Sprintf("%s (%s) did not answer %d of %d scrapes, the first at %s", mm.Name, mm.MetricsURL, mm.Unreachable, len(mm.Series), units.Seconds(first))
		switch {
		case mm.Overall == nil:
			what += "; it never answered"
			never = true
		case down && last < 0:
			what += "; it answered only the first scrape, before the intervals"
		case down:
			what += fmt.Sprintf("; its last answer was at %s, none since", units.Seconds(last))
		default:
			what += fmt.Sprintf("; it came back (last answer at %s)", units.Seconds(last))
		}
		if down {
			f.Severity = result.Critical
		}
		f.Evidence = append(f.Evidence, result.Evidence{What: what + "; last error: " + lastErr})
	}
	if len(names) == 0 {
		return nil
	}
	f.Title = fmt.Sprintf("%s did not answer /metrics in some intervals", strings.Join(names, ", "))
	if f.Severity == result.Critical {
		f.Title = fmt.Sprintf("%s stopped answering /metrics and had not come back at the end of the run", strings.Join(names, ", "))
	}
	f.Recommendation = "A member that does not answer is down, cut off from here, or too busy to serve: check its process, its log " +
		"(etcdperf logs) and `etcdctl endpoint health`. A 3-member cluster without one member has no fault tolerance left."
	if never {
		f.Recommendation += " A member that never answered may advertise a client URL this machine cannot reach: check --advertise-client-urls."
	}
	return []result.Finding{f}
}

// metricsSlowReadIndexes warns about linearizable reads that waited too
// long for the leader's read index.
func metricsSlowReadIndexes(r *result.Result) []result.Finding {
	if r.Metrics == nil {
		return nil
	}
	total, who := memberTotals(etcdMembers(r), func(m Member) float64 { return m.SlowReadIndexes })
	if total == 0 {
		return nil
	}
	return []result.Finding{{
		ID:       "metrics_slow_read_indexes",
		Severity: result.Warning,
		Title:    fmt.Sprintf("%g linearizable reads waited too long for the leader's read index in this period", total),
		Evidence: []result.Evidence{{What: "increase of etcd_server_slow_read_indexes_total over the period (" + strings.Join(who, ", ") + ")", Observed: total, Unit: "count"}},
		Recommendation: "A read index is the leader confirming it still leads before a linearizable read: it is slow when the leader is " +
			"(WAL fsync, CPU) or when the network to the followers is (peer round trip). Serializable reads do not wait for it.",
	}}
}
