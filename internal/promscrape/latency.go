package promscrape

import (
	"github.com/etcdperf/etcdperf/internal/result"
)

// Latency summarises a (delta) histogram of seconds as a Latency. The
// quantiles are interpolated as PromQL does; Resolution is the lowest
// bucket's bound, and a quantile equal to it means "at most this". Min, max
// and stddev are unknown from buckets and left zero; Bucketed says so.
func (h Histogram) Latency() result.Latency {
	l := result.Latency{Count: int64(h.Count), Bucketed: true}
	if len(h.Buckets) > 0 {
		l.Resolution = h.Buckets[0].UpperBound
	}
	if h.Count == 0 {
		return l
	}
	l.Mean = h.Sum / h.Count
	q := func(p float64) float64 { v, _, _ := h.Quantile(p); return v }
	l.P50, l.P90, l.P99, l.P999, l.P9999 = q(0.5), q(0.9), q(0.99), q(0.999), q(0.9999)
	return l
}

// AllAtFloor reports whether every observation fell in the lowest bucket,
// i.e. the histogram can only say "all below its first bound".
func (h Histogram) AllAtFloor() bool {
	return h.Count > 0 && len(h.Buckets) > 0 && h.Buckets[0].Count >= h.Count
}
