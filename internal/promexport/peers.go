package promexport

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/prometheus/common/model"

	"github.com/etcdperf/etcdperf/internal/promscrape"
	"github.com/etcdperf/etcdperf/internal/result"
)

// PeerRTTs reads the members' round trips to each other over a period, as
// their own probers recorded them (etcd_network_peer_round_trip_time_seconds
// by instance and peer ID): over the period when it holds samples, else
// everything each member recorded since it started (etcd records one about
// every 30s). Peers are named by their instance through etcd_server_id;
// a peer that no scraped member claims keeps its ID.
func (c *Client) PeerRTTs(ctx context.Context, r Resolved, selector string) ([]result.PeerRTT, error) {
	b := builder{selector: selector}
	period := model.Duration(r.End.Sub(r.Start).Round(time.Millisecond)).String()
	instant := func(expr string) (model.Vector, error) {
		v, _, err := c.Instant(ctx, Query{Name: "peer_rtt", Expr: expr}, r.End)
		return v, err
	}
	ids, err := instant(fmt.Sprintf("max by (instance, server_id) (last_over_time(%s[%s]))", b.sel("etcd_server_id"), period))
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	for _, s := range ids {
		names[string(s.Metric["server_id"])] = string(s.Metric["instance"])
	}
	type pair struct{ from, to string }
	// per scope: the sum and the count of the round trips of each pair
	read := func(fn string) (map[pair][2]float64, error) {
		out := map[pair][2]float64{}
		for i, part := range []string{"_sum", "_count"} {
			v, err := instant(fmt.Sprintf("sum by (instance, To) (%s(%s[%s]))", fn, b.sel(promscrape.PeerRTTName+part), period))
			if err != nil {
				return nil, err
			}
			for _, s := range v {
				k := pair{string(s.Metric["instance"]), string(s.Metric["To"])}
				x := out[k]
				x[i] = float64(s.Value)
				out[k] = x
			}
		}
		return out, nil
	}
	all, err := read("last_over_time")
	if err != nil {
		return nil, err
	}
	run, err := read("increase")
	if err != nil {
		return nil, err
	}
	var out []result.PeerRTT
	for k, x := range all {
		scope := result.ScopeStart
		if y := run[k]; y[1] >= 1 {
			x, scope = y, result.ScopeRun
		}
		if x[1] < 1 {
			continue
		}
		to := k.to
		if n, ok := names[to]; ok {
			to = n
		}
		out = append(out, result.PeerRTT{From: k.from, To: to, Scope: scope, Count: x[1], Mean: x[0] / x[1]})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].From != out[j].From {
			return out[i].From < out[j].From
		}
		return out[i].To < out[j].To
	})
	return out, nil
}
