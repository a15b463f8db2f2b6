package load

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/etcdperf/etcdperf/internal/grpcwire"
)

// Run drives the workload over conns (the clients are spread over them)
// and returns what it measured. When ctx ends, the run stops early and
// returns what was measured so far with ctx's error. Everything the run
// creates besides keys under the prefix (leases) is removed before it
// returns.
func Run(ctx context.Context, conns []Conn, o Options) (*Stats, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if len(conns) == 0 {
		return nil, errors.New("no connection to run the load over")
	}
	if o.Progress == nil {
		o.Progress = &Progress{}
	}
	o.Progress.total.Store(o.Total)
	for i, c := range conns {
		if c.Client == nil {
			return nil, fmt.Errorf("connection %d has no etcd client", i)
		}
	}
	if o.Workload == Range && o.Prefill > 0 {
		if err := prefill(ctx, conns[0].Client, o); err != nil {
			return nil, err
		}
	}
	if o.StallTimeout > 0 {
		var stop func()
		ctx, stop = watchStall(ctx, o.Progress, o.StallTimeout)
		defer stop()
	}
	var st *Stats
	var err error
	if o.Workload == WatchLatency {
		st, err = runWatch(ctx, conns, o)
	} else {
		st, err = runUnary(ctx, conns, o)
	}
	return st, stallCause(ctx, err)
}

// shared is what every worker reads; only next is written, once per
// request, atomically.
type shared struct {
	next     atomic.Int64
	total    int64
	start    time.Time
	end      time.Time // zero: no duration
	interval float64   // nanoseconds between intended sends; 0: no rate
	timeout  time.Duration
	stop     <-chan struct{} // Options.Stop
}

// worker runs requests one after the other.
type worker struct {
	rec *recorder
	op  op
	// inflight is the send time of the running request (ns since start,
	// +1), 0 when idle, -1 once the watchdog has expired it.
	inflight atomic.Int64
	mu       sync.Mutex // guards ctx and cancel against the watchdog
	parent   context.Context
	ctx      context.Context
	cancel   context.CancelFunc
}

const expired = -1

func runUnary(ctx context.Context, conns []Conn, o Options) (*Stats, error) {
	parts := partNames(o.Workload)
	links := make([]*grpcwire.Link, len(conns))
	for i, c := range conns {
		if c.Addr != "" { // the lean path, as Dial decided
			// Clients i, i+len(conns), ... share connection i.
			clients := (o.Clients - i + len(conns) - 1) / len(conns)
			links[i] = grpcwire.NewLink(c.Addr, c.TLS, clients, leanMethods...)
		}
	}
	defer func() {
		for _, l := range links {
			if l != nil {
				l.Close()
			}
		}
	}()
	state := o.RandomState
	if state == 0 {
		state = uint64(time.Now().UnixNano())
	}
	workers := make([]*worker, o.Clients)
	recs := make([]*recorder, o.Clients)
	// Setting up (e.g. granting leases) happens before the clock starts.
	var setupErr error
	for i := range workers {
		c := conns[i%len(conns)]
		var inv invoker = grpcInvoker{c.Client.ActiveConnection()}
		if l := links[i%len(conns)]; l != nil {
			caller := l.NewCaller()
			defer caller.Close()
			inv = leanInvoker{caller, grpcInvoker{c.Client.ActiveConnection()}}
		}
		op, err := newOp(ctx, inv, c.Client, &o, state+uint64(i))
		if err != nil {
			setupErr = err
			break
		}
		recs[i] = newRecorder(o.Rate > 0, len(parts), o.Progress)
		workers[i] = &worker{rec: recs[i], op: op, parent: ctx}
		workers[i].ctx, workers[i].cancel = context.WithCancel(ctx)
	}
	defer func() {
		for _, w := range workers {
			if w != nil {
				w.op.close()
				w.cancel()
			}
		}
	}()
	if setupErr != nil {
		return nil, setupErr
	}

	// The setup's garbage (connections, buffers) is collected now, so that
	// the run's memory does not depend on when the collector would have
	// got to it: the request loop itself allocates next to nothing.
	runtime.GC()

	sh := &shared{total: o.Total, timeout: o.CommandTimeout, stop: o.Stop}
	if o.Rate > 0 {
		sh.interval = float64(time.Second) / o.Rate
	}
	sh.start = time.Now()
	if o.Duration > 0 {
		sh.end = sh.start.Add(o.Duration)
	}
	interval := o.SampleInterval
	if interval <= 0 {
		interval = time.Second
	}
	smp := newSampler(recs, sh.start)
	smp.progress = o.Progress
	stopSampler, samplerDone := make(chan struct{}), make(chan struct{})
	go smp.run(interval, stopSampler, samplerDone)
	stopWatchdog := make(chan struct{})
	if sh.timeout > 0 {
		go watchdog(workers, sh, stopWatchdog)
	}

	// With a rate, the pacer hands out the requests at their times;
	// without, the workers take the next number as soon as they are free.
	var tickets chan ticket
	if sh.interval > 0 {
		tickets = make(chan ticket)
		go pace(ctx, sh, tickets)
	}
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.loop(ctx, sh, tickets)
		}()
	}
	wg.Wait()
	if tickets != nil {
		for range tickets { // the pacer stops once it has handed out its last
		}
	}
	elapsed := time.Since(sh.start)
	close(stopWatchdog)
	close(stopSampler)
	<-samplerDone

	st := &Stats{Workload: o.Workload, Elapsed: elapsed, Series: smp.series}
	st.merge(recs, parts)
	if o.Workload == TxnMixed {
		st.Notes = append(st.Notes, fmt.Sprintf("reads and writes are transactions; %d reads, %d writes", st.Parts[0].Ops, st.Parts[1].Ops))
	}
	return st, ctx.Err()
}

