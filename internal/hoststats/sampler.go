package hoststats

import (
	"os"
	"sync"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
)

// Sampler records host metrics every interval in the background, for the
// series of a run, and over the whole run for its summary.
type Sampler struct {
	device   string
	interval time.Duration
	stop     chan struct{}
	done     chan struct{}

	mu     sync.Mutex
	first  Snapshot
	series []result.HostSample
	err    error
}

// Start begins sampling device (may be "") every interval.
func Start(device string, interval time.Duration) (*Sampler, error) {
	first, err := Take(device)
	if err != nil {
		return nil, err
	}
	s := &Sampler{device: device, interval: interval, stop: make(chan struct{}), done: make(chan struct{}), first: first}
	go s.loop()
	return s, nil
}

func (s *Sampler) loop() {
	defer close(s.done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	prev := s.first
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			cur, err := Take(s.device)
			s.mu.Lock()
			if err != nil {
				s.err = err
				s.mu.Unlock()
				return
			}
			hs := Between(prev, cur)
			hs.T = cur.At.Sub(s.first.At).Seconds()
			s.series = append(s.series, hs)
			s.mu.Unlock()
			prev = cur
		}
	}
}

// Stop ends sampling and returns the host section: the summary over the
// whole time since Start, and the series.
func (s *Sampler) Stop() (*result.Host, error) {
	close(s.stop)
	<-s.done
	last, err := Take(s.device)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		err = s.err
	}
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	return &result.Host{Hostname: host, Device: s.device, Summary: Between(s.first, last), Series: s.series}, nil
}

// Series returns a copy of the samples taken so far; each one's T is its
// end in seconds since Start.
func (s *Sampler) Series() []result.HostSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]result.HostSample(nil), s.series...)
}
