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
	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/diskprobe"
	"github.com/etcdperf/etcdperf/internal/load"
	"github.com/etcdperf/etcdperf/internal/noise"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/sysinfo"
)

// KindDoctor is the kind of `etcdperf doctor`'s Results.
const KindDoctor = "doctor"

// Defaults of doctor: the whole run stays around 75s on one location.
const (
	DefaultDoctorDuration    = 60 * time.Second
	DefaultDoctorDiskRuntime = 15 * time.Second
)

// DoctorOptions configure `etcdperf doctor`.
type DoctorOptions struct {
	// DataDirs are the storage locations to judge, one after the other
	// (default: the current directory). With Conn.Endpoints they are only
	// probed, and at most one may be given.
	DataDirs []string
	// Conn reaches an existing cluster instead of an embedded etcd.
	Conn cluster.ConnOptions
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
	top := result.New(KindDoctor)
	top.Env = sysinfo.HostEnv()
	top.Params = doctorParams(o)
	top.Doctor = &result.Doctor{}
	runID := NewRunID()
	external := len(o.Conn.Endpoints) > 0
	dirs := o.DataDirs
	if len(dirs) == 0 && !external {
		dirs = []string{"."}
	}
	if external && len(dirs) > 1 {
		return nil, errors.New("with --endpoints, give at most one --data-dir (the cluster's disk on this host, to probe)")
	}
	var err error
	if external {
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
	for _, r := range top.Runs {
		top.Verdict = result.Worse(top.Verdict, r.Verdict)
	}
	if err != nil {
		top.Error = errorText(err)
		top.Verdict = result.Worse(top.Verdict, result.Warn)
	}
	top.Summary = doctorSummary(top)
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
	r := result.New(KindDoctor)
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
					res.Error = joinErr(res.Error, serr.Error())
				}
			}
		}()
		storage = slow.mnt
		// What etcd waits for is the slow view, not the device under it.
		device = ""
	}
	// finish judges whatever was measured and returns it.
	finish := func(runErr error) (*result.Result, error) {
		if r.Disk == nil && r.Bench == nil {
			return nil, runErr
		}
		if runErr != nil {
			r.Error = joinErr(r.Error, errorText(runErr))
		}
		judgeTarget(r, row)
		return r, runErr
	}

	if dir != "" && !o.SkipDisk {
		o.Progress.set("probing the disk under %s", dir)
		probe := o.Disk
		probe.Dir = storage
		dres, derr := Disk(ctx, DiskOptions{Probe: probe, Engine: EngineNative, Criteria: o.Criteria, Progress: o.Progress.disk()})
		if dres != nil {
			r.Disk = dres.Disk
			r.Checks = append(r.Checks, dres.Checks...)
			if dres.Error != "" {
				r.Error = dres.Error
			}
		}
		if derr != nil {
			return finish(derr)
		}
	}

	copts := CheckOptions{
		Target:   cluster.TargetOptions{Conn: o.Conn, DataDir: storage, RunID: runID, ServerCommand: o.ServerCommand},
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
		takeLoad(r, cres, dir)
	}
	if cerr != nil {
		return finish(cerr)
	}

	if o.Noise && dir != "" {
		o.Progress.set("starting etcd on %s again, with a neighbour writing bulk data", where)
		noisy, written, nerr := noisyRun(ctx, o, copts, dir, runID, where)
		if noisy != nil {
			r.Runs = append(r.Runs, *noisy)
			row.Noise = noiseEffect(r, noisy, written)
		}
		if nerr != nil {
			return finish(nerr)
		}
	}
	return finish(nil)
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
	r.Checks = append(r.Checks, c.Checks...)
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
	res.Kind = KindDoctor
	res.Name = dir + " + noise"
	if res.Env != nil {
		res.Env.Dir = dir
	}
	if err != nil && res.Error == "" {
		res.Error = errorText(err)
	}
	judgeNoisy(res, dir)
	return res, written, err
}

// judgeNoisy gives the load under noise its own row and summary; its
// checks, findings and verdict are the load check's.
func judgeNoisy(n *result.Result, dir string) {
	t := result.DoctorTarget{Name: n.Name, Dir: dir}
	fillRow(&t, n)
	t.Verdict = n.Verdict
	n.Doctor = &result.Doctor{Targets: []result.DoctorTarget{t}}
	n.Doctor.Targets[0].LimitedBy = diagnose.DoctorLimitedBy(n)
	n.Summary = targetSummary(n)
	n.Finish()
}