func partNames(workload string) []string {
	if workload == TxnMixed {
		return []string{"read", "write"}
	}
	return nil
}

func stoppedTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}

// loop runs requests until the run is over: those the pacer hands out
// with a rate (tickets), else the next number as soon as it is free.
func (w *worker) loop(ctx context.Context, sh *shared, tickets <-chan ticket) {
	for {
		var i int64
		var due time.Time
		var busy time.Duration
		if tickets != nil {
			tk, ok := <-tickets
			if !ok {
				return
			}
			i, due, busy = tk.i, tk.due, tk.busyAtHandOver()
		} else {
			i = sh.next.Add(1) - 1
			if sh.total > 0 && i >= sh.total {
				return
			}
		}
		if ctx.Err() != nil || stopped(sh.stop) {
			return
		}
		rctx := w.ctx
		if rctx.Err() != nil {
			rctx = w.renew()
		}
		part := w.op.prep(i)
		t0 := time.Now()
		if tickets != nil {
			w.rec.sent(int64(t0.Sub(due)), int64(busy))
		}
		w.inflight.Store(int64(t0.Sub(sh.start)) + 1)
		err := w.op.send(rctx)
		t1 := time.Now()
		timedOut := w.inflight.Swap(0) == expired
		switch {
		case ctx.Err() != nil:
			return // stopped by the caller: not the server's fault
		case timedOut:
			w.renew()
			w.rec.fail(timeoutKey(sh.timeout), part)
		case err != nil:
			w.rec.fail(ErrorKey(err), part)
		default:
			lat := int64(t1.Sub(t0))
			if sh.interval > 0 {
				lat = int64(t1.Sub(due))
			}
			w.rec.ok(lat, int64(t1.Sub(t0)), part)
		}
		if !sh.end.IsZero() && !t1.Before(sh.end) {
			return
		}
	}
}

func timeoutKey(d time.Duration) string {
	return "DeadlineExceeded: no response within --command-timeout " + d.String()
}

// stopped reports whether stop is closed (never for nil).
func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// renew replaces a context that the watchdog cancelled.
func (w *worker) renew() context.Context {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx.Err() != nil {
		w.cancel()
		w.ctx, w.cancel = context.WithCancel(w.parent)
	}
	return w.ctx
}

// watchdog cancels requests that run longer than the command timeout, so
// that a stalled server cannot hang the run, without a timer per request.
func watchdog(workers []*worker, sh *shared, stop <-chan struct{}) {
	tick := min(max(sh.timeout/10, 10*time.Millisecond), 100*time.Millisecond)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			limit := int64(now.Sub(sh.start)-sh.timeout) + 1
			for _, w := range workers {
				s := w.inflight.Load()
				if s <= 0 || s > limit {
					continue
				}
				w.mu.Lock()
				if w.inflight.CompareAndSwap(s, expired) {
					w.cancel()
				}
				w.mu.Unlock()
			}
		}
	}
}
