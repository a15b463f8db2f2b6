package load

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/etcdperf/etcdperf/internal/hist"
	"github.com/etcdperf/etcdperf/internal/result"
)

// Progress counts completed requests while a run goes on; it is safe to
// read from another goroutine.
type Progress struct {
	ok     atomic.Int64
	failed atomic.Int64
	total  atomic.Int64

	// mu guards since: the latencies of the requests sampled since the
	// last TakeLatency (the series' samples, one interval each, merged).
	mu    sync.Mutex
	since *hdr.Histogram
}

// TakeLatency returns the p99 latency (seconds, from the intended send)
// of the requests that succeeded in the series' samples taken since the
// last call (the first: since the run began), and how many they were;
// it starts a new span. The samples are SampleInterval long: the span's
// edges fall on theirs.
func (p *Progress) TakeLatency() (p99 float64, n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.since == nil || p.since.TotalCount() == 0 {
		return 0, 0
	}
	p99, n = float64(p.since.ValueAtQuantile(99))/1e9, p.since.TotalCount()
	p.since.Reset()
	return p99, n
}

// add merges one sample's latencies into the span TakeLatency reads.
func (p *Progress) add(h *hdr.Histogram) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.since == nil {
		p.since = newInterval()
	}
	p.since.Merge(h)
}

// Done returns how many requests have completed (errors included).
func (p *Progress) Done() int64 { return p.ok.Load() + p.failed.Load() }

// Succeeded returns how many of the completed requests succeeded.
func (p *Progress) Succeeded() int64 { return p.ok.Load() }

// Failed returns how many of the completed requests failed.
func (p *Progress) Failed() int64 { return p.failed.Load() }

// Total returns the number of requests the run will make, 0 when it runs
// for a duration.
func (p *Progress) Total() int64 { return p.total.Load() }

// maxErrorKinds bounds the distinct error keys a worker keeps; the rest
// are counted under "other".
const maxErrorKinds = 32

// Interval histograms (one second of one worker) need less precision and
// must be cheap to reset: 1 µs to 1 h at 2 significant digits, ~27 KiB.
func newInterval() *hdr.Histogram { return hdr.New(1_000, int64(time.Hour), 2) }

// recorder is one worker's statistics. Only the interval part is shared
// with the sampler, under mu (held by this worker per request, and by the
// sampler once per interval: never by another worker).
type recorder struct {
	lat *hist.Histogram // from the intended send time
	svc *hist.Histogram // from the actual send, with a rate
	lag *hist.Histogram // of the actual send behind the intended one, with a rate
	// busyLag sums the part of each lag spent with every worker busy
	// (nanoseconds).
	busyLag int64
	parts   []*hist.Histogram
	errs    map[string]int64
	// partErrs counts the failures of each part.
	partErrs []int64

	mu     sync.Mutex
	iv     *hdr.Histogram
	ivErrs int64

	progress *Progress
	_        [64]byte // keep busy workers' locks off each other's cache line
}

func newRecorder(withService bool, parts int, p *Progress) *recorder {
	r := &recorder{lat: hist.New(), iv: newInterval(), errs: map[string]int64{}, progress: p}
	if withService {
		r.svc, r.lag = hist.New(), hist.New()
	}
	for range parts {
		r.parts = append(r.parts, hist.New())
	}
	if parts > 0 {
		r.partErrs = make([]int64, parts)
	}
	return r
}

// ok records a successful request; lat and svc are nanoseconds.
func (r *recorder) ok(lat, svc int64, part int) {
	r.lat.RecordNanos(lat)
	if r.svc != nil {
		r.svc.RecordNanos(svc)
	}
	if r.parts != nil {
		r.parts[part].RecordNanos(lat)
	}
	v := min(max(lat, 1_000), int64(time.Hour))
	r.mu.Lock()
	_ = r.iv.RecordValue(v)
	r.mu.Unlock()
	if r.progress != nil {
		r.progress.ok.Add(1)
	}
}

// sent records how late a request left after its intended send time,
// answered or not, and how much of that lag it waited for a free worker
// (nanoseconds).
func (r *recorder) sent(lag, busy int64) {
	lag = max(lag, 0)
	r.lag.RecordNanos(lag)
	r.busyLag += min(max(busy, 0), lag)
}

// fail records a failed request of a part under its reason.
func (r *recorder) fail(key string, part int) {
	if _, seen := r.errs[key]; !seen && len(r.errs) >= maxErrorKinds {
		key = "other"
	}
	r.errs[key]++
	if r.partErrs != nil {
		r.partErrs[part]++
	}
	r.mu.Lock()
	r.ivErrs++
	r.mu.Unlock()
	if r.progress != nil {
		r.progress.failed.Add(1)
	}
}

// ErrorKey names an error by its gRPC code and etcd's message, e.g.
// "Unavailable: etcdserver: leader changed".
func ErrorKey(err error) string {
	if s, ok := status.FromError(err); ok && s.Code() != codes.OK {
		return s.Code().String() + ": " + s.Message()
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "DeadlineExceeded: " + err.Error()
	case errors.Is(err, context.Canceled):
		return "Canceled: " + err.Error()
	}
	return err.Error()
}

// sampler folds the workers' interval histograms into a series.
type sampler struct {
	recs []*recorder
	// progress, when set, is given each sample's latencies.
	progress *Progress
	start    time.Time
	last     time.Time
	spare    *hdr.Histogram
	agg      *hdr.Histogram
	series   []result.Sample
}

func newSampler(recs []*recorder, start time.Time) *sampler {
	return &sampler{recs: recs, start: start, last: start, spare: newInterval(), agg: newInterval()}
}

// take ends the current interval at now and appends its sample.
func (s *sampler) take(now time.Time) {
	var errs int64
	for _, r := range s.recs {
		r.mu.Lock()
		iv := r.iv
		r.iv = s.spare
		errs += r.ivErrs
		r.ivErrs = 0
		r.mu.Unlock()
		s.agg.Merge(iv)
		iv.Reset()
		s.spare = iv
	}
	span := now.Sub(s.last)
	s.last = now
	if span <= 0 {
		return
	}
	if s.progress != nil && s.agg.TotalCount() > 0 {
		s.progress.add(s.agg)
	}
	smp := result.Sample{
		T:   now.Sub(s.start).Seconds(),
		Ops: s.agg.TotalCount(),
		Err: errs,
	}
	if smp.Ops > 0 {
		smp.P50 = float64(s.agg.ValueAtQuantile(50)) / 1e9
		smp.P99 = float64(s.agg.ValueAtQuantile(99)) / 1e9
		smp.Max = float64(s.agg.Max()) / 1e9
	}
	if smp.Ops > 0 || smp.Err > 0 || len(s.series) > 0 {
		s.series = append(s.series, smp)
	}
	s.agg.Reset()
}

// run samples every interval until stop is closed, then takes the last,
// partial interval.
func (s *sampler) run(interval time.Duration, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case now := <-t.C:
			s.take(now)
		case <-stop:
			s.take(time.Now())
			return
		}
	}
}
