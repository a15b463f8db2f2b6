package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/clusterstate"
	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/load"
	"github.com/etcdperf/etcdperf/internal/loadrun"
	"github.com/etcdperf/etcdperf/internal/memberwatch"
	"github.com/etcdperf/etcdperf/internal/profile"
	"github.com/etcdperf/etcdperf/internal/promscrape"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/sysinfo"
)

// CheckOptions configure `etcdperf check`: etcdctl check perf's load
// against an external cluster or an embedded etcd on the storage under
// test, judged by etcdctl's criteria and etcd's own metrics.
type CheckOptions struct {
	// Capacity sweeps the offered put rate after the load
	// (capacity.Sweep), each step CapacityStep long.
	Capacity     bool
	CapacityStep time.Duration
	// CapacityConfirm is how long the sweep holds its answer (0: no
	// confirm step).
	CapacityConfirm time.Duration
	// DBSize fills the sweep's own etcd first (capacity.Options.DBSize).
	DBSize int64
	// Soak holds a rate after the load (and the sweep): the sweep's answer
	// or Soak.Rate, for Soak.Duration (0: no soak).
	Soak SoakSettings
	// Target is the etcd to check. An embedded member always runs in a
	// process of its own, so that its CPU and memory are told apart from
	// the client's.
	Target lab.TargetOptions
	// Profile is the load model (profile.Profiles); Duration, when set,
	// replaces its 60s.
	Profile  profile.Profile
	Duration time.Duration
	// Prefix holds the run's keys (default /etcdperf/<run id>/).
	Prefix string
	// KeySpace bounds the keys the puts write, each a random one of them
	// (0: a new key each, as etcdctl check perf).
	KeySpace int
	// AutoCompact compacts etcd's history after the keys are deleted;
	// AutoDefrag then defragments every member of an external cluster.
	AutoCompact, AutoDefrag bool
	// CompactEvery, when positive, compacts etcd's history while the load
	// runs, once per CompactEvery (loadrun.Options.CompactEvery).
	CompactEvery time.Duration
	// Overwrite says Prefix holds the KeySpace keys for the puts to
	// overwrite, written by the caller; they stay
	// (loadrun.Options.Overwrite).
	Overwrite bool
	// Criteria are the limits to judge by (limits.Table, maybe overridden).
	Criteria []limits.Criterion
	// Device is the block device to watch in /proc/diskstats during the
	// load; by default the one under the embedded etcd's data dir.
	Device string
	// Progress counts requests as they complete; Started is called when
	// etcd is up and the load begins.
	Progress *load.Progress
	Started  func()
	// Interval and Tick, when set, mark the load every interval (a
	// capacity sweep's hold).
	Interval time.Duration
	Tick     func(loadrun.Tick)
	// Stop, when closed, ends the load before Duration, gracefully
	// (load.Options.Stop): a hold whose intervals so far have broken it.
	Stop <-chan struct{}
	// DefragMember, when set, is the live member whose next
	// defragmentation's stall the Result states (ExpectedDefrag), from its
	// /metrics before the load wrote anything: its database size in use
	// and its own past defragmentations. Nothing more is written for it.
	DefragMember string
}

// etcdctlPacingLimit is the rate from which etcdctl's pacer is known to
// fall short of its own profile (l and xl).
const etcdctlPacingLimit = 8000

// checkKeySpace makes every put write a new key, as etcdctl's random
// 63-bit keys do.
const checkKeySpace = math.MaxInt64

// Check runs etcdctl check perf's profile and judges it: throughput, the
// slowest request and the standard deviation as etcdctl does, plus the
// request p99, failed requests, etcd's WAL fsync and backend commit p99,
// leader changes and failed proposals. It also says whether the client or
// etcd set the pace. Keys stay under the prefix and are deleted at the end,
// as in Bench. An interrupted run returns its partial Result with the
// error.
func Check(ctx context.Context, o CheckOptions) (*result.Result, error) {
	var state func() *result.ClusterState
	if len(o.Target.Conn.Endpoints) > 0 {
		// The cluster's own state is read beside the load.
		state = clusterStateBeside(ctx, discoverAt(o.Target.Conn), clusterstate.Options{})
	}
	res, err := runCheck(ctx, o)
	if state != nil {
		if st := state(); res != nil {
			res.Cluster = st
		}
	}
	if res != nil && err == nil {
		where := "etcd at " + strings.Join(o.Target.Conn.Endpoints, ",")
		if len(o.Target.Conn.Endpoints) == 0 {
			where = dataDirOrDot(o.Target.DataDir)
		}
		w := sweepSettings{capacity: o.Capacity, step: o.CapacityStep, confirm: o.CapacityConfirm, dbSize: o.DBSize, soak: o.Soak,
			base: o.Profile, device: loadDevice(o.Target, o.Device), criteria: o.Criteria, where: where, phase: o.Soak.Phase,
			target: func(suffix string) lab.TargetOptions {
				t := o.Target
				t.RunID = cluster.NewRunID() + suffix
				return t
			}}
		res.Capacity, res.Soak, err = w.run(ctx, res)
		if err != nil {
			res.Error = errorText(err)
		}
	}
	if res != nil {
		res.Kind = result.KindCheck
		judge.Judge(res, o.Criteria)
		res.Finish()
	}
	return res, err
}

