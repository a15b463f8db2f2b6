package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/diskprobe"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/pipeline"
	"github.com/etcdperf/etcdperf/internal/profile"
	"github.com/etcdperf/etcdperf/internal/promexport"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/slowfs"
	"github.com/etcdperf/etcdperf/internal/units"
)

// defaultReport is where doctor writes its Result unless told otherwise.
const defaultReport = "etcdperf-report.json"

func newDoctorCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "doctor",
		Short:   "Is this storage fast enough for etcd, and if not why? The one-command verdict",
		Long:    doctorLong,
		Example: doctorExample,
		Args:    noArgs,
	}
	f := addDoctorFlags(cmd)
	cmd.RunE = completeRun(f.out, f.complete, f.run)
	return cmd
}

// doctorFlags are doctor's flags as given.
type doctorFlags struct {
	conn    *connFlags
	out     *outputFlag
	members *memberFlags
	node    *nodeFlags

	dataDirs              []string
	load                  string
	duration, diskRuntime time.Duration
	diskSize              int64
	diskRate              float64
	capacity              capacityFlags
	demand                float64
	demandFrom            string
	demandSince           string
	noise                 bool
	slowDelay             time.Duration
	limits                []string
	volume                volumeFlags
	report                string
	noReport              bool
}

// defaultDoctorFlags are doctor's flags as no flag is given.
func defaultDoctorFlags() *doctorFlags {
	return &doctorFlags{load: "s", diskRuntime: pipeline.DefaultDoctorDiskRuntime,
		diskSize: diskprobe.DefaultSize, diskRate: pipeline.DefaultLiveDiskRate, demandSince: "7d", report: defaultReport,
		capacity: newCapacityFlags(true)}
}

func addDoctorFlags(cmd *cobra.Command) *doctorFlags {
	f := defaultDoctorFlags()
	f.conn, f.out, f.members, f.node = addConnFlags(cmd), addOutputFlag(cmd), addMemberFlags(cmd), addNodeFlags(cmd)
	fl := cmd.Flags()
	fl.StringArrayVar(&f.dataDirs, "data-dir", nil, "storage location to judge (repeatable; default the current directory); with --endpoints, the disk to probe")
	fl.StringVar(&f.load, "load", f.load, "etcdctl check perf's workload model: s, m, l or xl")
	fl.DurationVar(&f.duration, "duration", 0, fmt.Sprintf("how long etcd is loaded, per location (default %s); with --endpoints or --node, how long the cluster is loaded or watched (default %s)",
		units.ShortDuration(pipeline.DefaultDoctorDuration), units.ShortDuration(pipeline.DefaultDoctorWatch)))
	fl.DurationVar(&f.diskRuntime, "disk-runtime", f.diskRuntime, "longest time of the disk probe (0 skips it)")
	fl.Var(sizeValue{&f.diskSize}, "disk-size", "bytes the disk probe writes at most (as fio's --size)")
	fl.Float64Var(&f.diskRate, "disk-rate", f.diskRate, "beside a live member (--node, --endpoints with --data-dir), the disk probe's fdatasyncs per second at most (0: as fast as the device allows); "+
		"a directory's storage test is paced only when this is given")
	f.capacity.add(fl, true)
	fl.Float64Var(&f.demand, "demand", 0, "the cluster's peak write demand in writes/s (e.g. etcd_server_proposals_committed_total's peak rate, as doctor --node or etcdperf metrics report it): the capacity is judged against it (headroom under 2x warns, under 1x fails)")
	fl.StringVar(&f.demandFrom, "demand-from", "", "read the peak write demand from the Prometheus at this URL that scrapes the cluster (the p99 of its 1-minute rates of etcd_server_proposals_committed_total over --demand-since), instead of --demand")
	fl.StringVar(&f.demandSince, "demand-since", f.demandSince, "with --demand-from, the period to read the peak over, e.g. 24h, 7d")
	fl.BoolVar(&f.noise, "noise", false, "measure each location again while a background writer writes bulk data on its device")
	fl.DurationVar(&f.slowDelay, "simulate-fsync-delay", 0, "run on a slow view of each location whose fsyncs wait this long more (needs root and /dev/fuse)")
	fl.StringArrayVar(&f.limits, "limit", nil, "override a limit: NAME=VALUE[,WARN], e.g. wal_fsync_p99=5ms (repeatable)")
	f.volume.add(fl)
	fl.StringVar(&f.report, "report", f.report, "write the Result (JSON) to this file")
	fl.BoolVar(&f.noReport, "no-report", false, "do not write the Result file")
	return f
}

