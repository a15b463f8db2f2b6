package pipeline

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/etcdperf/etcdperf/internal/clusterstate"
	"github.com/etcdperf/etcdperf/internal/diskprobe"
	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/liveprobe"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/sysinfo"
)

// doctorRun is one target of a doctor run, as its phases fill it.
type doctorRun struct {
	o     DoctorOptions
	runID string
	r     *result.Result
	row   result.DoctorTarget
	// dir is the location as the user named it, made absolute ("" for a
	// cluster's endpoints alone); storage is where etcd's data goes (dir,
	// or the slow view of it); device is the device etcd waits for ("":
	// not known, or a slow view's).
	dir, storage, device string
	// external: the cluster at o.Conn's endpoints; live: a live member,
	// which the disk probe goes beside only after the window.
	external, live bool
}

// newDoctorRun names a target, its row in the summary and its device.
func newDoctorRun(o DoctorOptions, dir, runID string) (*doctorRun, error) {
	d := &doctorRun{o: o, runID: runID, r: result.New(result.KindDoctor), external: len(o.Conn.Endpoints) > 0}
	d.live = d.external || o.Node != nil
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, err
		}
		dir = abs
		d.r.Name = dir
	}
	if d.external {
		d.r.Name = "etcd at " + strings.Join(o.Conn.Endpoints, ",")
		if o.Conn.EndpointsFrom != "" {
			d.r.Name += " (from " + o.Conn.EndpointsFrom + ")"
		}
	}
	d.row = result.DoctorTarget{Name: d.r.Name, Dir: dir, Endpoints: o.Conn.Endpoints, SimulatedFsyncDelay: o.SimulateFsyncDelay.Seconds()}
	d.dir, d.storage = dir, dir
	if dir != "" {
		d.r.Env = sysinfo.DirEnv(dir)
		d.device = d.r.Env.Device
	}
	return d, nil
}

// mountSlow puts etcd's data on a slow view of the location, whose fsyncs
// wait o.SimulateFsyncDelay; the caller stops it.
func (d *doctorRun) mountSlow(ctx context.Context) (*lab.InsideSlowDisk, error) {
	d.o.Progress.set("mounting a slow view of %s (fsync +%s)", d.dir, d.o.SimulateFsyncDelay)
	slow, err := lab.StartSlowDiskInside(ctx, d.o.SlowdiskCommand, d.dir, d.runID, d.o.SimulateFsyncDelay)
	if err != nil {
		return nil, err
	}
	d.storage = slow.View
	// What etcd waits for is the slow view, not the device under it.
	d.device = ""
	return slow, nil
}

// measure runs the target's phases in order until one fails: the disk
// probe and the defragmentation rehearsal (not beside a live member), the
// window on etcd, and the probe beside a live member after it.
func (d *doctorRun) measure(ctx context.Context) error {
	for _, phase := range []func(context.Context) error{d.probe, d.rehearse, d.window, d.probeBeside} {
		if err := phase(ctx); err != nil {
			return err
		}
	}
	return nil
}

// window is what the run does with etcd: watch it without load
// (o.Observe), or load it, then sweep its capacity and soak it, and load it
// under a neighbour's writes, as asked.
func (d *doctorRun) window(ctx context.Context) error {
	if !d.external {
		return d.loadOrObserve(ctx)
	}
	// The cluster's own state is read beside the window.
	state := clusterStateBeside(ctx, discoverAt(d.o.Conn), clusterstate.Options{})
	err := d.loadOrObserve(ctx)
	d.r.Cluster = state()
	return err
}

func (d *doctorRun) loadOrObserve(ctx context.Context) error {
	if d.o.Observe {
		d.o.Progress.set("watching %s for %s, without load", d.r.Name, d.o.Duration)
		return observeMembers(ctx, d.r, d.o.Conn, d.device, d.o.Duration, d.row.Member)
	}
	for _, phase := range []func(context.Context) error{d.load, d.capacity, d.noise} {
		if err := phase(ctx); err != nil {
			return err
		}
	}
	return nil
}

// measured says whether the run has anything to judge.
func (d *doctorRun) measured() bool {
	return d.r.Disk != nil || d.r.Bench != nil || (d.r.Server != nil && d.o.Observe)
}

// finish judges whatever was measured and returns it, with runErr; nil
// when nothing was.
func (d *doctorRun) finish(runErr error) (*result.Result, error) {
	if !d.measured() {
		return nil, runErr
	}
	r := d.r
	if runErr != nil {
		r.Error = joinErr(r.Error, errorText(runErr))
	}
	r.Doctor = &result.Doctor{Targets: []result.DoctorTarget{d.row}}
	judge.Judge(r, d.o.Criteria)
	r.Finish()
	return r, runErr
}

