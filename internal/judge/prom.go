package judge

import (
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// promCriteria are the criteria `prom check` judges over the history, in
// order.
var promCriteria = []string{limits.WALFsyncP99, limits.BackendCommitP99, limits.LeaderChanges, limits.ProposalsFailed}

// PromCheck judges etcd's history in Prometheus: each criterion over the
// whole period for every member (the checks take the worst member), and at
// every evaluation point of the table, where breaches are grouped into
// time windows.
func PromCheck(r *result.Result, criteria []limits.Criterion) {
	p := r.Prom
	r.Checks = nil
	if p == nil || p.Table == nil {
		conclude(r)
		return
	}
	p.Breaches, p.Notes = nil, dropUnjudged(p.Notes)
	for _, id := range promCriteria {
		crit, ok := limits.Lookup(criteria, id)
		if !ok {
			continue
		}
		p.Breaches = append(p.Breaches, limits.Breaches(p.Table, crit, crit.Unit == limits.Count)...)
		ch, _, found := worstCheck(p.Members, crit)
		if !found {
			p.Notes = append(p.Notes, fmt.Sprintf("%s: no member has a value over the period (nothing observed)%s", id, notJudged))
			continue
		}
		r.Checks = append(r.Checks, ch)
	}
	p.Breaches = append(p.Breaches, limits.Breaches(p.Table, limits.HasLeader, false)...)
	for i, c := range p.Compactions {
		// each compaction ended within the step before its point
		nc := result.NewCompactions(c.Member, c.Source, c.Ends, c.Took, spikeStarts(p.Breaches, c.Member, time.Unix(0, 0)), p.Step, p.Step)
		nc.Ends, nc.Took = c.Ends, c.Took
		p.Compactions[i] = nc
	}
	conclude(r)
	r.Summary = promCheckSummary(r)
	promTuning(r)
}

func promCheckSummary(r *result.Result) string {
	p := r.Prom
	span := model.Duration(p.End.Sub(p.Start).Round(time.Second)).String()
	members := len(p.Members)
	var failed []string
	for _, c := range r.Checks {
		if c.Status == result.StatusFail {
			failed = append(failed, fmt.Sprintf("%s %s (limit %s %s)", c.Name, units.Value(c.Observed, c.Unit), c.Op, units.Value(c.Limit, c.Unit)))
		}
	}
	switch r.Verdict {
	case result.Fail:
		if len(failed) > 0 {
			return fmt.Sprintf("Over the %s period, %s on %d member(s): etcd was not healthy in this period.", span, strings.Join(failed, ", "), members)
		}
		return fmt.Sprintf("Over the %s period the history of %d member(s) shows critical problems: see the findings.", span, members)
	case result.Warn:
		return fmt.Sprintf("Over the %s period the %d member(s) stayed within the limits overall, with breaches in some windows: see the findings.", span, members)
	}
	return fmt.Sprintf("Over the %s period the %d member(s) stayed within every limit at every evaluation point.", span, members)
}
