package promexport

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/prometheus/common/model"

	"github.com/etcdperf/etcdperf/internal/promscrape"
	"github.com/etcdperf/etcdperf/internal/result"
)

// Upkeep reads each member's scheduled compactions and defragmentations
// over a period from their histograms (the same names in etcd 3.4 to
// 3.7): a compaction ended in the step before each evaluation point at
// which the count of etcd_debugging_mvcc_db_compaction_total_duration_milliseconds
// rose (its duration the rise of the sum over that of the count), read
// from the counters themselves rather than increase() over a window that
// a step shorter than two scrapes would leave empty; and the
// defragmentations' count, total and longest bucket over the period
// (etcd_disk_backend_defrag_duration_seconds). The compactions' latency
// spikes are set beside them by the judgement, from the breaches.
func (c *Client) Upkeep(ctx context.Context, r Resolved, selector string) ([]result.Compactions, []result.Defrags, error) {
	b := builder{selector: selector}
	series := func(part string) (map[string][]model.SamplePair, error) {
		m, _, err := c.Range(ctx, Query{Name: "compactions", Expr: fmt.Sprintf("sum by (instance) (%s)", b.sel(result.CompactionMetric+part))}, r)
		out := map[string][]model.SamplePair{}
		for _, s := range m {
			out[string(s.Metric["instance"])] = s.Values
		}
		return out, err
	}
	counts, err := series("_count")
	if err != nil {
		return nil, nil, err
	}
	sums, err := series("_sum")
	if err != nil {
		return nil, nil, err
	}
	var cs []result.Compactions
	for inst, ps := range counts {
		sum := map[model.Time]float64{}
		for _, p := range sums[inst] {
			sum[p.Timestamp] = float64(p.Value)
		}
		c := result.Compactions{Member: inst, Source: result.CompactionMetric}
		for i := 1; i < len(ps); i++ {
			n, ms := rise(float64(ps[i-1].Value), float64(ps[i].Value)), rise(sum[ps[i-1].Timestamp], sum[ps[i].Timestamp])
			if n < 1 {
				continue
			}
			c.Ends = append(c.Ends, float64(ps[i].Timestamp.Unix()))
			c.Took = append(c.Took, ms/n/1000)
		}
		if c.Count = int64(len(c.Ends)); c.Count > 0 {
			cs = append(cs, c)
		}
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].Member < cs[j].Member })
	ds, err := c.defrags(ctx, r, b)
	return cs, ds, err
}

// rise is a counter's rise between two readings; after a reset (the
// member restarted) the later reading is the rise.
func rise(prev, cur float64) float64 {
	if cur < prev {
		return cur
	}
	return cur - prev
}

// defrags reads each member's defragmentations over the period.
func (c *Client) defrags(ctx context.Context, r Resolved, b builder) ([]result.Defrags, error) {
	period := model.Duration(r.End.Sub(r.Start).Round(time.Second)).String()
	hs := map[string]*promscrape.Histogram{}
	get := func(inst string) *promscrape.Histogram {
		if hs[inst] == nil {
			hs[inst] = &promscrape.Histogram{}
		}
		return hs[inst]
	}
	for _, part := range []string{"_count", "_sum", "_bucket"} {
		by := "instance"
		if part == "_bucket" {
			by = "instance, le"
		}
		v, _, err := c.Instant(ctx, Query{Name: "defrags", Expr: fmt.Sprintf("sum by (%s) (increase(%s[%s]))", by, b.sel(result.DefragMetric+part), period)}, r.End)
		if err != nil {
			return nil, err
		}
		for _, s := range v {
			h, x := get(string(s.Metric["instance"])), float64(s.Value)
			switch part {
			case "_count":
				h.Count = math.Round(x)
			case "_sum":
				h.Sum = x
			default:
				le, err := strconv.ParseFloat(string(s.Metric["le"]), 64)
				if err == nil && !math.IsInf(le, 1) {
					h.Buckets = append(h.Buckets, promscrape.Bucket{UpperBound: le, Count: math.Round(x)})
				}
			}
		}
	}
	var out []result.Defrags
	for inst, h := range hs {
		if h.Count < 1 {
			continue
		}
		sort.Slice(h.Buckets, func(i, j int) bool { return h.Buckets[i].UpperBound < h.Buckets[j].UpperBound })
		out = append(out, promscrape.DefragsOf(inst, result.DefragMetric, *h))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Member < out[j].Member })
	return out, nil
}