// validate checks the flags by their values alone, before anything is
// read or measured: given says which were given by name, reaches that the
// run reaches a cluster (--endpoints, etcdctl's environment, --node). It
// returns the first usage error.
func (f *doctorFlags) validate(given func(string) bool, reaches bool) error {
	if _, err := profile.Lookup(f.load); err != nil {
		return usageError("%v", err)
	}
	switch {
	case given("duration") && f.duration <= 0:
		return usageError("--duration must be positive, got %s", f.duration)
	case f.diskRuntime < 0:
		return usageError("--disk-runtime cannot be negative")
	case f.demand < 0:
		return usageError("--demand must be a positive rate of writes per second, got %g", f.demand)
	case f.demandFrom != "" && given("demand"):
		return usageError("give --demand or --demand-from, not both")
	case given("demand-since") && f.demandFrom == "":
		return usageError("--demand-since is for --demand-from URL")
	case (f.demand > 0 || f.demandFrom != "") && !f.capacity.on:
		return usageError("--demand judges the capacity sweep: drop --capacity=false")
	case f.diskRate < 0:
		return usageError("--disk-rate cannot be negative, got %g", f.diskRate)
	}
	if err := f.capacity.validate(); err != nil {
		return err
	}
	if _, err := f.capacity.soak.settings(given, pipeline.SweepsCapacity(f.capacity.on, given("capacity"), reaches)); err != nil {
		return err
	}
	if f.slowDelay != 0 {
		if err := (slowfs.Config{FsyncDelay: f.slowDelay}).Validate(); err != nil {
			return usageError("--simulate-fsync-delay: %v", err)
		}
	}
	if f.diskRuntime > 0 {
		probe := f.probe(reaches, given)
		if f.diskSize < int64(probe.BlockSize) {
			return usageError("--disk-size %s: the disk probe writes %d-byte blocks, give it at least one (default %s)",
				units.Size(f.diskSize), probe.BlockSize, units.Size(diskprobe.DefaultSize))
		}
		if err := probe.Validate(); err != nil {
			return usageError("%v", err)
		}
	}
	return nil
}

// probe is the disk probe the flags ask for (its Dir set per location).
func (f *doctorFlags) probe(reaches bool, given func(string) bool) diskprobe.Options {
	return diskprobe.Options{Dir: ".", BlockSize: diskprobe.DefaultBlockSize, Size: f.diskSize, Runtime: f.diskRuntime,
		Prealloc: true, Sync: diskprobe.SyncFdatasync, RW: diskprobe.Sequential, Jobs: 1, DirFlag: "--data-dir", SizeFlag: "--disk-size",
		Rate: pipeline.ProbeRate(f.diskRate, reaches, given("disk-rate"))}
}

