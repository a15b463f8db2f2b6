package diagnose

import (
	"fmt"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

func init() {
	Register(Rule{ID: "etcd_stopped_answering", Apply: etcdStoppedAnswering})
}

// etcdStoppedAnswering reports a load that ended because no request
// succeeded for the command timeout: the cluster was down or had no quorum.
func etcdStoppedAnswering(r *result.Result) []result.Finding {
	if r.Bench == nil || r.Bench.Stalled == nil {
		return nil
	}
	s := r.Bench.Stalled
	return []result.Finding{{
		ID:       "etcd_stopped_answering",
		Severity: result.Critical,
		Title: fmt.Sprintf("etcd stopped answering: no request succeeded for %s while %d failed, so the run stopped early after %s",
			units.Seconds(s.Timeout), s.Failed, units.Seconds(r.Bench.Seconds)),
		Evidence: []result.Evidence{
			{What: "seconds without a successful request", Observed: s.Timeout, Unit: "s", Source: "etcdperf's client"},
			{What: "requests that failed meanwhile", Observed: float64(s.Failed), Unit: "count", Source: "etcdperf's client"},
		},
		Recommendation: "The members were down, unreachable or without a quorum. Check that they run (systemctl status etcd, kubectl get pods), " +
			"their logs for the reason they stopped or lost their leader (etcdperf logs), and the network between them. " +
			"A leader's loss alone holds the requests forwarded to it for etcd's request timeout (5s + 2 x the election timeout: 7s at etcd's defaults): " +
			"if the logs show one election and the members answer again, run again with a --command-timeout above it.",
	}}
}
