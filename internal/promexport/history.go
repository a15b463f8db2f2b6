package promexport

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/prometheus/common/model"

	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/promscrape"
	"github.com/etcdperf/etcdperf/internal/result"
)

// HasLeader is the pseudo-criterion of a member without a leader: it is
// judged over the history like the criteria of check.Table, but has no
// limit to change.
var HasLeader = check.Criterion{ID: "has_leader", Title: "member has a leader", Unit: check.Count, Op: check.AtLeast, Limit: 1,
	Source: "etcd metrics guide: etcd_server_has_leader 0 means the member cannot serve writes"}

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
		{id: check.WALFsyncP99, unit: "s",
			step:    func(b builder) string { return b.judgedQuantile(0.99, n.WALFsync[0]) },
			overall: func(b builder, p string) string { b.window = p; return b.quantile(0.99, n.WALFsync[0]) }},
		{id: check.BackendCommitP99, unit: "s",
			step:    func(b builder) string { return b.judgedQuantile(0.99, n.BackendCommit[0]) },
			overall: func(b builder, p string) string { b.window = p; return b.quantile(0.99, n.BackendCommit[0]) }},
		{id: check.LeaderChanges, unit: "count", counted: true,
			step: func(b builder) string { return b.increase(n.LeaderChanges[0]) }},
		{id: check.ProposalsFailed, unit: "count", counted: true,
			step: func(b builder) string { return b.increase(n.ProposalsFailed[0]) }},
		{id: HasLeader.ID, unit: "count",
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

// Breaches finds, per member (instance), the evaluation points of the
// query named c.ID in t that pass the criterion's warning level or limit,
// and groups consecutive ones into windows (see Breach).
func Breaches(t *result.PromTable, c check.Criterion, counted bool) []result.PromBreach {
	var out []result.PromBreach
	for j, col := range t.Columns {
		if col.Query != c.ID {
			continue
		}
		cells := make([]result.PromValue, len(t.Rows))
		for i, row := range t.Rows {
			cells[i] = row[j]
		}
		if b, ok := Breach(c, col.Labels["instance"], t.Time, cells, counted); ok {
			out = append(out, b)
		}
	}
	return out
}

// Breach judges one member's series, cells[i] at times[i] (unix seconds),
// against a criterion: the points that pass its warning level or limit,
// grouped into windows of consecutive ones. Points without a number (no
// sample, or NaN: no observation in the window) are not judged and end a
// window. Counted values are rounded first. It is false when no point
// passed.
func Breach(c check.Criterion, instance string, times []float64, cells []result.PromValue, counted bool) (result.PromBreach, bool) {
	b := result.PromBreach{Check: c.ID, Instance: instance, Limit: c.Limit, Unit: string(c.Unit), Status: result.StatusPass}
	var cur *result.PromWindow
	for i, cell := range cells {
		if !cell.Finite() {
			cur = nil
			continue
		}
		v := cell.V
		if counted {
			v = math.Round(v)
		}
		b.Total++
		st := check.Evaluate(c, v).Status
		if st == result.StatusPass {
			cur = nil
			continue
		}
		b.Points++
		if st == result.StatusFail {
			b.Failed++
		}
		at := time.UnixMilli(int64(math.Round(times[i] * 1000))).UTC()
		if b.Points == 1 || worse(c.Op, v, b.Worst) {
			b.Worst = v
		}
		b.Status = result.Status(result.Worse(result.Verdict(b.Status), result.Verdict(st)))
		if cur == nil {
			b.Windows = append(b.Windows, result.PromWindow{From: at, Worst: v, Status: st})
			cur = &b.Windows[len(b.Windows)-1]
		}
		cur.To = at
		cur.Points++
		if worse(c.Op, v, cur.Worst) {
			cur.Worst = v
		}
		cur.Status = result.Status(result.Worse(result.Verdict(cur.Status), result.Verdict(st)))
	}
	if b.Points == 0 {
		return b, false
	}
	b.Fraction = float64(b.Points) / float64(b.Total)
	return b, true
}

// worse reports whether v is further on the failing side than w.
func worse(op check.Op, v, w float64) bool {
	if op == check.AtLeast {
		return v < w
	}
	return v > w
}
