package judge

import (
	"strings"

	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// Func judges one kind of Result in place by the limits of criteria.
type Func func(r *result.Result, criteria []limits.Criterion)

// judges holds the judgement of every kind that has one.
var judges = map[string]Func{
	result.KindDisk:      Disk,
	result.KindBench:     Bench,
	result.KindCheck:     Check,
	result.KindDatascale: Datascale,
	result.KindDoctor:    Doctor,
	result.KindLogs:      Logs,
	result.KindMetrics:   Metrics,
	result.KindPromCheck: PromCheck,
	result.KindScale:     Scale,
	result.KindDB:        DB,
}

// Judge judges r by its kind's judgement: checks, findings, verdict and
// summary replace whatever r held. A kind without a judgement (an export,
// a discovery) gets the findings its data supports. A run that ended
// early is incomplete whatever its checks say.
func Judge(r *result.Result, criteria []limits.Criterion) {
	r.Limits = limits.Changed(criteria)
	if f, ok := judges[r.Kind]; ok {
		f(r, criteria)
	}
	r.MarkIncomplete()
}

// Again judges r again by the limits it was judged by (Criteria).
func Again(r *result.Result) { Judge(r, Criteria(r)) }

// Criteria are the limits rs were judged by: limits.Table with the limit,
// warning level and source of each check and level they (or a run in
// them) hold, so that limits set with --limit hold when a Result is
// judged again.
func Criteria(rs ...*result.Result) []limits.Criterion {
	out := limits.Table
	var walk func(r *result.Result)
	walk = func(r *result.Result) {
		out = limits.WithLimits(limits.WithLimitsOf(out, r.Checks), r.Limits)
		for i := range r.Runs {
			walk(&r.Runs[i])
		}
	}
	for _, r := range rs {
		walk(r)
	}
	return out
}

// conclude adds the findings and the verdict to r, whose checks are set.
func conclude(r *result.Result) {
	r.Findings = diagnose.Run(r)
	r.Verdict = diagnose.Verdict(r.Checks, r.Findings)
}

// overLimits lists the failed checks for a summary ("; X over its limit,
// Y over its limit"), "" when none failed.
func overLimits(checks []result.Check) string {
	var over []string
	for _, c := range checks {
		if c.Status == result.StatusFail {
			over = append(over, c.Title+" over its limit")
		}
	}
	if len(over) == 0 {
		return ""
	}
	return "; " + strings.Join(over, ", ")
}

// notJudged marks the notes a judgement adds about a criterion it could
// not judge; judging again replaces them.
const notJudged = ", not judged"

// dropUnjudged removes the notes a previous judgement added.
func dropUnjudged(notes []string) []string {
	var out []string
	for _, n := range notes {
		if !strings.HasSuffix(n, notJudged) {
			out = append(out, n)
		}
	}
	return out
}

// quantile prints a quantile of l, "<= 1ms" in etcd's lowest bucket.
func quantile(l *result.Latency, v float64) string {
	return units.Quantile(v, l.Resolution, l.Bucketed)
}
