// Package promscrape reads Prometheus text exposition (etcd's /metrics) and
// turns histogram deltas between two scrapes into latency summaries.
package promscrape

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Snapshot is one scrape: metric families by name.
type Snapshot map[string]*dto.MetricFamily

// maxBody bounds what a scrape reads; etcd's /metrics is ~100-300 KiB.
const maxBody = 64 << 20

// Parse reads the Prometheus text format. More than 64 MiB is refused
// rather than cut (a cut could parse as a partial scrape).
func Parse(r io.Reader) (Snapshot, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	lr := &io.LimitedReader{R: r, N: maxBody + 1}
	fams, err := p.TextToMetricFamilies(lr)
	if lr.N == 0 {
		return nil, fmt.Errorf("parse metrics: more than %d MiB, not etcd's /metrics (a few hundred KiB): is the URL right?", maxBody>>20)
	}
	if err != nil {
		return nil, fmt.Errorf("parse metrics (is this etcd's /metrics?): %w", err)
	}
	return Snapshot(fams), nil
}

// Scrape fetches url (e.g. http://127.0.0.1:2379/metrics) with client and
// parses it.
func Scrape(ctx context.Context, client *http.Client, url string) (Snapshot, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape %s: HTTP %s", url, resp.Status)
	}
	s, err := Parse(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	return s, nil
}

// Labels selects series by exact label values; nil selects all. An empty
// value selects the series without that label, as in PromQL.
type Labels map[string]string

func (l Labels) match(m *dto.Metric) bool {
	for k, v := range l {
		got := ""
		for _, lp := range m.GetLabel() {
			if lp.GetName() == k {
				got = lp.GetValue()
				break
			}
		}
		if got != v {
			return false
		}
	}
	return true
}

// Value returns the sum of the counter, gauge or untyped series of name
// that match sel, and whether any matched.
func (s Snapshot) Value(name string, sel Labels) (float64, bool) {
	v, n, _ := s.total(name, sel.match)
	return v, n > 0
}

// total adds the counter, gauge or untyped series of name that keep keeps
// (nil keeps all): their sum, how many there were, and whether the family
// exists.
func (s Snapshot) total(name string, keep func(*dto.Metric) bool) (sum float64, n int, found bool) {
	fam, ok := s[name]
	if !ok {
		return 0, 0, false
	}
	for _, m := range fam.GetMetric() {
		if keep != nil && !keep(m) {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Untyped != nil:
			sum += m.GetUntyped().GetValue()
		default:
			continue
		}
		n++
	}
	return sum, n, true
}

// Bucket is one cumulative histogram bucket.
type Bucket struct {
	UpperBound float64
	Count      float64
}

// Histogram is a cumulative Prometheus histogram (summed over the selected
// series).
type Histogram struct {
	Buckets []Bucket // sorted by UpperBound, +Inf excluded
	Count   float64
	Sum     float64
}

// Histogram returns the histogram called name, its matching series summed
// bucket by bucket.
func (s Snapshot) Histogram(name string, sel Labels) (Histogram, bool) {
	fam, ok := s[name]
	if !ok {
		return Histogram{}, false
	}
	byBound := map[float64]float64{}
	var h Histogram
	n := 0
	for _, m := range fam.GetMetric() {
		if m.Histogram == nil || !sel.match(m) {
			continue
		}
		n++
		mh := m.GetHistogram()
		h.Count += float64(mh.GetSampleCount())
		h.Sum += mh.GetSampleSum()
		for _, b := range mh.GetBucket() {
			if math.IsInf(b.GetUpperBound(), +1) {
				continue
			}
			byBound[b.GetUpperBound()] += float64(b.GetCumulativeCount())
		}
	}
	if n == 0 {
		return Histogram{}, false
	}
	for ub, c := range byBound {
		h.Buckets = append(h.Buckets, Bucket{UpperBound: ub, Count: c})
	}
	sort.Slice(h.Buckets, func(i, j int) bool { return h.Buckets[i].UpperBound < h.Buckets[j].UpperBound })
	return h, true
}

// Sub returns h minus an earlier scrape of the same histogram: what was
// observed between the two. A counter reset (the server restarted) makes
// the later histogram the delta, as Prometheus' rate() does. A reset is
// seen when the count or any bucket went down: a member that restarted
// and has since observed more than before its restart still has fewer in
// some bucket, or a smaller sum.
func (h Histogram) Sub(prev Histogram) Histogram {
	if h.Count < prev.Count || h.Sum < prev.Sum {
		return h
	}
	old := map[float64]float64{}
	for _, b := range prev.Buckets {
		old[b.UpperBound] = b.Count
	}
	d := Histogram{Count: h.Count - prev.Count, Sum: h.Sum - prev.Sum}
	for _, b := range h.Buckets {
		if b.Count < old[b.UpperBound] {
			return h
		}
		d.Buckets = append(d.Buckets, Bucket{UpperBound: b.UpperBound, Count: b.Count - old[b.UpperBound]})
	}
	return d
}

// Quantile returns the q-quantile (0 < q < 1) the way PromQL's
// histogram_quantile does, by linear interpolation inside the bucket that
// holds it, with one difference: when it falls in the lowest bucket the
// histogram cannot tell where, and Quantile returns that bucket's upper
// bound with atFloor set, rather than an interpolated value such as 0.99ms
// that nothing measured. When it falls above the highest finite bucket, it
// returns that bound with aboveTop set.
func (h Histogram) Quantile(q float64) (v float64, atFloor, aboveTop bool) {
	if h.Count == 0 || len(h.Buckets) == 0 {
		return 0, false, false
	}
	rank := q * h.Count
	prevBound, prevCount := 0.0, 0.0
	for i, b := range h.Buckets {
		if b.Count >= rank {
			if i == 0 {
				return b.UpperBound, true, false
			}
			inBucket := b.Count - prevCount
			if inBucket <= 0 {
				return b.UpperBound, false, false
			}
			return prevBound + (b.UpperBound-prevBound)*(rank-prevCount)/inBucket, false, false
		}
		prevBound, prevCount = b.UpperBound, b.Count
	}
	return h.Buckets[len(h.Buckets)-1].UpperBound, false, true
}
