package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/etcdperf/etcdperf/internal/capacity"
	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/load"
	"github.com/etcdperf/etcdperf/internal/loadrun"
	"github.com/etcdperf/etcdperf/internal/profile"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

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
	return cmp.Or(ss.Interval, capacity.DefaultSoakInterval)
}

// sweepSettings are the capacity sweep and the soak that check and doctor
// run after their load, on the same storage or cluster.
type sweepSettings struct {
	// capacity sweeps (capacity.Options), each step step long, its answer
	// held for confirm; dbSize, sizesFrom, demand and demandFrom are the
	// sweep's options of the same names.
	capacity      bool
	step, confirm time.Duration
	dbSize        int64
	sizesFrom     capacity.SizesFrom
	demand        float64
	demandFrom    string
	soak          SoakSettings
	base          profile.Profile
	device        string
	criteria      []limits.Criterion
	// where names the storage or the cluster in the progress, phase tells
	// it (nil: nobody listens); target is the etcd of each phase, under
	// the run ID with suffix.
	where  string
	phase  func(string)
	target func(suffix string) lab.TargetOptions
}

// run sweeps the capacity after the load first (the verdict's own, the
// sweep's first step), then holds the soak: --soak-rate, else the sweep's
// answer. Each returns what it measured, nil when it did not run.
func (w sweepSettings) run(ctx context.Context, first *result.Result) (*result.Capacity, *result.Soak, error) {
	var c *result.Capacity
	if w.capacity {
		var err error
		if c, err = w.sweep(ctx, first); err != nil {
			return c, nil, err
		}
	}
	if w.soak.Duration <= 0 {
		return c, nil, nil
	}
	s, err := w.hold(ctx, c)
	return c, s, err
}

func (w sweepSettings) say(format string, args ...any) {
	if w.phase != nil {
		w.phase(fmt.Sprintf(format, args...))
	}
}

// sweep runs the capacity sweep and judges it (judge.Capacity), for the
// soak that holds its answer.
func (w sweepSettings) sweep(ctx context.Context, first *result.Result) (*result.Capacity, error) {
	w.say("starting etcd on %s for the capacity sweep", w.where)
	c, err := capacity.Sweep(ctx, capacity.Options{
		Target: w.target("-capacity"), Base: w.base, First: firstStep(first, w.base, w.criteria), Step: cmp.Or(w.step, capacity.DefaultStep),
		Device: w.device, Criteria: w.criteria, Demand: w.demand, DemandFrom: w.demandFrom, Confirm: w.confirm, DBSize: w.dbSize, SizesFrom: w.sizesFrom,
		Filling: func(b int64) {
			w.say("capacity sweep on %s: filling its etcd with %s first", w.where, units.Bytes(float64(b)))
		},
		Stepping: func(rate float64, clients int, confirm bool) {
			if confirm {
				w.say("capacity sweep on %s: holding %.0f puts/s for %s to confirm it", w.where, rate, w.confirm)
				return
			}
			w.say("capacity sweep on %s: %.0f puts/s from %d clients", w.where, rate, clients)
		},
		Run: capacityStep(w.criteria),
	})
	if c != nil {
		judge.Capacity(c, w.criteria)
	}
	return c, err
}

// firstStep is the verdict's own load, judged as a check is (the target
// judges it later, as a whole), as the sweep's first step; nil when no
// load ran.
func firstStep(r *result.Result, base profile.Profile, criteria []limits.Criterion) *result.CapacityStep {
	if r == nil || r.Bench == nil {
		return nil
	}
	first := *r
	first.Kind, first.Checks, first.Findings, first.Doctor, first.Runs = result.KindCheck, nil, nil, nil, nil
	judge.Judge(&first, criteria)
	st := judge.CapacityStep(&first, base.Rate, base.Clients, nil, criteria)
	return &st
}

