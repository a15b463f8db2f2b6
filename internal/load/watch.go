package load

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// ringSize bounds the put send times kept for matching events: an event
// more than ringSize puts late cannot be matched and counts as missed.
const ringSize = 1 << 16

// runWatch measures the latency from a put's send to each watcher's event
// for it: Streams watch streams (one etcd Watcher each), each with
// WatchersPerStream watchers on one key under the prefix, and puts of that
// key at Rate per second. etcd's benchmark measures from the put's
// response instead, which leaves out the put's own commit.
func runWatch(ctx context.Context, conns []Conn, o Options) (*Stats, error) {
	key := KeyName(o.Prefix, o.KeySize, 0)
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	watchers := make([]clientv3.Watcher, o.Streams)
	for s := range watchers {
		watchers[s] = clientv3.NewWatcher(conns[s%len(conns)].Client)
		defer watchers[s].Close()
	}
	var opts []clientv3.OpOption
	opts = append(opts, clientv3.WithCreatedNotify())
	if o.PrevKV {
		opts = append(opts, clientv3.WithPrevKV())
	}
	var chans []clientv3.WatchChan
	for s := range watchers {
		for range o.WatchersPerStream {
			chans = append(chans, watchers[s].Watch(wctx, key, opts...))
		}
	}
	// Puts start once every watch exists, or their events would be missed.
	timeout := o.CommandTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	created := time.NewTimer(timeout)
	defer created.Stop()
	for i, ch := range chans {
		select {
		case resp, ok := <-ch:
			if !ok || !resp.Created {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				return nil, fmt.Errorf("watch %d of %s was not created: %v", i, key, resp.Err())
			}
		case <-created.C:
			return nil, fmt.Errorf("watch %d of %s was not created within %s", i, key, timeout)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}

	var sendAt [ringSize]atomic.Int64
	base := time.Now()
	var expected atomic.Int64
	allSent := make(chan struct{})
	recs := make([]*recorder, len(chans))
	received := make([]int64, len(chans))
	var wg sync.WaitGroup
	for i, ch := range chans {
		recs[i] = newRecorder(false, 0, nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			received[i] = receive(ch, recs[i], &sendAt, base, &expected, allSent)
		}()
	}

	putRec := newRecorder(false, 0, o.Progress)
	smp := newSampler(recs, time.Now())
	stopSampler, samplerDone := make(chan struct{}), make(chan struct{})
	interval := o.SampleInterval
	if interval <= 0 {
		interval = time.Second
	}
	go smp.run(interval, stopSampler, samplerDone)

	start := time.Now()
	puts := sendPuts(ctx, conns[0].Client, &o, key, putRec, &sendAt, base, start)
	expected.Store(puts)
	close(allSent)
	// Give the last events the command timeout to arrive.
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		wcancel()
		<-done
	case <-ctx.Done():
		wcancel()
		<-done
	}
	elapsed := time.Since(start)
	close(stopSampler)
	<-samplerDone

	st := &Stats{Workload: WatchLatency, Elapsed: elapsed, Series: smp.series}
	st.merge(recs, nil)
	var missed int64
	for _, n := range received {
		missed += max(puts-n, 0)
	}
	if missed > 0 && ctx.Err() == nil {
		st.Errors = mergeErr(st.Errors, fmt.Sprintf("missed: no watch event within %s of the last put", timeout), missed)
	}
	for k, v := range putRec.errs {
		st.Errors = mergeErr(st.Errors, "put: "+k, v)
	}
	st.Parts = []Part{
		{Name: "put", Ops: putRec.lat.Count(), Errors: result.ErrorTotal(putRec.errs), Latency: putRec.lat},
		{Name: "watch", Ops: st.Ops, Errors: missed, Latency: st.Latency},
	}
	st.Notes = append(st.Notes, fmt.Sprintf("%d puts, each seen by %d watchers; latency runs from the put's send to each event", puts, len(chans)))
	return st, ctx.Err()
}

func mergeErr(m map[string]int64, k string, v int64) map[string]int64 {
	if m == nil {
		m = map[string]int64{}
	}
	m[k] += v
	return m
}

// sendPuts puts key at the rate until the total or the duration is
// reached, each value starting with the put's number, and returns how
// many puts etcd accepted.
func sendPuts(ctx context.Context, c *clientv3.Client, o *Options, key string, rec *recorder, sendAt *[ringSize]atomic.Int64, base, start time.Time) int64 {
	req := &pb.PutRequest{Key: []byte(key), Value: value(o.ValSize)}
	resp := &pb.PutResponse{}
	cc := c.ActiveConnection()
	interval := float64(time.Second) / o.Rate
	timer := stoppedTimer()
	var ok int64
	var end time.Time
	if o.Duration > 0 {
		end = start.Add(o.Duration)
	}
	for i := int64(0); o.Total == 0 || i < o.Total; i++ {
		due := start.Add(time.Duration(float64(i) * interval))
		if !end.IsZero() && !due.Before(end) {
			break
		}
		if d := time.Until(due); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return ok
			}
		}
		binary.BigEndian.PutUint64(req.Value, uint64(ok))
		rctx, cancel := ctx, context.CancelFunc(func() {})
		if o.CommandTimeout > 0 {
			rctx, cancel = context.WithTimeout(ctx, o.CommandTimeout)
		}
		t0 := time.Now()
		sendAt[ok%ringSize].Store(int64(t0.Sub(base)) + 1)
		err := cc.Invoke(rctx, pb.KV_Put_FullMethodName, req, resp, callOpts...)
		cancel()
		if ctx.Err() != nil {
			return ok
		}
		if err != nil {
			rec.fail(ErrorKey(err), 0)
			continue
		}
		rec.ok(int64(time.Since(t0)), 0, 0)
		ok++
	}
	return ok
}

// receive records the latency of every event on ch until it has seen all
// the puts (known once allSent is closed) or ch closes, and returns how
// many events it saw.
func receive(ch clientv3.WatchChan, rec *recorder, sendAt *[ringSize]atomic.Int64, base time.Time, expected *atomic.Int64, allSent <-chan struct{}) int64 {
	var n int64
	sent := allSent
	for {
		select {
		case resp, ok := <-ch:
			if !ok {
				return n
			}
			now := int64(time.Since(base)) + 1
			for _, ev := range resp.Events {
				if len(ev.Kv.Value) < 8 {
					continue
				}
				idx := binary.BigEndian.Uint64(ev.Kv.Value)
				if at := sendAt[idx%ringSize].Load(); at > 0 && at <= now {
					rec.ok(now-at, 0, 0)
				}
				n++
			}
			if sent == nil && n >= expected.Load() {
				return n
			}
		case <-sent:
			sent = nil
			if n >= expected.Load() {
				return n
			}
		}
	}
}
