package promexport

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/prometheus/common/model"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/promscrape"
	"github.com/etcdperf/etcdperf/internal/result"
)

// signal is one thing `prom check` judges: its query per evaluation point
// (over the rate window), also run over the whole period as the window
// unless overall says otherwise.
type signal struct {
	id      string
	unit    string
	step    func(b builder) string
	overall func(b builder, period string) string // nil: step over the period
	// counted signals are counts: their values are rounded, as
	// increase() extrapolates (1.02 leader changes is one).
	counted bool
}

// overallQuery is the signal's query over the whole period.
func (s signal) overallQuery(b builder, period string) string {
	if s.overall != nil {
		return s.overall(b, period)
	}
	b.window = period
	return s.step(b)
}

func historySignals() []signal {
	n := promscrape.EtcdNames
	return []signal{
		{id: limits.WALFsyncP99, unit: "s",
			step:    func(b builder) string { return b.judgedQuantile(0.99, n.WALFsync[0]) },
			overall: func(b builder, p string) string { b.window = p; return b.quantile(0.99, n.WALFsync[0]) }},
		{id: limits.BackendCommitP99, unit: "s",
			step:    func(b builder) string { return b.judgedQuantile(0.99, n.BackendCommit[0]) },
			overall: func(b builder, p string) string { b.window = p; return b.quantile(0.99, n.BackendCommit[0]) }},
		{id: limits.LeaderChanges, unit: "count", counted: true,
			step: func(b builder) string { return b.increase(n.LeaderChanges[0]) }},
		{id: limits.ProposalsFailed, unit: "count", counted: true,
			step: func(b builder) string { return b.increase(n.ProposalsFailed[0]) }},
		{id: limits.HasLeader.ID, unit: "count",
			step: func(b builder) string { return "min by (instance) (" + b.oneOf(n.HasLeader) + ")" },
			overall: func(b builder, p string) string {
				return fmt.Sprintf("min by (instance) (min_over_time(%s[%s]))", b.sel(n.HasLeader[0]), p)
			}},
		{id: "slow_applies", unit: "count", counted: true,
			step: func(b builder) string { return b.increase(n.SlowApplies[0]) }},
		{id: "heartbeat_failures", unit: "count", counted: true,
			step: func(b builder) string { return b.increase(n.HeartbeatFailures[0]) }},
	}
}

// DefaultWindow is the rate window of the queries when none is given, as
// etcd's own alerting rules use.
const DefaultWindow = 5 * time.Minute

// WindowFor returns the rate window to use: w when given, otherwise
// DefaultWindow or the step when that is longer, so that the windows of
// consecutive points cover the whole period.
func WindowFor(w, step time.Duration) time.Duration {
	if w > 0 {
		return w
	}
	return max(DefaultWindow, step)
}

// HistoryOptions say what history `prom check` reads.
type HistoryOptions struct {
	Range Resolved
	// Window is the range of rate() and increase() at each evaluation
	// point (5m by default, as etcd's alerting rules use).
	Window   time.Duration
	Selector string
}

// History is etcd's history over a period, per member: the signals at
// every evaluation point (as a table) and over the whole period.
type History struct {
	Answers []Answer
	Members []result.PromMember
	// Counted names the signals whose values are counts.
	Counted map[string]bool
}

// HistoryQueries returns the per-point queries `prom check` runs, named by
// signal (criterion ID).
func HistoryQueries(selector string, window time.Duration) []Query {
	b := builder{selector: selector, window: model.Duration(window).String()}
	var qs []Query
	for _, s := range historySignals() {
		qs = append(qs, Query{Name: s.id, Expr: s.step(b), Unit: s.unit})
	}
	return qs
}

// ReadHistory queries the members, then each signal at every evaluation
// point and over the whole period.
func (c *Client) ReadHistory(ctx context.Context, o HistoryOptions) (*History, error) {
	if o.Window <= 0 {
		return nil, fmt.Errorf("the rate window must be positive")
	}
	r := o.Range
	b := builder{selector: o.Selector, window: model.Duration(o.Window).String()}
	period := model.Duration(r.End.Sub(r.Start).Round(time.Millisecond)).String()
	membersQ := Query{Name: "members", Expr: fmt.Sprintf("max by (instance) (max_over_time(%s[%s]))", b.sel(promscrape.EtcdNames.HasLeader[0]), period)}
	mv, _, err := c.Instant(ctx, membersQ, r.End)
	if err != nil {
		return nil, err
	}
	if len(mv) == 0 {
		return nil, fmt.Errorf("%w at %s for any etcd member (no %s series%s) between %s and %s: check the time range and that it scrapes etcd",
			ErrNoData, c.url, promscrape.EtcdNames.HasLeader[0], selectorNote(o.Selector), r.Start.UTC().Format(time.RFC3339), r.End.UTC().Format(time.RFC3339))
	}
	h := &History{Counted: map[string]bool{}}
	byInstance := map[string]*result.PromMember{}
	for _, s := range mv {
		inst := string(s.Metric["instance"])
		h.Members = append(h.Members, result.PromMember{Instance: inst, Observed: map[string]float64{}})
	}
	sort.Slice(h.Members, func(i, j int) bool { return h.Members[i].Instance < h.Members[j].Instance })
	for i := range h.Members {
		byInstance[h.Members[i].Instance] = &h.Members[i]
	}
	for _, s := range historySignals() {
		h.Counted[s.id] = s.counted
		q := Query{Name: s.id, Expr: s.step(b), Unit: s.unit}
		m, warns, err := c.Range(ctx, q, r)
		if err != nil {
			return nil, err
		}
		h.Answers = append(h.Answers, Answer{Query: q, Matrix: m, Warnings: warns})
		oq := Query{Name: s.id + "_overall", Expr: s.overallQuery(b, period), Unit: s.unit}
		v, _, err := c.Instant(ctx, oq, r.End)
		if err != nil {
			return nil, err
		}
		for _, smp := range v {
			mem, ok := byInstance[string(smp.Metric["instance"])]
			val := float64(smp.Value)
			if !ok || math.IsNaN(val) || math.IsInf(val, 0) {
				continue
			}
			if s.counted {
				val = math.Round(val)
			}
			mem.Observed[s.id] = val
		}
	}
	return h, nil
}

func selectorNote(sel string) string {
	if sel == "" {
		return ""
	}
	return " matching {" + sel + "}"
}
