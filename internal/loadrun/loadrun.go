// Package loadrun is one load run on etcd, as bench, check, datascale,
// doctor and the capacity sweep make it: open the target, make sure the key
// prefix is the run's own and writable, run the load (internal/load) in a
// window on the members (internal/memberwatch), delete the run's keys, and
// say in one line where etcd stopped answering when it did. Judging the
// run is its caller's.
package loadrun

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/hist"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/load"
	"github.com/etcdperf/etcdperf/internal/memberwatch"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/sysinfo"
)

// Options configure a load run (`etcdperf bench`, and the loads of check
// and doctor).
type Options struct {
	// Target is the etcd to load: external endpoints or embedded members.
	Target lab.TargetOptions
	// Load is the workload; its Prefix defaults to /etcdperf/<run id>/.
	Load load.Options
	// Conns is the number of gRPC connections the clients share.
	Conns int
	// TargetLeader sends every request to the leader.
	TargetLeader bool
	// KeepKeys leaves the keys under the prefix; Compact compacts etcd's
	// history at the end (after the keys are deleted).
	KeepKeys, Compact bool
	// Overwrite says the prefix holds keys the caller wrote for the run to
	// overwrite (a capacity sweep's key space, written once for all its
	// steps): the prefix need not be free, and the keys stay. With
	// Compact, etcd's history is compacted to the run's last revision at
	// the end, and the run waits until the compaction is applied, so that
	// the next run starts with no history to compact.
	Overwrite bool
	// CompactEvery, when positive, compacts etcd's history to its latest
	// revision while the load runs, at (k-½)·CompactEvery from its start
	// (k = 1, 2, ...): a run of any length then holds its share of
	// compactions of its own history, one per CompactEvery, as a long
	// run of etcd compacting at that period does.
	CompactEvery time.Duration
	// Started, when set, is called once etcd is up and the load begins.
	Started func()
	// Window shapes the window on the members over the load (check and
	// doctor sample the host's CPUs and disk in it too).
	Window memberwatch.Options
	// Interval, when positive with Tick, marks the window every Interval
	// while the load runs, and calls Tick with each interval's figures
	// (from the one goroutine that marks the window; a last interval
	// shorter than Interval is not reported).
	Interval time.Duration
	Tick     func(Tick)
}

// Tick is one interval of a load run (Options.Interval).
type Tick struct {
	// N counts the intervals from 1; Start and End are the interval's
	// bounds since the window opened.
	N          int
	Start, End time.Duration
	// Mark is the members' span over the interval.
	Mark memberwatch.Mark
	// Succeeded and Failed count the requests that completed in it;
	// RequestP99 is the p99 latency of those that succeeded in the load's
	// one-second samples taken within it (seconds, 0: none).
	Succeeded, Failed int64
	RequestP99        float64
	// Host is the host's per-second samples so far whose middle falls in
	// the interval (the one that ends with it may come later: HostIn on the
	// window's whole series after the run has them all).
	Host []result.HostSample
}

// HostIn is the samples of series (T: each one's end in seconds since the
// window opened) whose middle falls in (start, end].
func HostIn(series []result.HostSample, start, end time.Duration) []result.HostSample {
	var out []result.HostSample
	for _, h := range series {
		if mid := h.T - h.Seconds/2; mid > start.Seconds() && mid <= end.Seconds() {
			out = append(out, h)
		}
	}
	return out
}

// ticks marks win every o.Interval until stop closes, calling o.Tick.
func ticks(ctx context.Context, win *memberwatch.Window, o Options, p *load.Progress, stop <-chan struct{}) {
	t0 := time.Now()
	t := time.NewTimer(o.Interval)
	defer t.Stop()
	prevOK, prevFailed := p.Succeeded(), p.Failed()
	p.TakeLatency() // from the first interval on
	prev := time.Duration(0)
	for n := 1; ; n++ {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		t.Reset(time.Until(t0.Add(time.Duration(n+1) * o.Interval)))
		end := time.Since(t0)
		mark := win.Mark(ctx)
		ok, failed := p.Succeeded(), p.Failed()
		p99, _ := p.TakeLatency()
		o.Tick(Tick{N: n, Start: prev, End: end, Mark: mark, Succeeded: ok - prevOK, Failed: failed - prevFailed, RequestP99: p99,
			Host: HostIn(win.HostSeries(), prev, end)})
		prev, prevOK, prevFailed = end, ok, failed
	}
}

// compactions are what compacting did: how many, and the error that
// stopped it.
type compactions struct {
	n   int
	err error
}

