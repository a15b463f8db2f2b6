package load

import (
	"time"

	"github.com/etcdperf/etcdperf/internal/hist"
	"github.com/etcdperf/etcdperf/internal/result"
)

// Stats is what a run measured.
type Stats struct {
	Workload string
	// Ops counts successful requests (watch events for watch-latency).
	Ops int64
	// Errors counts failed requests by ErrorKey.
	Errors map[string]int64
	// Elapsed is the wall time of the load phase.
	Elapsed time.Duration
	// Latency is from the intended send time (with a rate) or the send.
	Latency *hist.Histogram
	// Service is from the actual send; nil without a rate.
	Service *hist.Histogram
	// SendLag is how late each request left after its intended send
	// time; nil without a rate.
	SendLag *hist.Histogram
	// BusyLag is the mean part of a send's lag during which every worker
	// was waiting for the server (the rest is the load generator's own
	// delay); zero without a rate.
	BusyLag time.Duration
	// Parts break the run down (txn-mixed: read, write; watch-latency:
	// put, and the events under "watch").
	Parts []Part
	// Series holds one sample per interval.
	Series []result.Sample
	// Notes say what the reader must know to trust the numbers.
	Notes []string
}

// Part is one kind of request of a mixed workload.
type Part struct {
	Name    string
	Ops     int64
	Errors  int64
	Latency *hist.Histogram
}

// ErrorCount is the number of failed requests.
func (s *Stats) ErrorCount() int64 { return result.ErrorTotal(s.Errors) }

// Throughput is successful requests per second of the load phase.
func (s *Stats) Throughput() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Ops) / s.Elapsed.Seconds()
}

// merge folds the workers' recorders into s.
func (s *Stats) merge(recs []*recorder, partNames []string) {
	s.Latency = hist.New()
	s.Errors = map[string]int64{}
	parts := make([]*hist.Histogram, len(partNames))
	partErrs := make([]int64, len(partNames))
	for i := range parts {
		parts[i] = hist.New()
	}
	var busyLag int64
	for _, r := range recs {
		busyLag += r.busyLag
		s.Latency.Merge(r.lat)
		if r.svc != nil {
			if s.Service == nil {
				s.Service = hist.New()
			}
			s.Service.Merge(r.svc)
		}
		if r.lag != nil {
			if s.SendLag == nil {
				s.SendLag = hist.New()
			}
			s.SendLag.Merge(r.lag)
		}
		for i, p := range r.parts {
			parts[i].Merge(p)
			partErrs[i] += r.partErrs[i]
		}
		for k, v := range r.errs {
			s.Errors[k] += v
		}
	}
	s.Ops = s.Latency.Count()
	if s.SendLag != nil && s.SendLag.Count() > 0 {
		s.BusyLag = time.Duration(busyLag / s.SendLag.Count())
	}
	for i, n := range partNames {
		s.Parts = append(s.Parts, Part{Name: n, Ops: parts[i].Count(), Errors: partErrs[i], Latency: parts[i]})
	}
	if len(s.Errors) == 0 {
		s.Errors = nil
	}
}

// TopError returns the most frequent error and its count.
func (s *Stats) TopError() (string, int64) { return TopError(s.Errors) }

// TopError returns the most frequent key of errs and its count
// (result.TopError).
func TopError(errs map[string]int64) (string, int64) { return result.TopError(errs) }
