package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/discover"
	"github.com/etcdperf/etcdperf/internal/diskprobe"
	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/liveprobe"
	"github.com/etcdperf/etcdperf/internal/load"
	"github.com/etcdperf/etcdperf/internal/noise"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/sysinfo"
	"github.com/etcdperf/etcdperf/internal/units"
)

// Defaults of doctor: the whole run stays under 45s on one location (the
// probe, etcd's start, the load and the end), 90s on two. The load gives
// the same verdicts as etcdctl check perf's 60s on a plain disk, a tmpfs
// and a 15ms slow disk (docs/evidence.md).
const (
	DefaultDoctorDuration    = 30 * time.Second
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
	Faults  []cluster.Fault
	// Profile and Duration are the load (check perf's profile).
	Profile  check.Profile
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
	Criteria []check.Criterion
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
	// Capacity sweeps the offered write rate after the load (Capacity),
	// each step CapacityStep long (default DefaultCapacityStep).
	Capacity     bool
	CapacityStep time.Duration
	// CapacityConfirm is how long the sweep holds its answer (0: no
	// confirm step).
	CapacityConfirm time.Duration
	// DBSize fills the sweep's own etcd first (CapacityOptions.DBSize).
	DBSize int64
	// SizesFrom says where DBSize and the values' size came from when
	// they are the cluster's (CapacityOptions.SizesFrom).
	SizesFrom SizesFrom
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

// DoctorProgress tells a watcher what a doctor run is doing.
type DoctorProgress struct {
	mu    sync.Mutex
	phase string
	since time.Time
	// Disk and Load count the probe's bytes and the load's requests.
	Disk diskprobe.Progress
	Load load.Progress
}

// Phase returns what the run is doing and since when.
func (p *DoctorProgress) Phase() (string, time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.phase, p.since
}

func (p *DoctorProgress) set(format string, args ...any) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.phase, p.since = fmt.Sprintf(format, args...), time.Now()
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
	external := len(o.Conn.Endpoints) > 0
	dirs := o.DataDirs
	if len(dirs) == 0 && !external {
		dirs = []string{"."}
	}
	if external && len(dirs) > 1 {
		return nil, errors.New("with --endpoints, give at most one --data-dir (the cluster's disk on this host, to probe)")
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

// doctorTarget judges one location: probe, load, and the load again under
// noise. It returns what it measured, also when it fails midway.
func doctorTarget(ctx context.Context, o DoctorOptions, dir, runID string) (res *result.Result, err error) {
	external := len(o.Conn.Endpoints) > 0
	r := result.New(result.KindDoctor)
	if dir != "" {
		abs, aerr := filepath.Abs(dir)
		if aerr != nil {
			return nil, aerr
		}
		dir = abs
		r.Name = dir
	}
	if external {
		r.Name = "etcd at " + strings.Join(o.Conn.Endpoints, ",")
		if o.Conn.EndpointsFrom != "" {
			r.Name += " (from " + o.Conn.EndpointsFrom + ")"
		}
	}
	row := result.DoctorTarget{Name: r.Name, Dir: dir, Endpoints: o.Conn.Endpoints, SimulatedFsyncDelay: o.SimulateFsyncDelay.Seconds()}
	storage := dir
	device := ""
	if dir != "" {
		r.Env = sysinfo.DirEnv(dir)
		device = r.Env.Device
	}
	if o.SimulateFsyncDelay > 0 && dir != "" {
		o.Progress.set("mounting a slow view of %s (fsync +%s)", dir, o.SimulateFsyncDelay)
		slow, serr := mountSlow(ctx, dir, runID, o.SimulateFsyncDelay, o.SlowdiskCommand)
		if serr != nil {
			return nil, serr
		}
		defer func() {
			if serr := slow.stop(); serr != nil {
				err = errors.Join(err, serr)
				if res != nil {
					res.AddError(serr.Error())
				}
			}
		}()
		storage = slow.mnt
		// What etcd waits for is the slow view, not the device under it.
		device = ""
	}
	if o.Node != nil {
		r.Name, row.Name = o.Node.Name(), o.Node.Name()
		// The findings and the summary are about this member.
		row.Member = o.Node.Found.Name
		if row.Member == "" {
			row.Member = "etcd"
		}
		row.Dir = o.Node.DataDir
		r.Env = sysinfo.DirEnv(o.Node.DataDir)
		device = r.Env.Device
	}
	began := time.Now()
	// finish judges whatever was measured and returns it.
	finish := func(runErr error) (*result.Result, error) {
		if r.Disk == nil && r.Bench == nil && (r.Server == nil || !o.Observe) {
			return nil, runErr
		}
		// What the member logged meanwhile.
		switch {
		case o.Node == nil:
		case o.Node.LogFile != "":
			readNodeLog(ctx, r, o.Node.LogFile, began)
		case o.Node.Unit != "":
			readNodeJournal(ctx, r, o.Node, began)
		}
		if runErr != nil {
			r.Error = joinErr(r.Error, errorText(runErr))
		}
		r.Doctor = &result.Doctor{Targets: []result.DoctorTarget{row}}
		judge.Judge(r, o.Criteria)
		r.Finish()
		return r, runErr
	}

	// Beside a live member the probe comes after the window, and only
	// when the member's own fsyncs in it cannot judge its disk.
	live := external || o.Node != nil
	if dir != "" && !o.SkipDisk && !live {
		o.Progress.set("probing the disk under %s", dir)
		probe := o.Disk
		probe.Dir = storage
		dres, derr := probeDisk(ctx, DiskOptions{Probe: probe, Engine: EngineNative, Progress: o.Progress.disk()})
		if dres != nil {
			r.Disk = dres.Disk
			if dres.Error != "" {
				r.Error = dres.Error
			}
		}
		if derr != nil {
			return finish(derr)
		}
	}

	// afterWindow probes the disk beside the live member, when that is
	// wanted, once its window is over.
	afterWindow := func() (*result.Result, error) {
		if live && (dir != "" || o.Node != nil) && !o.SkipDisk {
			out, err := liveprobe.Beside(ctx, liveprobe.Options{
				Conn: o.Conn, Node: o.Node, Disk: o.Disk, Window: o.Duration, Explicit: o.DiskExplicit, Criteria: o.Criteria, RunID: runID,
				Probe: func(ctx context.Context, p diskprobe.Options) (*result.Result, error) {
					return probeDisk(ctx, DiskOptions{Probe: p, Engine: EngineNative, Progress: o.Progress.disk()})
				},
				Progress: func(phase string) { o.Progress.set("%s", phase) },
			}, r.Server, storage, device)
			row.DiskProbe = out.Row
			if out.Disk != nil {
				r.Disk = out.Disk
			}
			if out.Error != "" {
				r.Error = result.JoinError(r.Error, out.Error)
			}
			return finish(err)
		}
		return finish(nil)
	}
	if o.Observe {
		o.Progress.set("watching %s for %s, without load", r.Name, o.Duration)
		if oerr := observeMembers(ctx, r, o.Conn, device, o.Duration); oerr != nil {
			return finish(oerr)
		}
		return afterWindow()
	}

	copts := CheckOptions{
		Target:   cluster.TargetOptions{Conn: o.Conn, DataDir: storage, RunID: runID, ServerCommand: o.ServerCommand, Members: o.Members, Faults: o.Faults},
		Profile:  o.Profile,
		Duration: o.Duration,
		Criteria: o.Criteria,
		Device:   device,
		Progress: o.Progress.load(),
	}
	where := storage
	if external {
		where = r.Name
		copts.Target.DataDir = ""
	}
	o.Progress.set("starting etcd on %s", where)
	copts.Started = func() {
		o.Progress.set("loading etcd on %s: profile %s, %.0f puts/s", where, o.Profile.Name, o.Profile.Rate)
	}
	cres, cerr := runCheck(ctx, copts)
	if cres != nil {
		takeLoad(r, cres, row.Dir)
	}
	if cerr != nil {
		return finish(cerr)
	}

	if o.Capacity {
		step := o.CapacityStep
		if step <= 0 {
			step = DefaultCapacityStep
		}
		target := copts.Target
		target.RunID = runID + "-capacity"
		o.Progress.set("starting etcd on %s for the capacity sweep", where)
		capRes, capErr := Capacity(ctx, CapacityOptions{
			Target: target, Base: o.Profile, First: r, Step: step, Device: device, Criteria: o.Criteria, Demand: o.Demand, DemandFrom: o.DemandFrom,
			Confirm: o.CapacityConfirm, DBSize: o.DBSize, SizesFrom: o.SizesFrom,
			Filling: func(b int64) {
				o.Progress.set("capacity sweep on %s: filling its etcd with %s first", where, units.Bytes(float64(b)))
			},
			Stepping: func(rate float64, clients int, confirm bool) {
				if confirm {
					o.Progress.set("capacity sweep on %s: holding %.0f puts/s for %s to confirm it", where, rate, o.CapacityConfirm)
					return
				}
				o.Progress.set("capacity sweep on %s: %.0f puts/s from %d clients", where, rate, clients)
			},
		})
		r.Capacity = capRes
		if capErr != nil {
			return finish(capErr)
		}
	}

	if o.Soak.Duration > 0 {
		target := copts.Target
		target.RunID = runID + "-soak"
		ss := o.Soak
		ss.Phase = func(phase string) { o.Progress.set("%s", phase) }
		soak, soakErr := ss.run(ctx, target, o.Profile, device, o.Criteria, r.Capacity, where)
		r.Soak = soak
		if soakErr != nil {
			return finish(soakErr)
		}
	}

	if o.Noise && dir != "" {
		o.Progress.set("starting etcd on %s again, with a neighbour writing bulk data", where)
		noisy, written, nerr := noisyRun(ctx, o, copts, dir, runID, where)
		if noisy != nil {
			r.Runs = append(r.Runs, *noisy)
			row.Noise = &result.NoiseEffect{BytesWritten: written}
		}
		if nerr != nil {
			return finish(nerr)
		}
	}
	return afterWindow()
}

// takeLoad copies a check's sections into the target's Result.
func takeLoad(r, c *result.Result, dir string) {
	r.Bench, r.Server, r.Target, r.Host, r.Perf = c.Bench, c.Server, c.Target, c.Host, c.Perf
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
		o.Progress.set("loading etcd on %s with a neighbour writing bulk data", where)
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
		ConnParams:         connParams(o.Conn),
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
		p.ConnParams = connParams(n.Conn)
	}
	return p
}