// compacting compacts etcd's history to its latest revision (read from a
// get of key) at (k-½)·every from now until stop closes or ctx ends.
func compacting(ctx context.Context, c *cluster.Client, key string, every time.Duration, stop <-chan struct{}) compactions {
	var done compactions
	t0 := time.Now()
	t := time.NewTimer(every / 2)
	defer t.Stop()
	for k := 1; ; k++ {
		select {
		case <-stop:
			return done
		case <-ctx.Done():
			return done
		case <-t.C:
		}
		t.Reset(time.Until(t0.Add(time.Duration(k)*every + every/2)))
		cctx, cancel := context.WithTimeout(ctx, c.CommandTimeout())
		r, err := c.Get(cctx, key)
		if err == nil {
			_, err = c.Compact(cctx, r.Header.Revision)
		}
		cancel()
		if errors.Is(err, rpctypes.ErrCompacted) {
			err = nil // compacted there already: no write since
		}
		if err != nil {
			if ctx.Err() == nil {
				done.err = err
			}
			return done
		}
		done.n++
	}
}

// ErrPrefixInUse is returned when the key prefix already holds keys.
var ErrPrefixInUse = errors.New("the key prefix is in use")

// cleanupTimeout bounds deleting the run's keys at the end.
const cleanupTimeout = 30 * time.Second

// Defaults fills the run id and the prefix when they are not set.
func (o *Options) Defaults() {
	if o.Target.RunID == "" {
		o.Target.RunID = cluster.NewRunID()
	}
	if o.Load.Prefix == "" {
		o.Load.Prefix = "/etcdperf/" + o.Target.RunID + "/"
	}
}

// Measured is what a load run measured: the load's own figures (a bench
// section), etcd's over the load (a server section), where it ran (its
// environment and target), and what the window on the members saw (Obs,
// nil when the load did not run). Error says why the run ended early or
// failed ("interrupted" when ctx ended). The caller assembles them into
// its Result.
type Measured struct {
	Bench  *result.Bench
	Server *result.Server
	Env    *result.Env
	Target *result.Target
	Obs    *memberwatch.Observation
	Error  string
}

// Run loads etcd and measures the client's view (latency, throughput,
// errors) with etcd's own, in a window on the members over the load. It
// writes only under its key prefix, refuses a prefix that has keys, and
// deletes them at the end, also when ctx ends midway (with Overwrite, it
// uses the caller's keys under the prefix and keeps them); an embedded
// etcd is removed. An interrupted run returns what it measured with the
// error; a run that could not start returns nil.
func Run(ctx context.Context, o Options) (m *Measured, err error) {
	o.Defaults()
	if err := o.Load.Validate(); err != nil {
		return nil, err
	}
	t, err := lab.Open(ctx, o.Target)
	if err != nil {
		return nil, err
	}
	m = &Measured{Env: Env(t), Target: TargetSection(t)}
	defer CloseTarget(t, &err, func(msg string) {
		if m != nil {
			m.Error = result.JoinError(m.Error, msg)
		}
	})
	cli := t.Client()
	if d := t.VolumeDevice(); d != "" && o.Window.Device != "" {
		// A member on a capped volume writes to the volume's device, not
		// to the disk of the data dir under it.
		o.Window.Device = d
	}

	// The prefix must be ours alone.
	if !o.Overwrite {
		if err := PrefixFree(ctx, cli, o.Load.Prefix, o.Target.Conn.User); err != nil {
			return nil, err
		}
	}
	if err := checkWritable(ctx, cli, o); err != nil {
		return nil, err
	}

	conns, err := OpenConns(ctx, t, o)
	defer load.Close(conns)
	if err != nil {
		return nil, err
	}

	win := memberwatch.StartTarget(ctx, t, o.Window)
	if o.Started != nil {
		o.Started()
	}
	if o.Load.StallTimeout == 0 {
		o.Load.StallTimeout = cli.CommandTimeout()
	}
	var stopTicks chan struct{}
	var ticking sync.WaitGroup
	if o.Interval > 0 && o.Tick != nil {
		if o.Load.Progress == nil {
			o.Load.Progress = &load.Progress{}
		}
		stopTicks = make(chan struct{})
		ticking.Go(func() { ticks(ctx, win, o, o.Load.Progress, stopTicks) })
	}
	var stopCompacting chan struct{}
	var compacted compactions
	if o.CompactEvery > 0 {
		stopCompacting = make(chan struct{})
		ticking.Go(func() { compacted = compacting(ctx, cli, o.Load.Prefix, o.CompactEvery, stopCompacting) })
	}
	st, runErr := load.Run(ctx, conns, o.Load)
	// The window is the ticks' until they stop.
	if stopTicks != nil {
		close(stopTicks)
	}
	if stopCompacting != nil {
		close(stopCompacting)
	}
	ticking.Wait()
	// The end of the run is measured and cleaned up even after Ctrl-C; after
	// etcd stopped answering, within one more command timeout.
	endCtx, endCancel := endContext(ctx, runErr, cli.CommandTimeout())
	defer endCancel()
	obs := win.Stop(endCtx)
	var notes []string
	switch {
	case o.Overwrite:
		// nothing to wait for on an etcd about to be removed when ctx ended
		if o.Compact && ctx.Err() == nil {
			if err := compactHistory(endCtx, cli, o.Load.Prefix); err != nil {
				runErr = errors.Join(runErr, err)
			}
		}
	case !o.KeepKeys && allRefused(runErr, obs.Last):
		runErr = joinCleanupErr(runErr, errors.New("every member refuses connections"), o.Load.Prefix)
	case !o.KeepKeys:
		if n, err := deleteKeys(endCtx, cli, o.Load.Prefix, o.Compact); err != nil {
			runErr = joinCleanupErr(runErr, err, o.Load.Prefix)
		} else if n > 0 && t.Kind() == lab.External {
			notes = append(notes, fmt.Sprintf("deleted the run's %d keys under %s", n, o.Load.Prefix))
		}
	default:
		notes = append(notes, fmt.Sprintf("kept the run's keys under %s (--keep-keys)", o.Load.Prefix))
	}
	if st == nil {
		return nil, runErr
	}
	m.Bench, m.Server, m.Obs = benchSection(st, o), obs.Server, obs
	// etcdperf's own CPU, when no member shares its process.
	if obs.ClientOnly && (t.Kind() == lab.External || len(t.Members()) > 1 || o.Target.Separate) {
		m.Bench.ClientCPU = obs.ClientShare()
	}
	if compacted.err != nil {
		notes = append(notes, fmt.Sprintf("compacting etcd's history during the load (every %s) stopped after %d compactions: %v",
			o.CompactEvery, compacted.n, compacted.err))
	}
	m.Bench.Notes = append(append(m.Bench.Notes, notes...), obs.Notes...)
	if o.Target.KeepData && t.RunDir() != "" {
		m.Bench.Notes = append(m.Bench.Notes, "kept the embedded etcd's data and logs in "+t.RunDir()+" (--keep-data)")
	}
	runErr = explainStall(runErr, t, m.Bench)
	if runErr != nil {
		m.Error = runErr.Error()
		if errors.Is(runErr, context.Canceled) {
			m.Error = "interrupted"
		}
	}
	return m, runErr
}

