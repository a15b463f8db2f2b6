// Package hist records latencies in constant memory: an HDR histogram for
// the quantiles plus exact count, min, max, mean and standard deviation.
package hist

import (
	"fmt"
	"math"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/etcdperf/etcdperf/internal/result"
)

const (
	lowest  = 1                    // 1 ns
	highest = int64(time.Hour)     // anything slower is clamped
	sigfigs = 3                    // 0.1 % relative precision
	nsPerS  = float64(time.Second) // for conversions to seconds
)

// Histogram is a latency distribution. The zero value is not usable: call
// New. It is not safe for concurrent use.
type Histogram struct {
	h        *hdr.Histogram
	count    int64
	min, max int64
	mean, m2 float64 // Welford's running mean and sum of squared deviations
}

// New returns an empty histogram covering 1 ns to 1 h at 3 significant digits.
func New() *Histogram {
	return &Histogram{h: hdr.New(lowest, highest, sigfigs)}
}

// Record adds one latency. Values above one hour are clamped to one hour and
// values below 1 ns to 1 ns, in the quantiles; the exact statistics keep them.
func (h *Histogram) Record(d time.Duration) {
	h.RecordNanos(int64(d))
}

// RecordNanos adds one latency given in nanoseconds.
func (h *Histogram) RecordNanos(v int64) {
	if v < 0 {
		v = 0
	}
	if h.count == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.count++
	d := float64(v) - h.mean
	h.mean += d / float64(h.count)
	h.m2 += d * (float64(v) - h.mean)
	q := v
	if q < lowest {
		q = lowest
	}
	if q > highest {
		q = highest
	}
	_ = h.h.RecordValue(q) // cannot fail: q is within the trackable range
}

// Count returns how many values were recorded.
func (h *Histogram) Count() int64 { return h.count }

// Max returns the largest recorded value.
func (h *Histogram) Max() time.Duration { return time.Duration(h.max) }

// Min returns the smallest recorded value.
func (h *Histogram) Min() time.Duration { return time.Duration(h.min) }

// Mean returns the exact mean.
func (h *Histogram) Mean() time.Duration { return time.Duration(h.mean) }

// Quantile returns the value at quantile q (0 < q <= 100, e.g. 99.9).
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.count == 0 {
		return 0
	}
	v := h.h.ValueAtQuantile(q)
	// The HDR bucket's upper edge may lie past the true maximum.
	if v > h.max {
		v = h.max
	}
	return time.Duration(v)
}

// Stddev returns the exact population standard deviation.
func (h *Histogram) Stddev() time.Duration {
	if h.count == 0 {
		return 0
	}
	return time.Duration(math.Sqrt(h.m2 / float64(h.count)))
}

// Reset empties the histogram, keeping its memory.
func (h *Histogram) Reset() {
	h.h.Reset()
	h.count, h.min, h.max, h.mean, h.m2 = 0, 0, 0, 0, 0
}

// Merge adds all values of o to h, exactly (Chan et al.'s parallel variance).
func (h *Histogram) Merge(o *Histogram) {
	if o.count == 0 {
		return
	}
	h.h.Merge(o.h)
	if h.count == 0 {
		h.count, h.min, h.max, h.mean, h.m2 = o.count, o.min, o.max, o.mean, o.m2
		return
	}
	n := h.count + o.count
	d := o.mean - h.mean
	h.mean += d * float64(o.count) / float64(n)
	h.m2 += o.m2 + d*d*float64(h.count)*float64(o.count)/float64(n)
	h.count = n
	h.min = min(h.min, o.min)
	h.max = max(h.max, o.max)
}

// Latency summarises the histogram in seconds. With withHDR it embeds the
// encoded histogram so that the summary can be merged exactly later.
func (h *Histogram) Latency(withHDR bool) result.Latency {
	l := result.Latency{
		Count:  h.count,
		Min:    seconds(h.min),
		Mean:   h.mean / nsPerS,
		Stddev: h.Stddev().Seconds(),
		Max:    seconds(h.max),
		P50:    h.Quantile(50).Seconds(),
		P90:    h.Quantile(90).Seconds(),
		P99:    h.Quantile(99).Seconds(),
		P999:   h.Quantile(99.9).Seconds(),
		P9999:  h.Quantile(99.99).Seconds(),
	}
	if withHDR && h.count > 0 {
		if enc, err := h.h.EncodeV2(); err == nil {
			l.HDR = string(enc)
		}
	}
	return l
}

// FromLatency rebuilds a histogram from a summary that carries its HDR
// encoding. Count, min, max, mean and stddev come from the summary, so that
// a merge of rebuilt histograms keeps them exact.
func FromLatency(l result.Latency) (*Histogram, error) {
	if l.HDR == "" {
		return nil, fmt.Errorf("latency summary has no HDR histogram to merge")
	}
	dh, err := hdr.Decode([]byte(l.HDR))
	if err != nil {
		return nil, fmt.Errorf("bad HDR histogram: %w", err)
	}
	if dh.TotalCount() != l.Count {
		return nil, fmt.Errorf("HDR histogram holds %d values but the summary says %d", dh.TotalCount(), l.Count)
	}
	h := New()
	h.h.Merge(dh)
	h.count = l.Count
	h.min = int64(math.Round(l.Min * nsPerS))
	h.max = int64(math.Round(l.Max * nsPerS))
	h.mean = l.Mean * nsPerS
	s := l.Stddev * nsPerS
	h.m2 = s * s * float64(l.Count)
	return h, nil
}

func seconds(ns int64) float64 { return float64(ns) / nsPerS }