// noiseEffect compares the quiet load with the noisy one.
func noiseEffect(quiet, noisy *result.Result, written int64) *result.NoiseEffect {
	n := &result.NoiseEffect{Verdict: noisy.Verdict, BytesWritten: written}
	wq, _, rq := loadP99s(quiet)
	n.WALFsyncP99, n.BackendCommitP99, n.RequestP99 = loadP99s(noisy)
	if wq > 0 {
		n.WALFsyncRatio = n.WALFsyncP99 / wq
	}
	if rq > 0 {
		n.RequestRatio = n.RequestP99 / rq
	}
	if noisy.Host != nil && noisy.Host.Device != "" {
		n.DeviceUtil = noisy.Host.Summary.Util
	}
	return n
}

// loadP99s returns etcd's WAL fsync and backend commit p99 and the
// request p99 of a load.
func loadP99s(r *result.Result) (wal, commit, req float64) {
	if s := r.Server; s != nil {
		if s.WALFsync != nil && s.WALFsync.Count > 0 {
			wal = s.WALFsync.P99
		}
		if s.BackendCommit != nil && s.BackendCommit.Count > 0 {
			commit = s.BackendCommit.P99
		}
	}
	if r.Bench != nil && r.Bench.Latency != nil {
		req = r.Bench.Latency.P99
	}
	return wal, commit, req
}

// judgeTarget fills the target's row, findings, verdict and summary.
func judgeTarget(r *result.Result, row result.DoctorTarget) {
	fillRow(&row, r)
	r.Doctor = &result.Doctor{Targets: []result.DoctorTarget{row}}
	r.Doctor.Targets[0].LimitedBy = diagnose.DoctorLimitedBy(r)
	r.Findings = diagnose.Run(r)
	r.Verdict = diagnose.Verdict(r.Checks, r.Findings)
	if r.Error != "" {
		r.Verdict = result.Worse(r.Verdict, result.Warn)
	}
	r.Doctor.Targets[0].Verdict = r.Verdict
	r.Summary = targetSummary(r)
	r.Finish()
}

// fillRow copies a target's figures into its row.
func fillRow(row *result.DoctorTarget, r *result.Result) {
	if env := r.Env; env != nil {
		row.FSType, row.Device, row.Volatile = env.FSType, env.Device, env.Volatile
	}
	if r.Disk != nil && r.Disk.SyncLatency != nil && r.Disk.SyncLatency.Count > 0 {
		row.DiskSyncP99, row.DiskIOPS = r.Disk.SyncLatency.P99, r.Disk.IOPS
	}
	row.WALFsyncP99, row.BackendCommitP99, row.RequestP99 = loadP99s(r)
	if s := r.Server; s != nil {
		row.WALFsyncBound, row.BackendCommitBound = atFloor(s.WALFsync), atFloor(s.BackendCommit)
	}
	if r.Bench != nil {
		row.Throughput = r.Bench.Throughput
	}
	if pf := r.Perf; pf != nil {
		row.TargetRate, row.ServerCPU, row.ClientCPU = pf.TargetRate, pf.ServerCPU, pf.ClientCPU
	}
	if r.Host != nil && r.Host.Device != "" {
		row.DeviceUtil = r.Host.Summary.Util
	}
	row.FsyncHeadroom = fsyncHeadroom(r, *row)
}

// atFloor reports a p99 in the lowest bucket of etcd's histogram.
func atFloor(l *result.Latency) bool {
	return l != nil && l.Count > 0 && l.Bucketed && l.Resolution > 0 && l.P99 <= l.Resolution
}

// fsyncHeadroom is the WAL fsync limit over the fsync p99 etcd would see:
// etcd's own under the load when its histogram could resolve it, else
// (a p99 in etcd's lowest bucket is only a bound) the probe's fdatasync
// p99, else etcd's 1ms floor (a lower bound).
func fsyncHeadroom(r *result.Result, row result.DoctorTarget) float64 {
	limit := diagnose.LimitOf(r, check.WALFsyncP99)
	if _, ok := diagnose.FindCheck(r, check.WALFsyncP99); !ok {
		if c, ok := diagnose.FindCheck(r, check.DiskSyncP99); ok {
			limit = c.Limit
		}
	}
	v := row.WALFsyncP99
	if v <= 0 || (row.WALFsyncBound && row.DiskSyncP99 > 0) {
		v = row.DiskSyncP99
	}
	if v <= 0 {
		return 0
	}
	return limit / v
}

func doctorParams(o DoctorOptions) map[string]any {
	p := map[string]any{
		"load":     o.Profile.Name,
		"rate":     o.Profile.Rate,
		"clients":  o.Profile.Clients,
		"duration": o.Duration.Seconds(),
		"noise":    o.Noise,
	}
	if len(o.DataDirs) > 0 {
		p["data_dirs"] = o.DataDirs
	}
	if !o.SkipDisk {
		p["disk_runtime"] = o.Disk.Runtime.Seconds()
		p["disk_size"] = o.Disk.Size
	}
	if o.SimulateFsyncDelay > 0 {
		p["simulate_fsync_delay"] = o.SimulateFsyncDelay.Seconds()
	}
	connParams(p, o.Conn)
	return p
}