// runCheck is Check's measurement, shared with doctor, which judges it
// as a part of its target.
func runCheck(ctx context.Context, o CheckOptions) (*result.Result, error) {
	p := o.Profile
	dur := o.Duration
	if dur <= 0 {
		dur = p.Duration
	}
	res, obs, err := observedPuts(ctx, puts{
		target: o.Target, compact: o.AutoCompact, compactEvery: o.CompactEvery, overwrite: o.Overwrite, started: o.Started, device: loadDevice(o.Target, o.Device),
		interval: o.Interval, tick: o.Tick,
		load: load.Options{
			Clients: p.Clients, Duration: dur, Rate: p.Rate, Stop: o.Stop,
			KeySize: p.KeySize, ValSize: p.ValSize, KeySpaceSize: cmp.Or(o.KeySpace, checkKeySpace),
			Prefix: o.Prefix, Progress: o.Progress,
		},
	})
	if res == nil {
		return nil, err
	}
	res.Params = checkParams(res.Params, o, dur)
	res.Perf = loadrun.Perf(res.Bench, p, obs, dur)
	if res.Bench != nil {
		res.Bench.Description = fmt.Sprintf("puts of %d-byte keys and %d-byte values, a new random key each (as etcdctl check perf)", p.KeySize, p.ValSize)
		if o.KeySpace > 0 {
			res.Bench.Description = fmt.Sprintf("puts of %d-byte keys and %d-byte values, each to a random one of %d keys", p.KeySize, p.ValSize, o.KeySpace)
		}
	}
	if p.Rate >= etcdctlPacingLimit {
		res.Perf.Notes = append(res.Perf.Notes, fmt.Sprintf("etcdctl check perf paces this profile with a token bucket of one token "+
			"(golang.org/x/time/rate, burst 1): every token it is late for is lost, so it often sends less than %.0f/s and reports FAIL at l "+
			"but PASS at xl (etcd issues #13455, #10609). etcdperf sends on an absolute schedule and catches up after a late send, "+
			"so a shortfall here is etcd's or this machine's, as the findings say.", p.Rate))
	}
	res.Host = obs.Host
	res.ExpectedDefrag = promscrape.ExpectedAroundLoad(o.DefragMember, obs.First, obs.Last)
	if o.AutoDefrag {
		note, derr := defragAfter(ctx, res, o.Target.Conn)
		res.Perf.Notes = append(res.Perf.Notes, note)
		err = errors.Join(err, derr)
	}
	if err != nil && res.Error == "" {
		res.Error = errorText(err)
	}
	return res, err
}

// loadDevice is the device a load watches: device when given, else the
// one under an embedded etcd's data dir ("" for a cluster's endpoints).
func loadDevice(target lab.TargetOptions, device string) string {
	if device != "" || len(target.Conn.Endpoints) > 0 {
		return device
	}
	if m, err := sysinfo.FindMount(dataDirOrDot(target.DataDir)); err == nil {
		return m.Device
	}
	return ""
}

func dataDirOrDot(d string) string {
	if d == "" {
		return "."
	}
	return d
}

// checkParams adds the profile to the bench parameters.
func checkParams(p result.Params, o CheckOptions, dur time.Duration) *result.CheckParams {
	b, ok := p.(*result.BenchParams)
	if !ok {
		b = &result.BenchParams{}
	}
	b.Rate, b.Duration = o.Profile.Rate, dur.Seconds()
	b.Compact, b.TargetLeader, b.KeepKeys = nil, nil, nil
	pp := &result.ProfileParams{Load: o.Profile.Name, AutoCompact: o.AutoCompact, AutoDefrag: o.AutoDefrag}
	if o.Soak.Duration > 0 {
		pp.Soak, pp.SoakRate, pp.SoakInterval = o.Soak.Duration.Seconds(), o.Soak.Rate, o.Soak.interval().Seconds()
	}
	return &result.CheckParams{BenchParams: b, ProfileParams: pp}
}

// puts is a put load for observedPuts.
type puts struct {
	target  lab.TargetOptions
	load    load.Options
	compact bool
	// compactEvery compacts during the load (loadrun.Options.CompactEvery).
	compactEvery time.Duration
	// overwrite: the prefix holds the keys to overwrite (loadrun.Options.Overwrite).
	overwrite bool
	started   func()
	device    string
	// interval and tick mark the window every interval (a soak).
	interval time.Duration
	tick     func(loadrun.Tick)
}

// observedPuts runs a put load through Bench's measurement as etcdctl's checks do: one
// connection per client, an embedded member in a process of its own, and
// a window on the members, the host and this process around the load.
func observedPuts(ctx context.Context, p puts) (*result.Result, *memberwatch.Observation, error) {
	lo := p.load
	lo.Workload = load.Put
	lo.CommandTimeout = p.target.Conn.CommandTimeout
	bo := loadrun.Options{Target: p.target, Load: lo, Conns: lo.Clients, Compact: p.compact, CompactEvery: p.compactEvery, Overwrite: p.overwrite, Started: p.started,
		Window: memberwatch.Options{Host: true, Device: p.device}, Interval: p.interval, Tick: p.tick}
	if len(p.target.Conn.Endpoints) == 0 {
		bo.Target.Separate = true
	}
	return measureBench(ctx, bo)
}

// defragAfter defragments every member of an external cluster, one at a
// time, as etcdctl's --auto-defrag does; it returns a note for the Result.
func defragAfter(ctx context.Context, res *result.Result, conn cluster.ConnOptions) (string, error) {
	if len(conn.Endpoints) == 0 {
		return "--auto-defrag: nothing to defragment, the embedded etcd's data was removed", nil
	}
	if err := cluster.DefragmentAll(context.WithoutCancel(ctx), conn); err != nil {
		err = fmt.Errorf("--auto-defrag: %w", err)
		res.Error = joinErr(res.Error, err.Error())
		return "--auto-defrag failed", err
	}
	return "defragmented every member (--auto-defrag)", nil
}