// complete validates the flags and turns them into the run's options:
// the connection, the node's member, the Prometheus's figures and the
// checks of the files and directories named, all before anything is
// measured (a usage error of one line).
func (f *doctorFlags) complete(cmd *cobra.Command) (pipeline.DoctorOptions, error) {
	given := cmd.Flags().Changed
	f.conn.endpointsFound = f.node.on
	if !f.node.on {
		// The storage test loads only a cluster named by --endpoints,
		// never one that etcdctl's environment points at.
		where := []string{"."}
		if len(f.dataDirs) > 0 {
			where = f.dataDirs
		}
		f.conn.ignoreEnvEndpoints = "doctor judges the storage under " + strings.Join(where, " and ") + " with an embedded etcd"
	}
	if err := f.validate(given, f.node.on); err != nil {
		return pipeline.DoctorOptions{}, err
	}
	co, err := f.conn.options(cmd)
	if err != nil {
		return pipeline.DoctorOptions{}, err
	}
	if err := f.node.conflicts(cmd); err != nil {
		return pipeline.DoctorOptions{}, err
	}
	if f.node.on {
		f.dataDirs = nil
	}
	reaches := len(co.Endpoints) > 0 || f.node.on
	if !given("duration") {
		f.duration = pipeline.DoctorDuration(reaches)
	}
	prof, _ := profile.Lookup(f.load)
	if err := f.capacity.sizes.apply(&prof, reaches, f.capacity.on); err != nil {
		return pipeline.DoctorOptions{}, err
	}
	sweeps := pipeline.SweepsCapacity(f.capacity.on, given("capacity"), reaches)
	soak, err := f.capacity.soak.settings(given, sweeps)
	if err != nil {
		return pipeline.DoctorOptions{}, err
	}
	var target lab.TargetOptions
	if err := f.members.options(cmd, co, &target); err != nil {
		return pipeline.DoctorOptions{}, err
	}
	o := pipeline.DoctorOptions{
		DataDirs: f.dataDirs, Conn: co, Members: target.Members, Faults: target.Faults, Profile: prof, Duration: f.duration,
		Capacity: sweeps, CapacityStep: f.capacity.step, CapacityConfirm: f.capacity.confirm, DBSize: f.capacity.sizes.dbSize,
		Demand: f.demand, DemandFrom: "--demand", Soak: soak,
		Disk: f.probe(reaches, given), SkipDisk: f.diskRuntime == 0, DiskExplicit: given("disk-runtime") || given("disk-rate"),
		Noise: f.noise, SimulateFsyncDelay: f.slowDelay, Progress: &pipeline.DoctorProgress{},
	}
	if err := o.Validate(); err != nil {
		return o, usageError("%v", err)
	}
	if err := f.checkFiles(); err != nil {
		return o, err
	}
	if o.Criteria, err = criteriaOf(f.limits, &f.volume); err != nil {
		return o, err
	}
	if err := f.readProm(cmd, &o); err != nil {
		return o, err
	}
	if f.node.on {
		if o.Node, err = f.node.resolve(cmd, co, o.Disk, o.SkipDisk); err != nil {
			return o, err
		}
		o.Observe = !given("load")
	}
	return o, nil
}

// checkFiles checks the directories and files the flags name: the
// locations exist, the slow view can be mounted, the Result can be
// written.
func (f *doctorFlags) checkFiles() error {
	for _, d := range f.dataDirs {
		if err := checkDir("--data-dir", d); err != nil {
			return err
		}
	}
	if f.slowDelay != 0 {
		if err := pipeline.CanMountFUSE(); err != nil {
			return usageError("%v", err)
		}
	}
	if f.noReport {
		f.report = ""
	}
	if f.report != "" {
		if err := result.CheckWritable(f.report); err != nil {
			return usageError("%s", reportError(f.report, err))
		}
	}
	return nil
}

// readProm reads what --demand-from and the sizes from-prometheus ask of
// the Prometheus, before anything is measured: a Prometheus that cannot
// say is one line and exit 2.
func (f *doctorFlags) readProm(cmd *cobra.Command, o *pipeline.DoctorOptions) error {
	conn := promexport.Options{URL: f.demandFrom, Timeout: 30 * time.Second}
	if f.demandFrom != "" {
		if _, err := promexport.CheckURL(f.demandFrom); err != nil {
			return usageError("--demand-from: %v", err)
		}
		d, words, err := promexport.PeakDemand(cmd.Context(), conn, f.demandSince)
		if err != nil {
			return usageError("--demand-from %s: %v", f.demandFrom, err)
		}
		if d <= 0 {
			return usageError("--demand-from %s: the cluster committed no writes over %s: nothing to judge the capacity against", f.demandFrom, f.demandSince)
		}
		o.Demand, o.DemandFrom = d, words
	}
	var err error
	o.SizesFrom, err = f.capacity.sizes.readProm(cmd.Context(), &o.Profile, conn, f.demandSince)
	o.DBSize = f.capacity.sizes.dbSize
	return err
}

