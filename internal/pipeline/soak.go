package pipeline

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/load"
	"github.com/etcdperf/etcdperf/internal/loadrun"
	"github.com/etcdperf/etcdperf/internal/promscrape"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/sysinfo"
	"github.com/etcdperf/etcdperf/internal/units"
)

// DefaultSoakInterval is the span of each sample of a soak's series: at
// 1,000 puts/s its p99s rest on 5,000 requests.
const DefaultSoakInterval = 5 * time.Second

// Where a soak's rate came from.
const (
	SoakRateCapacity = "capacity"
	SoakRateFlag     = "--soak-rate"
)

// SoakOptions configure a soak: one rate held for a while.
type SoakOptions struct {
	// Target is where it runs: an embedded etcd (DataDir, Members, Faults)
	// of its own, or a cluster's endpoints.
	Target cluster.TargetOptions
	// Base is check perf's profile whose key and value sizes the puts use.
	Base check.Profile
	// Rate is the offered rate (puts/s), RateFrom where it came from
	// (SoakRateCapacity, SoakRateFlag).
	Rate     float64
	RateFrom string
	// Duration is how long it holds the rate; Interval the span of each
	// sample (default DefaultSoakInterval).
	Duration, Interval time.Duration
	// Device is the block device under the data (for /proc/diskstats).
	Device   string
	Criteria []check.Criterion
	// Started, when set, is called once etcd is up and the load begins;
	// Sampled after each interval with its sample (its device figures from
	// the samples taken by then).
	Started func()
	Sampled func(result.SoakSample)
}

// Soak holds o.Rate for o.Duration (open loop, check perf's key and value
// sizes, clients as check perf's profiles grow them) in one load run on an
// etcd of its own, records a sample every interval (the rate achieved,
// etcd's WAL fsync and backend commit p99 over it, the device's writes),
// and judges its steady state (judge.Soak). It returns what it measured
// when ctx ends or the run fails.
func Soak(ctx context.Context, o SoakOptions) (*result.Soak, error) {
	if o.Interval <= 0 {
		o.Interval = DefaultSoakInterval
	}
	clients := check.ClientsFor(o.Rate)
	s := &result.Soak{Rate: o.Rate, RateFrom: o.RateFrom, Clients: clients, ValueSize: o.Base.ValSize, KeySize: o.Base.KeySize,
		IntervalSeconds: o.Interval.Seconds()}
	device := o.Device
	embedded := len(o.Target.Conn.Endpoints) == 0
	if embedded && device == "" {
		if m, err := sysinfo.FindMount(dataDirOrDot(o.Target.DataDir)); err == nil {
			device = m.Device
		}
	}
	var mu sync.Mutex
	var bounds [][2]time.Duration
	_, obs, err := observedPuts(ctx, puts{
		target: o.Target, started: o.Started, device: device,
		load: load.Options{
			Clients: clients, Duration: o.Duration, Rate: o.Rate,
			KeySize: o.Base.KeySize, ValSize: o.Base.ValSize, KeySpaceSize: checkKeySpace,
		},
		interval: o.Interval,
		tick: func(t loadrun.Tick) {
			smp := soakSample(t, t.Host)
			mu.Lock()
			s.Series = append(s.Series, smp)
			bounds = append(bounds, [2]time.Duration{t.Start, t.End})
			mu.Unlock()
			if o.Sampled != nil {
				o.Sampled(smp)
			}
		},
	})
	mu.Lock()
	defer mu.Unlock()
	if obs != nil && obs.Host != nil && obs.Host.Device != "" {
		// Every second's sample is in now: each interval's device figures
		// from all of them.
		for i, b := range bounds {
			deviceFigures(&s.Series[i], loadrun.HostIn(obs.Host.Series, b[0], b[1]))
		}
	}
	if n := len(s.Series); n > 0 {
		s.Seconds = s.Series[n-1].T
	}
	judge.Soak(s, o.Criteria)
	if err != nil {
		return s, fmt.Errorf("soak at %.0f puts/s: %w", o.Rate, err)
	}
	return s, nil
}

