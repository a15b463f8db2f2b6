package promexport

import (
	"context"
	"fmt"
	"math"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/etcdperf/etcdperf/internal/result"
)

// Node-exporter's counters of a host's devices: writes completed and the
// time the device was busy (iostat's w/s and %util).
const (
	nodeWrites = "node_disk_writes_completed_total"
	nodeBusy   = "node_disk_io_time_seconds_total"
)

// NodeDisks reads what node-exporter says of the devices of the members'
// hosts over the range: for each member instance whose host part is the
// host part of exactly one node-exporter instance, the busiest device of
// that host (each point's rate over window). Where node-exporter's series
// are in Prometheus but a member's host cannot be joined to one of them,
// the notes say so; nothing is guessed. No node-exporter series: nil.
func (c *Client) NodeDisks(ctx context.Context, r Resolved, window time.Duration, members []string) (map[string]*result.PromDisk, []string, error) {
	period := model.Duration(max(r.End.Sub(r.Start), window).Round(time.Millisecond)).String()
	v, _, err := c.Instant(ctx, Query{Name: "node_disk_instances", Expr: fmt.Sprintf("count by (instance) (last_over_time(%s[%s]))", nodeWrites, period)}, r.End)
	if err != nil {
		return nil, nil, err
	}
	if len(v) == 0 {
		return nil, nil, nil
	}
	byHost := map[string][]string{}
	var nodes []string
	for _, s := range v {
		inst := string(s.Metric["instance"])
		nodes = append(nodes, inst)
		byHost[HostOf(inst)] = append(byHost[HostOf(inst)], inst)
	}
	sort.Strings(nodes)
	out := map[string]*result.PromDisk{}
	var notes, unjoined []string
	w := model.Duration(window).String()
	for _, m := range members {
		cands := byHost[HostOf(m)]
		switch len(cands) {
		case 0:
			unjoined = append(unjoined, m)
			continue
		case 1:
		default:
			sort.Strings(cands)
			notes = append(notes, fmt.Sprintf("member %s's host %s has %d node-exporter instances (%s): its device figures are not joined to it", m, HostOf(m), len(cands), strings.Join(cands, ", ")))
			continue
		}
		d, err := c.busiestDevice(ctx, r, w, cands[0])
		if err != nil {
			return nil, nil, err
		}
		if d != nil {
			out[m] = d
		}
	}
	if len(unjoined) > 0 {
		notes = append(notes, fmt.Sprintf("node-exporter's %s is in Prometheus for %s, but no instance of it is on the host of %s (the host part of the instance labels differs): "+
			"the devices of those members' hosts are not judged", nodeWrites, strings.Join(nodes, ", "), strings.Join(unjoined, ", ")))
	}
	return out, notes, nil
}

// busiestDevice is the device of node-exporter instance inst that was
// busy the longest over the range, with its writes/s and busy share at
// each point; nil when it reported none.
func (c *Client) busiestDevice(ctx context.Context, r Resolved, window, inst string) (*result.PromDisk, error) {
	sel := fmt.Sprintf("{instance=%q}", inst)
	series := map[string]map[string]model.Matrix{}
	for _, metric := range []string{nodeWrites, nodeBusy} {
		m, _, err := c.Range(ctx, Query{Name: metric, Expr: fmt.Sprintf("rate(%s%s[%s])", metric, sel, window)}, r)
		if err != nil {
			return nil, err
		}
		for _, s := range m {
			dev := string(s.Metric["device"])
			if series[dev] == nil {
				series[dev] = map[string]model.Matrix{}
			}
			series[dev][metric] = append(series[dev][metric], s)
		}
	}
	var best *result.PromDisk
	bestBusy := -1.0
	for dev, ms := range series {
		if len(ms[nodeWrites]) != 1 || len(ms[nodeBusy]) != 1 {
			continue
		}
		writes := map[model.Time]float64{}
		for _, p := range ms[nodeWrites][0].Values {
			writes[p.Timestamp] = float64(p.Value)
		}
		d := &result.PromDisk{Instance: inst, Device: dev, Devices: len(series)}
		var sum float64
		for _, p := range ms[nodeBusy][0].Values {
			wv, ok := writes[p.Timestamp]
			b := float64(p.Value)
			if !ok || math.IsNaN(b) || math.IsNaN(wv) {
				continue
			}
			d.Time = append(d.Time, float64(p.Timestamp)/1000)
			d.WriteIOPS = append(d.WriteIOPS, wv)
			d.Busy = append(d.Busy, min(1, b))
			sum += b
		}
		if len(d.Time) > 0 && (sum > bestBusy || (sum == bestBusy && dev < best.Device)) {
			best, bestBusy = d, sum
		}
	}
	return best, nil
}

// HostOf is the host part of an instance label ("10.0.0.1:2379" ->
// "10.0.0.1"), or the label itself when it has no port.
func HostOf(instance string) string {
	if h, _, err := net.SplitHostPort(instance); err == nil {
		return h
	}
	return instance
}
