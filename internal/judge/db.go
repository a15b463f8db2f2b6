package judge

import (
	"fmt"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// DB judges a database file: its size against the backend quota
// (db_quota_used, as scale does), then the findings over it (near the
// quota, fragmented).
func DB(r *result.Result, criteria []limits.Criterion) {
	r.Checks = nil
	if r.DBMembers != nil {
		conclude(r)
		r.Summary = dbMembersSummary(r)
		return
	}
	if d := r.DB; d != nil && d.Quota > 0 {
		limits.Apply(&r.Checks, criteria, limits.DBQuotaUsed, d.Size/d.Quota, false)
	}
	conclude(r)
	r.Summary = dbSummary(r)
}

func dbSummary(r *result.Result) string {
	d := r.DB
	if d == nil {
		return ""
	}
	s := fmt.Sprintf("%d keys, %s live and %s of history in a %s database (%s in use, %.1f%% of its %s quota)",
		d.Totals.Keys, units.Bytes(d.Totals.LiveBytes), units.Bytes(d.Totals.HistoryBytes), units.Bytes(d.Size),
		units.Bytes(d.SizeInUse), 100*d.Size/d.Quota, units.Bytes(d.Quota))
	if len(d.Resources) > 0 {
		top := d.Resources[0]
		s += fmt.Sprintf("; most of it is %s (%s)", top.Name, units.Bytes(top.Bytes()))
	}
	for _, f := range r.Findings {
		if f.Severity == result.Critical || f.Severity == result.Warning {
			return s + ": " + f.Title
		}
	}
	return s
}

// dbMembersSummary says how many files were compared and the most severe
// finding.
func dbMembersSummary(r *result.Result) string {
	s := fmt.Sprintf("%d members' databases compared", len(r.DBMembers.Files))
	for _, sev := range []result.Severity{result.Critical, result.Info} {
		for _, f := range r.Findings {
			if f.Severity == sev {
				return s + ": " + f.Title
			}
		}
	}
	return s
}