// CloseTarget closes t when a command or a run ends; a failure joins
// err, and is handed to record (the Result's or the measurements' error)
// when that is set.
func CloseTarget(t *lab.Target, err *error, record func(msg string)) {
	if cerr := t.Close(); cerr != nil {
		*err = errors.Join(*err, cerr)
		if record != nil {
			record(cerr.Error())
		}
	}
}

// PrefixFree checks that no key is under prefix: the run's keys must be
// its own.
func PrefixFree(ctx context.Context, c *cluster.Client, prefix, user string) error {
	if n, err := c.CountKeys(ctx, prefix); err != nil {
		return explainPrefixErr(prefix, user, err)
	} else if n > 0 {
		return fmt.Errorf("%w: %q already holds %d keys; choose another --prefix, or delete them (etcdctl del --prefix %s)", ErrPrefixInUse, prefix, n, prefix)
	}
	return nil
}

// Env is the environment of a run on t: the storage of an embedded etcd,
// or the host, with etcd's version and endpoints.
func Env(t *lab.Target) *result.Env {
	var env *result.Env
	if t.Kind() == lab.Embedded {
		// The storage the user chose (--data-dir), not the run's folder
		// in it, which is gone when the Result is read.
		env = sysinfo.DirEnv(filepath.Dir(t.RunDir()))
	} else {
		env = sysinfo.HostEnv()
	}
	env.EtcdVersion = t.Client().Version()
	env.Endpoints = strings.Join(t.Client().Options().Endpoints, ",")
	return env
}

// TargetSection is the Result's target section of t.
func TargetSection(t *lab.Target) *result.Target {
	tg := &result.Target{Kind: t.Kind(), Endpoints: t.Client().Options().Endpoints, Version: t.Client().Version(), DataDir: t.RunDir()}
	if t.Kind() == lab.External {
		tg.EndpointsFrom = t.Client().Options().EndpointsFrom
	}
	for _, m := range t.Members() {
		tg.Members = append(tg.Members, result.TargetMember{Name: m.Name, ClientURL: m.ClientURL, MetricsURL: m.MetricsURL,
			Leader: m.Leader, Version: m.Version, DataDir: m.DataDir})
	}
	return tg
}

