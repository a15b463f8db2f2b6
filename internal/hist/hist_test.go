package hist

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

func exactQuantile(sorted []int64, q float64) int64 {
	// The smallest value with at least q% of the values at or below it,
	// which is what an HDR histogram approximates.
	idx := int(math.Ceil(q/100*float64(len(sorted)))) - 1
	if idx < 0 {
		idx = 0
	}
	return sorted[idx]
}

func TestQuantilesMatchExactWithinPrecision(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	h := New()
	var vals []int64
	for i := 0; i < 100000; i++ {
		// Log-normal-ish latencies from ~50µs to seconds.
		v := int64(math.Exp(r.NormFloat64()*1.2+12.5)) + 1
		vals = append(vals, v)
		h.RecordNanos(v)
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
	for _, q := range []float64{50, 90, 99, 99.9, 99.99} {
		got := float64(h.Quantile(q))
		want := float64(exactQuantile(vals, q))
		if rel := math.Abs(got-want) / want; rel > 0.002 {
			t.Errorf("p%v = %v, exact %v (off by %.3f%%)", q, got, want, rel*100)
		}
	}
	var sum, sq float64
	for _, v := range vals {
		sum += float64(v)
	}
	mean := sum / float64(len(vals))
	for _, v := range vals {
		sq += (float64(v) - mean) * (float64(v) - mean)
	}
	sd := math.Sqrt(sq / float64(len(vals)))
	if math.Abs(float64(h.Mean())-mean) > 1 {
		t.Errorf("mean %v, exact %v", h.Mean(), mean)
	}
	if math.Abs(float64(h.Stddev())-sd) > 1 {
		t.Errorf("stddev %v, exact %v", h.Stddev(), sd)
	}
	if h.Min() != time.Duration(vals[0]) || h.Max() != time.Duration(vals[len(vals)-1]) {
		t.Errorf("min/max %v/%v, want %v/%v", h.Min(), h.Max(), vals[0], vals[len(vals)-1])
	}
}

func TestQuantileNeverExceedsMax(t *testing.T) {
	h := New()
	h.RecordNanos(1_000_001) // the HDR bucket's upper edge is above this
	if got := h.Quantile(99.99); got != 1_000_001 {
		t.Errorf("p99.99 of a single value = %d, want the value", got)
	}
}

func TestMergeEqualsRecordingEverything(t *testing.T) {
	a, b, all := New(), New(), New()
	for i := int64(1); i <= 5000; i++ {
		v := i * 997 % 100000
		if i%3 == 0 {
			a.RecordNanos(v)
		} else {
			b.RecordNanos(v)
		}
		all.RecordNanos(v)
	}
	a.Merge(b)
	la, lall := a.Latency(false), all.Latency(false)
	if la.Count != lall.Count || la.Min != lall.Min || la.Max != lall.Max || la.P99 != lall.P99 || la.P50 != lall.P50 {
		t.Errorf("merged %+v\nall    %+v", la, lall)
	}
	if math.Abs(la.Mean-lall.Mean) > 1e-15 || math.Abs(la.Stddev-lall.Stddev)/lall.Stddev > 1e-9 {
		t.Errorf("merged mean/stddev %v/%v, all %v/%v", la.Mean, la.Stddev, lall.Mean, lall.Stddev)
	}
}

func TestLatencyRoundTripThroughHDR(t *testing.T) {
	a, b := New(), New()
	for i := 1; i <= 1000; i++ {
		a.Record(time.Duration(i) * time.Microsecond)
		b.Record(time.Duration(i) * time.Millisecond)
	}
	ra, err := FromLatency(a.Latency(true))
	if err != nil {
		t.Fatal(err)
	}
	rb, err := FromLatency(b.Latency(true))
	if err != nil {
		t.Fatal(err)
	}
	ra.Merge(rb)
	a.Merge(b)
	got, want := ra.Latency(false), a.Latency(false)
	if got.Count != 2000 || got.P99 != want.P99 || got.P50 != want.P50 || got.Max != want.Max || got.Min != want.Min {
		t.Errorf("rebuilt merge %+v\nwant           %+v", got, want)
	}
	if math.Abs(got.Stddev-want.Stddev)/want.Stddev > 1e-9 {
		t.Errorf("stddev %v, want %v", got.Stddev, want.Stddev)
	}
}

func TestFromLatencyRejectsBadInput(t *testing.T) {
	h := New()
	h.RecordNanos(5)
	l := h.Latency(true)
	l.Count = 7
	if _, err := FromLatency(l); err == nil {
		t.Error("a count that disagrees with the histogram was accepted")
	}
	l.HDR = "not base64!"
	if _, err := FromLatency(l); err == nil {
		t.Error("garbage HDR was accepted")
	}
	if _, err := FromLatency(New().Latency(true)); err == nil {
		t.Error("a summary without HDR was accepted")
	}
}

func TestResetAndEmpty(t *testing.T) {
	h := New()
	if l := h.Latency(true); l.Count != 0 || l.P99 != 0 || l.HDR != "" {
		t.Errorf("empty histogram summary %+v", l)
	}
	h.Record(time.Second)
	h.Reset()
	if h.Count() != 0 || h.Quantile(50) != 0 || h.Max() != 0 {
		t.Error("Reset left values behind")
	}
	h.Record(2 * time.Hour) // clamped in the quantiles, exact in max
	if h.Max() != 2*time.Hour || h.Quantile(50) > time.Hour+time.Hour/500 {
		t.Errorf("clamping: max %v p50 %v", h.Max(), h.Quantile(50))
	}
}

func BenchmarkRecord(b *testing.B) {
	h := New()
	for i := 0; i < b.N; i++ {
		h.RecordNanos(int64(i%1000000) + 1000)
	}
}

func TestCountsAtOrBelow(t *testing.T) {
	h := New()
	for i := 1; i <= 100; i++ {
		h.Record(time.Duration(i) * time.Millisecond)
	}
	bounds := []time.Duration{0, time.Millisecond, 50 * time.Millisecond, 99*time.Millisecond + 500*time.Microsecond, time.Second}
	want := []int64{0, 1, 50, 99, 100}
	got := h.CountsAtOrBelow(bounds)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("CountsAtOrBelow(%v) = %d, want %d", bounds[i], got[i], want[i])
		}
	}
	if New().CountsAtOrBelow([]time.Duration{time.Second})[0] != 0 {
		t.Error("empty histogram counts something")
	}
}