// soakSample is one interval's sample: the puts that succeeded, etcd's
// p99s over the interval, the device's writes in host's samples.
func soakSample(t loadrun.Tick, host []result.HostSample) result.SoakSample {
	secs := (t.End - t.Start).Seconds()
	smp := result.SoakSample{T: t.End.Round(time.Millisecond).Seconds(), Seconds: secs, Errors: t.Failed}
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
	deviceFigures(&smp, host)
	return smp
}

// deviceFigures sets a sample's device figures from the host's samples in
// its interval: rates over their time, the write time over their writes.
func deviceFigures(smp *result.SoakSample, host []result.HostSample) {
	var secs, writes, iops, bps, util, wait float64
	for _, h := range host {
		secs += h.Seconds
		iops += h.WriteIOPS * h.Seconds
		bps += h.WriteBytes * h.Seconds
		util += h.Util * h.Seconds
		writes += h.WriteIOPS * h.Seconds
		wait += h.WriteAwait * h.WriteIOPS * h.Seconds
	}
	if secs == 0 {
		return
	}
	smp.DeviceIOPS, smp.DeviceWriteBytes, smp.DeviceUtil = iops/secs, bps/secs, util/secs
	smp.DeviceAwait = 0
	if writes > 0 {
		smp.DeviceAwait = wait / writes
	}
}

// soakAfter holds a rate after a check's or doctor's load and sweep:
// o.Rate (--soak-rate) when set, else the sweep's answer c. A sweep that
// held no rate leaves nothing to hold.
func soakAfter(ctx context.Context, o SoakOptions, c *result.Capacity) (*result.Soak, error) {
	if o.Rate <= 0 {
		if c == nil || c.PutsPerS <= 0 {
			return &result.Soak{RateFrom: SoakRateCapacity, Answer: "the capacity sweep held no rate: nothing to hold"}, nil
		}
		o.Rate, o.RateFrom = c.PutsPerS, SoakRateCapacity
	} else if o.RateFrom == "" {
		o.RateFrom = SoakRateFlag
	}
	return Soak(ctx, o)
}

// SoakSettings are a command's --soak flags.
type SoakSettings struct {
	// Duration holds the rate that long (0: no soak); Rate is --soak-rate
	// (0: the sweep's answer); Interval the span of each sample.
	Duration, Interval time.Duration
	Rate               float64
	// Phase, when set, is told what the soak does: its start and each
	// interval's figures.
	Phase func(string)
}

func (ss SoakSettings) interval() time.Duration {
	if ss.Interval <= 0 {
		return DefaultSoakInterval
	}
	return ss.Interval
}

// run holds the soak for a check or doctor on target.
func (ss SoakSettings) run(ctx context.Context, target cluster.TargetOptions, base check.Profile, device string, criteria []check.Criterion, c *result.Capacity, where string) (*result.Soak, error) {
	interval := ss.interval()
	phase := func(format string, args ...any) {
		if ss.Phase != nil {
			ss.Phase(fmt.Sprintf(format, args...))
		}
	}
	o := SoakOptions{Target: target, Base: base, Rate: ss.Rate, Duration: ss.Duration, Interval: interval, Device: device, Criteria: criteria}
	rate := func() float64 {
		if ss.Rate > 0 || c == nil {
			return ss.Rate
		}
		return c.PutsPerS
	}
	phase("starting etcd on %s for the soak", where)
	o.Started = func() { phase("soak on %s: holding %s puts/s for %s", where, thousands(rate()), ss.Duration) }
	o.Sampled = func(s result.SoakSample) {
		w := fmt.Sprintf("soak on %s: holding %s puts/s for %s; at %.0fs: %s puts/s, WAL fsync p99 %s", where, thousands(rate()), ss.Duration,
			s.T, thousands(s.Achieved), p99Text(s.WALFsyncP99, s.WALFsyncBound))
		if s.DeviceIOPS > 0 {
			w += fmt.Sprintf(", device %s IOPS", thousands(s.DeviceIOPS))
		}
		phase("%s", w)
	}
	return soakAfter(ctx, o, c)
}

// thousands formats a rate with thousands separators: 4,000.
func thousands(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func p99Text(v float64, bound bool) string {
	if bound {
		return "<= 1ms"
	}
	return units.Seconds(v)
}
