package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/etcdperf/etcdperf/internal/capacity"
	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/discover"
	"github.com/etcdperf/etcdperf/internal/diskprobe"
	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/liveprobe"
	"github.com/etcdperf/etcdperf/internal/load"
	"github.com/etcdperf/etcdperf/internal/loadrun"
	"github.com/etcdperf/etcdperf/internal/noise"
	"github.com/etcdperf/etcdperf/internal/profile"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/sysinfo"
)

// Defaults of doctor: the probe, etcd's start, the load and the end take
// about 14s on one location, the capacity sweep after them 30-60s more
// (docs/evidence.md). The load of a storage location (12s) gives the same
// verdicts as etcdctl check perf's 60s on a plain disk, a tmpfs and a 15ms
// slow disk, and its backend commit p99 rests on some 118 commits (etcd
// commits every 100ms): over 10s it rested on some 98, fewer than the 100
// a p99 needs (limits.MinSamples), so one slow commit was the p99 and
// failed a fast disk. A cluster doctor reaches is loaded or watched for
// 30s, the window in which a member's own WAL fsyncs judge its disk.
const (
	DefaultDoctorDuration    = 12 * time.Second
	DefaultDoctorWatch       = 30 * time.Second
	DefaultDoctorDiskRuntime = 10 * time.Second
	// DefaultLiveDiskRate is the probe's pace beside a live member.
	DefaultLiveDiskRate = liveprobe.DefaultLiveDiskRate
)

// DoctorOptions configure `etcdperf doctor`.
type DoctorOptions struct {
	// DataDirs are the storage locations to judge, one after the other
	// (default: the current directory). With Conn.Endpoints they are only
	// probed, and at most one may be given.
	DataDirs []string
	// Conn reaches an existing cluster instead of an embedded etcd.
	Conn cluster.ConnOptions
	// Members and Faults shape the embedded cluster (default one member).
	Members int
	Faults  []lab.Fault
	// Profile and Duration are the load (check perf's profile).
	Profile  profile.Profile
	Duration time.Duration
	// Disk is the disk probe (its Dir is set per location); a zero
	// Runtime and Size skip the probe.
	Disk     diskprobe.Options
	SkipDisk bool
	// Noise repeats each load while a background writer writes bulk data
	// on the same device; NoiseOptions shape it (its Dir is set).
	Noise        bool
	NoiseOptions noise.Options
	// SimulateFsyncDelay runs each location through a slow view of itself
	// (`etcdperf slowdisk`) whose fsyncs wait this long.
	SimulateFsyncDelay time.Duration
	// Criteria are the limits to judge by.
	Criteria []limits.Criterion
	// ServerCommand and SlowdiskCommand run a member and the slow view
	// (default: this executable's "server" and "slowdisk").
	ServerCommand, SlowdiskCommand []string
	// Progress, when set, follows the run.
	Progress *DoctorProgress
	// Node, when set, is the member on this node to judge (doctor --node):
	// Conn reaches it, the disk probe runs in a folder of its own beside
	// its data dir, and with Observe the member is only watched for
	// Duration, without load.
	Node    *discover.Node
	Observe bool
	// Capacity sweeps the offered write rate after the load
	// (capacity.Sweep), each step CapacityStep long (default
	// capacity.DefaultStep).
	Capacity     bool
	CapacityStep time.Duration
	// CapacityConfirm is how long the sweep holds its answer (0: no
	// confirm step).
	CapacityConfirm time.Duration
	// DBSize fills the sweep's own etcd first (capacity.Options.DBSize).
	DBSize int64
	// SizesFrom says where DBSize and the values' size came from when
	// they are the cluster's (capacity.Options.SizesFrom).
	SizesFrom capacity.SizesFrom
	// Soak holds a rate after the load and the sweep: the sweep's answer or
	// Soak.Rate, for Soak.Duration (0: no soak); its Phase is set by
	// Doctor (the progress).
	Soak SoakSettings
	// Demand is the peak write demand (puts/s) the capacity is judged
	// against, DemandFrom where it came from ("--demand").
	Demand     float64
	DemandFrom string
	// DiskExplicit says the user asked for the disk probe by name
	// (--disk-runtime or --disk-rate): beside a live member it then runs
	// even when the member's own WAL fsyncs would judge its disk.
	DiskExplicit bool
}

// Validate refuses options that cannot go together: the locations and
// their options are for doctor's own etcd, not for a cluster it reaches.
func (o DoctorOptions) Validate() error {
	if len(o.Conn.Endpoints) == 0 {
		return nil
	}
	switch {
	case len(o.DataDirs) > 1:
		return errors.New("with --endpoints, give at most one --data-dir: the disk of the cluster on this host, to probe")
	case o.SimulateFsyncDelay > 0:
		return errors.New("--simulate-fsync-delay slows the embedded etcd's disk; it cannot be used with --endpoints")
	case o.Noise && len(o.DataDirs) == 0:
		return errors.New("--noise writes on the storage under test: with --endpoints, give the cluster's --data-dir on this host")
	}
	return nil
}

