package capacity

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/loadrun"
	"github.com/etcdperf/etcdperf/internal/profile"
	"github.com/etcdperf/etcdperf/internal/promscrape"
	"github.com/etcdperf/etcdperf/internal/result"
)

// DefaultSoakInterval is the span of each sample of a soak's series: at
// 1,000 puts/s its p99s rest on 5,000 requests.
const DefaultSoakInterval = 5 * time.Second

// SoakRateFlag is result.Soak.RateFrom of a soak at --soak-rate (one that
// holds the sweep's answer: result.SoakRateCapacity).
const SoakRateFlag = "--soak-rate"

// SoakFunc runs a soak's load, marking it every l.Interval (l.Tick), and
// returns the host's figures over it (its per-second series, nil when not
// measured).
type SoakFunc func(ctx context.Context, l Load) (*result.Host, error)

// SoakOptions configure a soak: one rate held for a while.
type SoakOptions struct {
	// Target is where it runs: an embedded etcd (DataDir, Members, Faults)
	// of its own, or a cluster's endpoints.
	Target lab.TargetOptions
	// Base is check perf's profile whose key and value sizes the puts use.
	Base profile.Profile
	// Rate is the offered rate (puts/s), RateFrom where it came from
	// (result.SoakRateCapacity, SoakRateFlag).
	Rate     float64
	RateFrom string
	// Duration is how long it holds the rate; Interval the span of each
	// sample (default DefaultSoakInterval).
	Duration, Interval time.Duration
	// Device is the block device under the data (for /proc/diskstats).
	Device string
	// Started, when set, is called once etcd is up and its keys written,
	// as the load begins;
	// Sampled after each interval with its sample (its device figures from
	// the samples taken by then).
	Started func()
	Sampled func(result.SoakSample)
	// Run runs the load.
	Run SoakFunc
}

// Soak holds o.Rate for o.Duration (open loop, check perf's key and value
// sizes, clients as check perf's profiles grow them) in one load, and
// records a sample every interval: the rate achieved, etcd's WAL fsync
// and backend commit p99 over it, the device's writes. On an etcd of its
// own it writes as the capacity sweep's steps do (the same key space,
// written first and overwritten, the history compacted every second), so
// that a soak at a rate confirms or refutes the sweep's answer there; on a
// cluster's endpoints, a new key each, deleted after. It returns the
// series, not judged (judge.Soak judges its steady state), with what it
// measured when ctx ends or the run fails; nil when etcd could not be
// started or reached.
func Soak(ctx context.Context, o SoakOptions) (*result.Soak, error) {
	if o.Interval <= 0 {
		o.Interval = DefaultSoakInterval
	}
	clients := profile.ClientsFor(o.Rate)
	s := &result.Soak{Rate: o.Rate, RateFrom: o.RateFrom, Clients: clients, ValueSize: o.Base.ValSize, KeySize: o.Base.KeySize,
		IntervalSeconds: o.Interval.Seconds()}
	sp, t, err := openSpace(ctx, "soak", o.Target, o.Base, o.Device)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	s.KeySpace, s.CompactionSeconds = sp.keySpace(), sp.compactEvery(o.Duration).Seconds()
	prof := o.Base
	prof.Rate, prof.Clients = o.Rate, clients
	l := sp.load(prof, o.Duration)
	// No compaction after the load: the soak's own etcd goes with it, and
	// on a storage that gave out (a burst volume at its baseline) that
	// compaction outlasted its request's timeout and left the soak
	// without a verdict.
	l.Interval, l.Compact = o.Interval, false
	var mu sync.Mutex
	var bounds [][2]time.Duration
	l.Tick = func(t loadrun.Tick) {
		smp := Sample(t)
		mu.Lock()
		s.Series = append(s.Series, smp)
		bounds = append(bounds, [2]time.Duration{t.Start, t.End})
		mu.Unlock()
		if o.Sampled != nil {
			o.Sampled(smp)
		}
	}
	if o.Started != nil {
		o.Started()
	}
	host, err := o.Run(ctx, l)
	mu.Lock()
	defer mu.Unlock()
	if host != nil && host.Device != "" {
		// Every second's sample is in now: each interval's device figures
		// from all of them.
		for i, b := range bounds {
			deviceFigures(&s.Series[i], loadrun.HostIn(host.Series, b[0], b[1]))
		}
	}
	if n := len(s.Series); n > 0 {
		s.Seconds = s.Series[n-1].T
	}
	if err != nil {
		return s, fmt.Errorf("soak at %.0f puts/s: %w", o.Rate, err)
	}
	return s, nil
}

// Sample is one interval's sample: the puts that succeeded and their p99,
// etcd's p99s over the interval, the device's writes in the host's samples
// taken by then.
func Sample(t loadrun.Tick) result.SoakSample {
	secs := (t.End - t.Start).Seconds()
	smp := result.SoakSample{T: t.End.Round(time.Millisecond).Seconds(), Seconds: secs, Errors: t.Failed, RequestP99: t.RequestP99}
	if secs > 0 {
		smp.Achieved = float64(t.Succeeded) / secs
	}
	if wal := t.Mark.Hist(promscrape.MetricWALFsync); wal.Count > 0 {
		smp.WALFsyncP99, smp.WALFsyncBound, _ = wal.Quantile(0.99)
		if secs > 0 {
			smp.WALFsyncs = wal.Count / secs
		}
	}
	if commit := t.Mark.Hist(promscrape.MetricBackendCommit); commit.Count > 0 {
		smp.BackendCommitP99, smp.BackendCommitBound, _ = commit.Quantile(0.99)
	}
	deviceFigures(&smp, t.Host)
	return smp
}

// deviceFigures sets a sample's device figures from the host's samples in
// its interval: rates over their time, the write time over their writes.
func deviceFigures(smp *result.SoakSample, host []result.HostSample) {
	var secs, writes, bps, util, wait float64
	for _, h := range host {
		secs += h.Seconds
		bps += h.WriteBytes * h.Seconds
		util += h.Util * h.Seconds
		writes += h.WriteIOPS * h.Seconds
		wait += h.WriteAwait * h.WriteIOPS * h.Seconds
	}
	if secs == 0 {
		return
	}
	smp.DeviceIOPS, smp.DeviceWriteBytes, smp.DeviceUtil = writes/secs, bps/secs, util/secs
	smp.DeviceAwait = 0
	if writes > 0 {
		smp.DeviceAwait = wait / writes
	}
}