// OpenConns opens the connections the clients share: all to the leader
// with TargetLeader, else one endpoint each in turn, as etcd's benchmark.
// When the load speaks HTTP/2 itself (put, range, txn without auth), each
// connection is its own, and etcd's client, only a fallback for large
// requests, is opened once per endpoint.
func OpenConns(ctx context.Context, t *lab.Target, o Options) ([]load.Conn, error) {
	eps := t.Client().Options().Endpoints
	if o.TargetLeader {
		l, ok := t.Leader()
		if !ok || l.ClientURL == "" {
			return nil, errors.New("--target-leader: the cluster reports no leader with a client URL")
		}
		eps = []string{l.ClientURL}
	}
	return load.Dial(ctx, t.Client(), eps, o.Conns, o.Load)
}

// deleteKeys deletes every key under prefix and, with compact, compacts
// etcd's history up to the deletion.
func deleteKeys(ctx context.Context, c *cluster.Client, prefix string, compact bool) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, max(cleanupTimeout, c.CommandTimeout()))
	defer cancel()
	r, err := c.Delete(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return 0, fmt.Errorf("delete the run's keys under %s (delete them with etcdctl del --prefix %s): %w", prefix, prefix, err)
	}
	if compact {
		if _, err := c.Compact(ctx, r.Header.Revision); err != nil {
			return r.Deleted, fmt.Errorf("compact etcd at revision %d: %w", r.Header.Revision, err)
		}
	}
	return r.Deleted, nil
}

// compactHistory compacts etcd's history to its latest revision (read
// from a get of key) and waits until the compaction is applied.
func compactHistory(ctx context.Context, c *cluster.Client, key string) error {
	ctx, cancel := context.WithTimeout(ctx, max(cleanupTimeout, c.CommandTimeout()))
	defer cancel()
	r, err := c.Get(ctx, key)
	if err == nil {
		_, err = c.Compact(ctx, r.Header.Revision, clientv3.WithCompactPhysical())
	}
	if err != nil && !errors.Is(err, rpctypes.ErrCompacted) {
		return fmt.Errorf("compact etcd's history after the load: %w", err)
	}
	return nil
}

// The latency distribution etcd's benchmark prints.
var benchPercentiles = []float64{10, 25, 50, 75, 90, 95, 99, 99.9}

func benchSection(st *load.Stats, o Options) *result.Bench {
	b := &result.Bench{
		Workload:   st.Workload,
		Ops:        st.Ops,
		Errors:     st.Errors,
		Seconds:    st.Elapsed.Seconds(),
		Throughput: st.Throughput(),
	}
	b.Description = o.Load.Describe()
	b.Clients, b.Conns, b.Rate = o.Load.Clients, max(o.Conns, 1), o.Load.Rate
	if st.Latency.Count() > 0 {
		l := st.Latency.Latency(true)
		b.Latency = &l
		b.Histogram = responseHistogram(st.Latency)
		for _, p := range benchPercentiles {
			b.Percentiles = append(b.Percentiles, result.Percentile{P: p, Value: st.Latency.Quantile(p).Seconds()})
		}
	}
	if st.Service != nil && st.Service.Count() > 0 {
		l := st.Service.Latency(true)
		b.ServiceLatency = &l
	}
	if st.SendLag != nil && st.SendLag.Count() > 0 {
		l := st.SendLag.Latency(false)
		b.SendLag = &l
		busy := st.BusyLag.Seconds()
		b.SendLagBusy = &busy
	}
	for _, p := range st.Parts {
		bp := result.BenchPart{Name: p.Name, Ops: p.Ops, Errors: p.Errors}
		if p.Latency != nil && p.Latency.Count() > 0 {
			l := p.Latency.Latency(false)
			bp.Latency = &l
		}
		b.Parts = append(b.Parts, bp)
	}
	b.Series = st.Series
	b.Notes = append(b.Notes, st.Notes...)
	return b
}

// responseHistogram is etcd benchmark's histogram: ten equal steps from
// the fastest to the slowest request, each with the requests in it.
func responseHistogram(h *hist.Histogram) []result.HistogramBucket {
	const steps = 10
	lo, hi := h.Min(), h.Max()
	step := (hi - lo) / steps
	bounds := make([]time.Duration, steps+1)
	for i := range bounds {
		bounds[i] = lo + time.Duration(i)*step
	}
	bounds[steps] = hi
	counts := h.CountsAtOrBelow(bounds)
	out := make([]result.HistogramBucket, len(bounds))
	var prev int64
	for i, b := range bounds {
		out[i] = result.HistogramBucket{LE: b.Seconds(), Count: counts[i] - prev}
		prev = counts[i]
	}
	return out
}