// SweepsCapacity says whether a run sweeps the capacity with --capacity
// at on (asked: given by name): by default on a storage of its own (an
// embedded etcd); on a cluster it reaches (--endpoints, --node) only when
// asked by name, since the sweep loads that cluster up to 15,000 puts/s.
func SweepsCapacity(on, asked, cluster bool) bool { return on && (!cluster || asked) }

// DoctorDuration is doctor's --duration when it is not given: the load of
// a storage location (DefaultDoctorDuration), or the window on a cluster
// doctor reaches (reaches: --endpoints, --node; DefaultDoctorWatch).
func DoctorDuration(reaches bool) time.Duration {
	if reaches {
		return DefaultDoctorWatch
	}
	return DefaultDoctorDuration
}

// ProbeRate is the disk probe's pace, rate fdatasyncs/s at most: beside a
// live member (live) the probe leaves the device to etcd; on a storage of
// its own it goes as fast as the device allows (0) unless the user gave
// the rate by name (asked).
func ProbeRate(rate float64, live, asked bool) float64 {
	if live || asked {
		return rate
	}
	return 0
}

// Phase is what kind of work a doctor run is doing, for a progress line.
type Phase int

const (
	// PhaseOther is any phase without a counter (starting etcd, the
	// sweep, the soak).
	PhaseOther Phase = iota
	// PhaseProbe is the disk probe (DoctorProgress.Disk counts its bytes).
	PhaseProbe
	// PhaseLoad is check perf's load (DoctorProgress.Load counts its
	// requests).
	PhaseLoad
)

// DoctorProgress tells a watcher what a doctor run is doing.
type DoctorProgress struct {
	mu    sync.Mutex
	kind  Phase
	phase string
	since time.Time
	// Disk and Load count the probe's bytes and the load's requests.
	Disk diskprobe.Progress
	Load load.Progress
}

// Phase returns what the run is doing, its kind and since when.
func (p *DoctorProgress) Phase() (string, Phase, time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.phase, p.kind, p.since
}

// set says what the run does now, a phase without a counter.
func (p *DoctorProgress) set(format string, args ...any) {
	p.setKind(PhaseOther, format, args...)
}

func (p *DoctorProgress) setKind(kind Phase, format string, args ...any) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.kind, p.phase, p.since = kind, fmt.Sprintf(format, args...), time.Now()
	p.mu.Unlock()
}

func (p *DoctorProgress) disk() *diskprobe.Progress {
	if p == nil {
		return nil
	}
	return &p.Disk
}

func (p *DoctorProgress) load() *load.Progress {
	if p == nil {
		return nil
	}
	return &p.Load
}

// Doctor judges each storage location (or the cluster at Conn.Endpoints)
// for etcd: the disk probe, an embedded etcd in a process of its own on
// that storage under check perf's load, etcd's metrics, the host's view of
// the device and CPUs, optionally the same under a neighbour's bulk
// writes. The Result holds one entry per location under runs, and its
// summary compares them. Everything it creates is removed, also when ctx
// ends; it then returns the partial Result with the error.
func Doctor(ctx context.Context, o DoctorOptions) (*result.Result, error) {
	top := result.New(result.KindDoctor)
	top.Env = sysinfo.HostEnv()
	top.Params = doctorParams(o)
	top.Doctor = &result.Doctor{}
	runID := cluster.NewRunID()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	external := len(o.Conn.Endpoints) > 0
	dirs := o.DataDirs
	if len(dirs) == 0 && !external {
		dirs = []string{"."}
	}
	var err error
	if o.Node != nil {
		r, terr := doctorNode(ctx, o, runID)
		addTarget(top, r)
		err = terr
	} else if external {
		dir := ""
		if len(dirs) == 1 {
			dir = dirs[0]
		}
		r, terr := doctorTarget(ctx, o, dir, runID)
		addTarget(top, r)
		err = terr
	} else {
		for i, dir := range dirs {
			r, terr := doctorTarget(ctx, o, dir, fmt.Sprintf("%s-%d", runID, i+1))
			addTarget(top, r)
			if terr != nil {
				err = terr
				break
			}
		}
	}
	if len(top.Runs) == 0 {
		return nil, err
	}
	if err != nil {
		top.Error = errorText(err)
	}
	judge.DoctorRun(top)
	top.Finish()
	return top, err
}

func addTarget(top *result.Result, r *result.Result) {
	if r == nil {
		return
	}
	top.Runs = append(top.Runs, *r)
	top.Doctor.Targets = append(top.Doctor.Targets, r.Doctor.Targets[0])
}

