package promexport

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/prometheus/common/model"

	"github.com/etcdperf/etcdperf/internal/result"
)

// Demand reads the cluster's write demand over the range: at every step,
// the most any member committed per second over the last window
// (etcd_server_proposals_committed_total: every member commits the same
// proposals) and applied as puts; its p99 over the range (a peak that
// recurs, not one spike) and its maximum. The window is the rate's
// (1 minute for "1-minute rates").
func (c *Client) Demand(ctx context.Context, r Resolved, selector string, window time.Duration) (*result.PromDemand, error) {
	b := builder{selector: selector, window: model.Duration(window).String()}
	d := &result.PromDemand{Window: window.Seconds()}
	for _, q := range []struct {
		name   string
		metric []string
		p99    *float64
		max    *float64
	}{
		{"proposals_committed_rate", []string{"etcd_server_proposals_committed_total"}, &d.ProposalsP99, &d.ProposalsMax},
		{"puts_rate", []string{"etcd_mvcc_put_total", "etcd_debugging_mvcc_put_total"}, &d.PutsP99, &d.PutsMax},
	} {
		var expr string
		for i, m := range q.metric {
			if i > 0 {
				expr += " or "
			}
			expr += fmt.Sprintf("max(rate(%s[%s]))", b.sel(m), b.window)
		}
		m, _, err := c.Range(ctx, Query{Name: q.name, Expr: expr, Unit: "ops/s"}, r)
		if err != nil {
			return nil, err
		}
		var vs []float64
		for _, s := range m {
			for _, p := range s.Values {
				if v := float64(p.Value); !math.IsNaN(v) && !math.IsInf(v, 0) {
					vs = append(vs, v)
				}
			}
		}
		if len(vs) == 0 {
			continue
		}
		sort.Float64s(vs)
		*q.p99, *q.max = nearestRank(vs, 0.99), vs[len(vs)-1]
		d.Points = max(d.Points, len(vs))
	}
	if d.Points == 0 {
		return nil, fmt.Errorf("%w at %s for etcd_server_proposals_committed_total%s between %s and %s: check the time range and that it scrapes etcd",
			ErrNoData, c.url, selectorNote(selector), r.Start.UTC().Format(time.RFC3339), r.End.UTC().Format(time.RFC3339))
	}
	return d, nil
}

// nearestRank is the q-quantile of sorted values by the nearest rank.
func nearestRank(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