// probe runs the disk probe on the location before etcd starts on it.
// Beside a live member the probe comes after the window instead
// (probeBeside), and only when the member's own fsyncs in it cannot judge
// its disk.
func (d *doctorRun) probe(ctx context.Context) error {
	if d.dir == "" || d.o.SkipDisk || d.live {
		return nil
	}
	d.o.Progress.setKind(PhaseProbe, "probing the disk under %s", d.dir)
	probe := d.o.Disk
	probe.Dir = d.storage
	dres, err := probeDisk(ctx, DiskOptions{Probe: probe, Engine: EngineNative, Progress: d.o.Progress.disk()})
	if dres != nil {
		d.r.Disk = dres.Disk
		if dres.Error != "" {
			d.r.Error = dres.Error
		}
	}
	return err
}

// probeBeside probes the disk beside the live member, when that is
// wanted, once its window is over (liveprobe.Beside).
func (d *doctorRun) probeBeside(ctx context.Context) error {
	o := d.o
	if !d.live || (d.dir == "" && o.Node == nil) || o.SkipDisk {
		return nil
	}
	out, err := liveprobe.Beside(ctx, liveprobe.Options{
		Conn: o.Conn, Node: o.Node, Disk: o.Disk, Window: o.Duration, Explicit: o.DiskExplicit, Criteria: o.Criteria, RunID: d.runID,
		Probe: func(ctx context.Context, p diskprobe.Options) (*result.Result, error) {
			return probeDisk(ctx, DiskOptions{Probe: p, Engine: EngineNative, Progress: o.Progress.disk()})
		},
		Progress: func(phase string) { o.Progress.setKind(PhaseProbe, "%s", phase) }, // the probe beside the member
	}, d.r.Server, d.storage, d.device)
	d.row.DiskProbe = out.Row
	if out.Disk != nil {
		d.r.Disk = out.Disk
	}
	if out.Error != "" {
		d.r.Error = result.JoinError(d.r.Error, out.Error)
	}
	return err
}

// where names the target in the progress: the storage etcd runs on, or
// the cluster.
func (d *doctorRun) where() string {
	if d.external {
		return d.r.Name
	}
	return d.storage
}

// target is the etcd a phase runs on: the cluster, or an embedded etcd on
// the storage, under the run ID with suffix.
func (d *doctorRun) target(suffix string) lab.TargetOptions {
	o := d.o
	t := lab.TargetOptions{Conn: o.Conn, DataDir: d.storage, RunID: d.runID + suffix, ServerCommand: o.ServerCommand, Members: o.Members, Faults: o.Faults}
	if d.external {
		t.DataDir = ""
	}
	return t
}

// checkOptions are the load's: check perf's profile on the target, and
// on a node's member the stall its next defragmentation would cause.
func (d *doctorRun) checkOptions() CheckOptions {
	o, where := d.o, d.where()
	return CheckOptions{
		Target:   d.target(""),
		Profile:  o.Profile,
		Duration: o.Duration,
		Criteria: o.Criteria,
		Device:   d.device,
		Progress: o.Progress.load(),
		// The member on this node (--node): its next defragmentation's
		// stall, from its /metrics.
		DefragMember: d.row.Member,
		Started: func() {
			o.Progress.setKind(PhaseLoad, "loading etcd on %s: profile %s, %.0f puts/s", where, o.Profile.Name, o.Profile.Rate)
		},
	}
}

// load runs check perf's load on the target and takes its sections.
func (d *doctorRun) load(ctx context.Context) error {
	d.o.Progress.set("starting etcd on %s", d.where())
	cres, err := runCheck(ctx, d.checkOptions())
	if cres != nil {
		takeLoad(d.r, cres, d.row.Dir)
	}
	return err
}

// capacity sweeps the offered write rate after the load (o.Capacity),
// then holds the sweep's answer or a rate (o.Soak).
func (d *doctorRun) capacity(ctx context.Context) error {
	o := d.o
	w := sweepSettings{capacity: o.Capacity, step: o.CapacityStep, confirm: o.CapacityConfirm, dbSize: o.DBSize, sizesFrom: o.SizesFrom,
		demand: o.Demand, demandFrom: o.DemandFrom, soak: o.Soak, base: o.Profile, device: d.device, criteria: o.Criteria,
		where: d.where(), phase: func(phase string) { o.Progress.set("%s", phase) }, target: d.target}
	var err error
	d.r.Capacity, d.r.Soak, err = w.run(ctx, d.r)
	return err
}

// noise repeats the load under a neighbour's bulk writes (o.Noise), as
// one of the target's runs.
func (d *doctorRun) noise(ctx context.Context) error {
	if !d.o.Noise || d.dir == "" {
		return nil
	}
	where := d.where()
	d.o.Progress.set("starting etcd on %s again, with a neighbour writing bulk data", where)
	noisy, written, err := noisyRun(ctx, d.o, d.checkOptions(), d.dir, d.runID, where)
	if noisy != nil {
		d.r.Runs = append(d.r.Runs, *noisy)
		d.row.Noise = &result.NoiseEffect{BytesWritten: written}
	}
	return err
}