func errorText(err error) string {
	if errors.Is(err, context.Canceled) {
		return "interrupted"
	}
	return err.Error()
}

// doctorTarget judges one location (or the cluster at o.Conn.Endpoints):
// the disk probe, the load, the capacity sweep, the soak and the load
// again under noise, as asked, through a slow view of the location when
// one is simulated. It returns what it measured, also when it fails
// midway.
func doctorTarget(ctx context.Context, o DoctorOptions, dir, runID string) (res *result.Result, err error) {
	d, err := newDoctorRun(o, dir, runID)
	if err != nil {
		return nil, err
	}
	if o.SimulateFsyncDelay > 0 && dir != "" {
		slow, serr := d.mountSlow(ctx)
		if serr != nil {
			return nil, serr
		}
		defer func() {
			if serr := slow.Remove(); serr != nil {
				err = errors.Join(err, serr)
				if res != nil {
					res.AddError(serr.Error())
				}
			}
		}()
	}
	return d.finish(d.measure(ctx))
}

// takeLoad copies a check's sections into the target's Result.
func takeLoad(r, c *result.Result, dir string) {
	r.Bench, r.Server, r.Target, r.Host, r.Perf = c.Bench, c.Server, c.Target, c.Host, c.Perf
	if c.ExpectedDefrag != nil {
		r.ExpectedDefrag = c.ExpectedDefrag
	}
	r.Params = c.Params
	if c.Env != nil {
		env := *c.Env
		if dir != "" {
			// The embedded etcd's folder is gone; the location is what
			// the user named.
			env.Dir = dir
		}
		r.Env = &env
	}
	if c.Error != "" {
		r.Error = joinErr(r.Error, c.Error)
	}
}

// noisyRun repeats the load while a background writer writes buffered
// bulk data on the location's device; it returns the load's Result and
// how much the writer wrote.
func noisyRun(ctx context.Context, o DoctorOptions, copts CheckOptions, dir, runID, where string) (*result.Result, int64, error) {
	no := o.NoiseOptions
	no.Dir = dir
	nz, err := noise.Start(ctx, no)
	if err != nil {
		return nil, 0, fmt.Errorf("--noise: %w", err)
	}
	copts.Target.RunID = runID + "-noise"
	copts.Started = func() {
		o.Progress.setKind(PhaseLoad, "loading etcd on %s with a neighbour writing bulk data", where)
	}
	res, err := runCheck(ctx, copts)
	written := nz.Bytes()
	if nerr := nz.Stop(); nerr != nil {
		err = errors.Join(err, fmt.Errorf("--noise: %w", nerr))
	}
	if res == nil {
		return nil, written, err
	}
	res.Kind = result.KindDoctor
	res.Name = dir + " + noise"
	if res.Env != nil {
		res.Env.Dir = dir
	}
	if err != nil && res.Error == "" {
		res.Error = errorText(err)
	}
	// It is judged with its target, as one of the target's runs.
	res.Doctor = &result.Doctor{Targets: []result.DoctorTarget{{Name: res.Name, Dir: dir}}}
	res.Finish()
	return res, written, err
}

func doctorParams(o DoctorOptions) *result.DoctorParams {
	p := &result.DoctorParams{
		Load:               o.Profile.Name,
		Rate:               o.Profile.Rate,
		Clients:            o.Profile.Clients,
		Duration:           o.Duration.Seconds(),
		Noise:              o.Noise,
		DataDirs:           o.DataDirs,
		SimulateFsyncDelay: max(o.SimulateFsyncDelay.Seconds(), 0),
		ConnParams:         loadrun.ConnParams(o.Conn),
	}
	if !o.SkipDisk {
		p.DiskRuntime, p.DiskSize = new(o.Disk.Runtime.Seconds()), o.Disk.Size
	}
	if o.Capacity {
		p.CapacityStep, p.CapacityConfirm = o.CapacityStep.Seconds(), o.CapacityConfirm.Seconds()
	}
	if o.Soak.Duration > 0 {
		p.Soak, p.SoakRate, p.SoakInterval = o.Soak.Duration.Seconds(), o.Soak.Rate, o.Soak.interval().Seconds()
	}
	if o.Demand > 0 {
		p.Demand, p.DemandFrom = o.Demand, new(o.DemandFrom)
	}
	if n := o.Node; n != nil {
		p.Node, p.DataDir, p.ObserveOnly = n.Found.Source+" "+n.Found.File, n.DataDir, new(o.Observe)
		if o.Observe {
			p.Load, p.Rate, p.Clients = "", 0, 0
		}
		p.ConnParams = loadrun.ConnParams(n.Conn)
	}
	return p
}