// run runs doctor and writes its Result, its outputs and --tuning-out.
func (f *doctorFlags) run(cmd *cobra.Command, sinks []sink, o pipeline.DoctorOptions) error {
	f.conn.announce(cmd)
	stop := startProgress(cmd, doctorTotal(o), doctorProgressLine(o.Progress, o.Duration))
	res, runErr := pipeline.Doctor(cmd.Context(), o)
	stop()
	if res != nil && f.report != "" {
		if err := result.WriteFile(f.report, res); err != nil {
			// As a file -o names: the run could not be carried out to
			// its end.
			runErr = errors.Join(runErr, &exitError{code: ExitError, err: errors.New(reportError(f.report, err))})
		} else if !quiet(cmd) {
			fmt.Fprintf(cmd.ErrOrStderr(), "etcdperf: the Result is in %s (etcdperf report %s -o report.html draws it)\n", f.report, f.report)
		}
	}
	runErr = errors.Join(runErr, f.node.writeTuning(res))
	return finish(cmd, sinks, res, runErr)
}

// doctorTotal is about how long a doctor run takes: per location the disk
// probe at most, the load, and the load again with --noise.
func doctorTotal(o pipeline.DoctorOptions) time.Duration {
	per := o.Duration
	if !o.SkipDisk && (len(o.DataDirs) > 0 || o.Node != nil) {
		per += o.Disk.Runtime
	}
	if o.Noise {
		per += o.Duration
	}
	if o.Capacity {
		// About six steps and two holds (at most four), most decided
		// after two thirds of their time (judge.HoldDecided).
		per += 6*o.CapacityStep + 4*o.CapacityConfirm/3
	}
	per += o.Soak.Duration
	return per * time.Duration(max(1, len(o.DataDirs)))
}

// doctorProgressLine draws what a doctor run is doing.
func doctorProgressLine(p *pipeline.DoctorProgress, duration time.Duration) func(time.Duration) string {
	var (
		last     string
		doneBase int64
	)
	return func(time.Duration) string {
		phase, kind, since := p.Phase()
		if phase != last {
			last, doneBase = phase, p.Load.Done()
		}
		el := time.Since(since).Truncate(time.Second)
		switch {
		case kind == pipeline.PhaseLoad:
			return phase + " " + countProgress(p.Load.Done()-doneBase, 0, time.Since(since), duration)
		case kind == pipeline.PhaseProbe:
			return fmt.Sprintf("%s: %.1f MiB in %s", phase, float64(p.Disk.Bytes())/(1<<20), el)
		case phase == "":
			return "starting..."
		}
		return fmt.Sprintf("%s... %s", phase, el)
	}
}

// reportError says that doctor cannot write its Result to path, and what
// to do.
func reportError(path string, err error) string {
	return fmt.Sprintf("cannot write the Result to %s: %v; %s", path, err, writableHint(err, path, "give --report PATH or --no-report"))
}

// checkDir rejects a flag's directory that does not exist or is not one.
func checkDir(flag, dir string) error {
	st, err := os.Stat(dir)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, fs.ErrNotExist) {
		return usageError("%s %s does not exist: create it on the storage to test (mkdir -p %s)", flag, dir, dir)
	}
	if err != nil {
		return usageError("%s %s: %v", flag, dir, err)
	}
	if !st.IsDir() {
		return usageError("%s %s is not a directory", flag, dir)
	}
	return nil
}
