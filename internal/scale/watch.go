package scale

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/hist"
	"github.com/etcdperf/etcdperf/internal/load"
)

// Watches watch resource prefixes the way kube-apiserver's watch cache
// does (one watch per resource, from the current revision on) and measure
// each put event's lag: from the put's send (the time in its value) to the
// event's arrival.
type Watches struct {
	w      clientv3.Watcher
	cancel context.CancelFunc
	wg     sync.WaitGroup
	revs   []atomic.Int64 // the revision each watch is known to have reached

	mu     sync.Mutex
	lag    *hist.Histogram
	events int64
	errs   map[string]int64
}

// WatchCreateTimeout bounds how long creating the watches may take.
const WatchCreateTimeout = 10 * time.Second

// StartWatches watches every prefix and returns once all watches exist.
func StartWatches(ctx context.Context, c *clientv3.Client, prefixes []string) (*Watches, error) {
	wctx, cancel := context.WithCancel(ctx)
	s := &Watches{w: clientv3.NewWatcher(c), cancel: cancel, revs: make([]atomic.Int64, len(prefixes)), lag: hist.New(), errs: map[string]int64{}}
	timer := time.NewTimer(WatchCreateTimeout)
	defer timer.Stop()
	for i, p := range prefixes {
		ch := s.w.Watch(wctx, p, clientv3.WithPrefix(), clientv3.WithCreatedNotify())
		select {
		case resp, ok := <-ch:
			if !ok || !resp.Created {
				s.Close()
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, fmt.Errorf("watch %s was not created: %v", p, resp.Err())
			}
			s.revs[i].Store(resp.Header.Revision)
		case <-timer.C:
			s.Close()
			return nil, fmt.Errorf("watch %s was not created within %s", p, WatchCreateTimeout)
		case <-ctx.Done():
			s.Close()
			return nil, ctx.Err()
		}
		s.wg.Add(1)
		go s.receive(i, p, ch)
	}
	return s, nil
}

func (s *Watches) receive(i int, prefix string, ch clientv3.WatchChan) {
	defer s.wg.Done()
	for resp := range ch {
		now := time.Now()
		if err := resp.Err(); err != nil {
			s.mu.Lock()
			s.errs["watch "+prefix+": "+load.ErrorKey(err)]++
			s.mu.Unlock()
			continue
		}
		s.mu.Lock()
		for _, ev := range resp.Events {
			s.events++
			if ev.Type != clientv3.EventTypePut {
				continue
			}
			if at, ok := PutTime(ev.Kv.Value); ok {
				s.lag.Record(now.Sub(at))
			}
		}
		s.mu.Unlock()
		if resp.Header.Revision > s.revs[i].Load() {
			s.revs[i].Store(resp.Header.Revision)
		}
	}
}

// CatchUp waits until every watch has delivered the events up to rev (it
// asks etcd for progress notifications), at most timeout. It reports
// whether they did.
func (s *Watches) CatchUp(ctx context.Context, rev int64, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		behind := false
		for i := range s.revs {
			behind = behind || s.revs[i].Load() < rev
		}
		if !behind {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		_ = s.w.RequestProgress(rctx)
		cancel()
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
		}
	}
}

// Take returns what the watches measured since the last Take: the put
// events' lag, the events received, and the errors by reason.
func (s *Watches) Take() (lag *hist.Histogram, events int64, errs map[string]int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lag, events, errs = s.lag, s.events, s.errs
	s.lag, s.events, s.errs = hist.New(), 0, map[string]int64{}
	return lag, events, errs
}

// Close ends the watches.
func (s *Watches) Close() {
	s.cancel()
	s.w.Close()
	s.wg.Wait()
}
