package load

import (
	"math"
	"testing"
	"time"
)

// The series' samples reach Progress.TakeLatency: each call gives the p99
// of the requests that succeeded in the samples taken since the last call,
// and starts a new span (a soak's interval reads its own requests only).
func TestTakeLatencySpansSamples(t *testing.T) {
	p := &Progress{}
	r := newRecorder(false, 0, p)
	start := time.Now()
	s := newSampler([]*recorder{r}, start)
	s.progress = p
	for i := 1; i <= 100; i++ {
		r.ok(int64(i)*int64(time.Millisecond), 0, 0)
	}
	s.take(start.Add(time.Second))
	for range 10 {
		r.ok(int64(5*time.Millisecond), 0, 0)
	}
	s.take(start.Add(2 * time.Second))
	if p99, n := p.TakeLatency(); n != 110 || math.Abs(p99-0.099) > 0.002 {
		t.Errorf("two samples: p99 %v over %d requests, want 99ms over 110", p99, n)
	}
	for range 10 {
		r.ok(int64(5*time.Millisecond), 0, 0)
	}
	s.take(start.Add(3 * time.Second))
	if p99, n := p.TakeLatency(); n != 10 || math.Abs(p99-0.005) > 0.0001 {
		t.Errorf("the next span: p99 %v over %d requests, want 5ms over 10 (the earlier span's requests left out)", p99, n)
	}
	if p99, n := p.TakeLatency(); n != 0 || p99 != 0 {
		t.Errorf("no sample since: p99 %v over %d requests, want none", p99, n)
	}
}