// capacityStep runs a step of the sweep as check perf's load, judged as a
// check is (judge.CapacityStep); a hold (l.Interval set) sampled every
// interval as a soak is.
func capacityStep(criteria []limits.Criterion) capacity.StepFunc {
	return func(ctx context.Context, l capacity.Load) (*result.CapacityStep, error) {
		var mu sync.Mutex
		var intervals []result.SoakSample
		o := CheckOptions{
			Target: l.Target, Profile: l.Profile, Duration: l.Duration, Criteria: criteria, Device: l.Device, AutoCompact: l.Compact,
			KeySpace: l.KeySpace, CompactEvery: l.CompactEvery, Prefix: l.Prefix, Overwrite: l.Overwrite,
		}
		if l.Interval > 0 {
			// A hold ends once the intervals it measured have decided it
			// whatever the rest measure (judge.HoldDecided).
			n := int(math.Round(float64(l.Duration) / float64(l.Interval)))
			stop, ended := make(chan struct{}), false
			o.Interval, o.Stop, o.Tick = l.Interval, stop, func(t loadrun.Tick) {
				mu.Lock()
				defer mu.Unlock()
				intervals = append(intervals, capacity.Sample(t))
				if decided, _ := judge.HoldDecided(intervals, n, criteria); !ended && decided {
					close(stop)
					ended = true
				}
			}
		}
		res, err := runCheck(ctx, o)
		if res == nil {
			return nil, err
		}
		res.Kind = result.KindCheck
		judge.Judge(res, criteria)
		mu.Lock()
		defer mu.Unlock()
		st := judge.CapacityStep(res, l.Profile.Rate, l.Profile.Clients, intervals, criteria)
		return &st, err
	}
}

// hold holds the soak: --soak-rate when set, else the sweep's answer c; a
// sweep that held no rate leaves nothing to hold.
func (w sweepSettings) hold(ctx context.Context, c *result.Capacity) (*result.Soak, error) {
	ss := w.soak
	rate, from := ss.Rate, capacity.SoakRateFlag
	if rate <= 0 {
		if c == nil || c.PutsPerS <= 0 {
			return &result.Soak{RateFrom: result.SoakRateCapacity}, nil
		}
		rate, from = c.PutsPerS, result.SoakRateCapacity
	}
	w.say("starting etcd on %s for the soak", w.where)
	holding := fmt.Sprintf("soak on %s: holding %s puts/s for %s", w.where, units.Thousands(rate), ss.Duration)
	return capacity.Soak(ctx, capacity.SoakOptions{
		Target: w.target("-soak"), Base: w.base, Rate: rate, RateFrom: from, Duration: ss.Duration, Interval: ss.interval(), Device: w.device,
		Started: func() { w.say("%s", holding) },
		Sampled: func(s result.SoakSample) {
			line := fmt.Sprintf("%s; at %.0fs: %s puts/s, WAL fsync p99 %s", holding, s.T, units.Thousands(s.Achieved), units.P99(s.WALFsyncP99, s.WALFsyncBound))
			if s.DeviceIOPS > 0 {
				line += fmt.Sprintf(", device %s IOPS", units.Thousands(s.DeviceIOPS))
			}
			w.say("%s", line)
		},
		Run: soakLoad,
	})
}

// soakLoad runs a soak's load as check perf's puts (over the key space
// and with the compactions of l), marked every interval.
func soakLoad(ctx context.Context, l capacity.Load) (*result.Host, error) {
	p := l.Profile
	_, obs, err := observedPuts(ctx, puts{
		target: l.Target, device: l.Device, compact: l.Compact, compactEvery: l.CompactEvery, overwrite: l.Overwrite,
		load: load.Options{
			Clients: p.Clients, Duration: l.Duration, Rate: p.Rate,
			KeySize: p.KeySize, ValSize: p.ValSize, KeySpaceSize: cmp.Or(l.KeySpace, checkKeySpace), Prefix: l.Prefix,
		},
		interval: l.Interval, tick: l.Tick,
	})
	if obs == nil {
		return nil, err
	}
	return obs.Host, err
}
