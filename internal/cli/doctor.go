package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/capacity"
	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/diskprobe"
	"github.com/etcdperf/etcdperf/internal/pipeline"
	"github.com/etcdperf/etcdperf/internal/promexport"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/slowfs"
	"github.com/etcdperf/etcdperf/internal/units"
)

// defaultReport is where doctor writes its Result unless told otherwise.
const defaultReport = "etcdperf-report.json"

func newDoctorCmd() *cobra.Command {
	var (
		dataDirs    []string
		loadName    string
		duration    time.Duration
		diskRuntime time.Duration
		diskSize    = int64(diskprobe.DefaultSize)
		diskRate    float64
		capacityOn  bool
		capStep     time.Duration
		capConfirm  time.Duration
		sweep       sweepFlags
		demand      float64
		demandFrom  string
		demandSince string
		noiseOn     bool
		slowDelay   time.Duration
		limits      []string
		volume      volumeFlags
		soak        soakFlags
		reportPath  string
		noReport    bool
	)
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Is this storage fast enough for etcd, and if not why? The one-command verdict",
		Long: `Judge the storage under the current directory (or each --data-dir) for etcd,
in about a minute per location (half of it the capacity sweep):

 1. the disk probe: etcd's WAL pattern (2300-byte writes, fdatasync after
    each) for up to --disk-runtime;
 2. an embedded etcd, in a process of its own, with its data on that storage,
    under etcdctl check perf's load (--load, default s: 50 clients, 150 puts/s
    of 1 KiB) for --duration;
 3. etcd's own metrics of the run (WAL fsync, backend commit, leader changes,
    CPU), the device's utilisation and latency (/proc/diskstats) and the CPUs
    (/proc/stat), and etcdperf's own CPU (the client's);

then a capacity sweep (--capacity, on by default): the offered write rate
raised step by step (check perf's m, l and xl rates and finer steps between,
--capacity-step each) until a step breaks one of etcd's limits, to say how
many puts/s the storage carries and what breaks first: the disk's latency,
the volume's IOPS cap, etcd's CPU or the load generator. With the sweep it
also rehearses a defragmentation there (a 64 MiB bbolt database copied as
etcd defragments, in files of its own, removed at once) and states the stall
a defragmentation of a database of --db-size (default: etcd's 2 GiB quota)
would cause, against a Kubernetes controller's 10s lease renew deadline.

Then a verdict per location: is it fast enough, with how much headroom (fsync
p99 against 10ms, throughput against the rate, how busy the device was), and
what limits etcd there: the disk, the CPU, or the load generator itself.
Findings carry their evidence and what to change.

Several --data-dir are measured one after the other and shown side by side
with the ratios between them (a RAM disk against a disk in one command); a
tmpfs is flagged as fast but not durable. --noise measures again while a
neighbour writes bulk data on the same device (as image pulls and builds do).
--simulate-fsync-delay 15ms runs everything on a slow view of the directory
(etcdperf slowdisk; root and /dev/fuse) to show what a slow disk does.
--endpoints judges an existing cluster instead, under load (the disk probe
runs only on a --data-dir given with --endpoints); keys stay under
/etcdperf/<run id>/ and are deleted at the end. Only a cluster named with
--endpoints is loaded: etcdctl's ETCDCTL_ENDPOINTS, often exported on
control-plane nodes, is ignored (and said so) unless --node is given. For each member that runs on this host (an endpoint on a
loopback address) doctor also reads its process: its threads' wait for a CPU,
its cgroup's CPU throttling, the device under its WAL; that is what tells a
starved CPU from a slow disk. Of a member elsewhere it says "its disk or its
CPU" and how to tell. --members N and --fault make a faulty embedded cluster
on purpose (see etcdperf server --help).

--node is the on-call command on a control-plane node: it finds the etcd
member that runs there as etcdperf discover does (kubeadm, k3s, RKE2,
OpenShift, systemd; --root reads the node's files under another directory)
and reaches it with the node's endpoints and certificates (unless --endpoints,
--cacert, --cert, --key or ETCDCTL_* say otherwise). Without load, since the
member is in production: for --duration it watches the member's /metrics (WAL
fsync, backend commit, leader changes, peer round trips), its process (CPU,
wait for a CPU, throttling, the device under its WAL) and this host's CPUs and
device. The member's own WAL fsyncs are the disk probe: when it made at least
300 during the window (--limit member_fsyncs_enough), nothing is written
beside it. Only a member too idle to judge gets a probe of ours, after the
window, in a folder of its own beside the data dir on the same file system
(in the data dir beside member/ when the data dir is a disk of its own, never
inside member/): paced (--disk-rate, 50 fdatasyncs/s) for at most
--disk-runtime, and stopped at once when the member's WAL fsync p99 over the
last 3 seconds passes 10ms or the device is over 90% busy (--limit
wal_fsync_p99, probe_device_busy). --disk-runtime or --disk-rate given by name
runs the probe even on a busy member (still paced and guarded); --disk-runtime 0 never
runs it. The same holds for --endpoints with --data-dir. Then it reads the member's log written
during the run (kubelet's pod log found on the node, its systemd unit's
journal, or --log-file) as etcdperf logs does. The stall a
defragmentation of the member would cause comes from its database size and
its own past defragmentations, without writing anything. --load s adds check perf's
load, as with --endpoints. It ends with etcd's flags computed from what it
measured (the timers from the round trips, the quota from the database and
the defragmentation's stall, the auto-compaction from the compactions seen),
each against the value the node's configuration sets; --tuning-out FILE
writes the changes as the node's layout takes them (a kubeadm
ClusterConfiguration, k3s' config.yaml, a systemd environment file or
etcd's config file). Nothing is changed on the node.

The Result is written to etcdperf-report.json in the current directory
(--report FILE, --no-report); -o and --html as every command. Everything the
run creates (keys, etcd's data, probe and noise files, mounts) is removed,
also on Ctrl-C, and an interrupted run still writes its partial Result.
Exit codes: 0 pass or warn, 1 a location failed, 2 the run could not be done.`,
		Example: `  # Is the storage under the current directory fast enough for etcd?
  etcdperf doctor

  # A disk against a RAM disk, side by side
  etcdperf doctor --data-dir /var/lib/etcd-test --data-dir /dev/shm/etcd-test

  # The same disk while a neighbour writes bulk data on it
  etcdperf doctor --data-dir /var/lib/etcd-test --noise

  # What a disk 15ms slower per fsync does to etcd (root, /dev/fuse)
  etcdperf doctor --simulate-fsync-delay 15ms

  # How much write load does this volume carry, against a cluster whose
  # peak is 1,200 writes/s (a warning under 2x headroom)?
  etcdperf doctor --data-dir /var/lib/etcd-test --demand 1200

  # The same, against the cluster as its Prometheus saw it over 7 days: its
  # peak write demand, its database's size and its mean write
  etcdperf doctor --data-dir /var/lib/etcd-test --demand-from http://prometheus:9090 \
    --db-size from-prometheus --value-size from-prometheus

  # Rehearse a slow link: 3 members, the second behind 200ms more per round trip
  etcdperf doctor --members 3 --fault 2:peer-latency=200ms --duration 20s

  # On call, on a control-plane node: judge the etcd member running here,
  # without load (its metrics, its process, its device; no write beside a
  # busy member)
  sudo etcdperf doctor --node

  # The same, from a copy of a node's files, over 20 seconds
  etcdperf doctor --node --root /mnt/node1 --duration 20s

  # And the flags to change, as a kubeadm ClusterConfiguration to merge
  sudo etcdperf doctor --node --tuning-out etcd-flags.yaml

  # An existing cluster, profile m, with its disk on this host probed too
  etcdperf doctor --endpoints=10.0.0.1:2379 --load m --data-dir /var/lib/etcd`,
		Args: noArgs,
	}
	conn := addConnFlags(cmd)
	out := addOutputFlag(cmd)
	mf := addMemberFlags(cmd)
	nf := addNodeFlags(cmd)
	fl := cmd.Flags()
	fl.StringArrayVar(&dataDirs, "data-dir", nil, "storage location to judge (repeatable; default the current directory); with --endpoints, the disk to probe")
	fl.StringVar(&loadName, "load", "s", "etcdctl check perf's workload model: s, m, l or xl")
	fl.DurationVar(&duration, "duration", pipeline.DefaultDoctorDuration, "how long etcd is loaded, per location")
	fl.DurationVar(&diskRuntime, "disk-runtime", pipeline.DefaultDoctorDiskRuntime, "longest time of the disk probe (0 skips it)")
	fl.Var(sizeValue{&diskSize}, "disk-size", "bytes the disk probe writes at most (as fio's --size)")
	fl.Float64Var(&diskRate, "disk-rate", pipeline.DefaultLiveDiskRate, "beside a live member (--node, --endpoints with --data-dir), the disk probe's fdatasyncs per second at most (0: as fast as the device allows); "+
		"a directory's storage test is paced only when this is given")
	fl.BoolVar(&capacityOn, "capacity", true, "after the verdict, raise the offered write rate step by step until a limit breaks: how much this storage carries (on by default for a directory; with --endpoints or --node only when given, since it loads that cluster)")
	fl.DurationVar(&capStep, "capacity-step", capacity.DefaultStep, "how long each step of the capacity sweep loads etcd")
	fl.DurationVar(&capConfirm, "capacity-confirm", capacity.DefaultConfirm, "after the knee, hold the answer this long, then rates above it while the holds hold and under it once one breaks, each judged as a soak is, so that the capacity is one that held (0: no confirm step)")
	fl.Float64Var(&demand, "demand", 0, "the cluster's peak write demand in writes/s (e.g. etcd_server_proposals_committed_total's peak rate, as doctor --node or etcdperf metrics report it): the capacity is judged against it (headroom under 2x warns, under 1x fails)")
	fl.StringVar(&demandFrom, "demand-from", "", "read the peak write demand from the Prometheus at this URL that scrapes the cluster (the p99 of its 1-minute rates of etcd_server_proposals_committed_total over --demand-since), instead of --demand")
	fl.StringVar(&demandSince, "demand-since", "7d", "with --demand-from, the period to read the peak over, e.g. 24h, 7d")
	fl.BoolVar(&noiseOn, "noise", false, "measure each location again while a background writer writes bulk data on its device")
	fl.DurationVar(&slowDelay, "simulate-fsync-delay", 0, "run on a slow view of each location whose fsyncs wait this long more (needs root and /dev/fuse)")
	fl.StringArrayVar(&limits, "limit", nil, "override a limit: NAME=VALUE[,WARN], e.g. wal_fsync_p99=5ms (repeatable)")
	volume.add(fl)
	sweep.add(fl, true)
	soak.add(fl)
	fl.StringVar(&reportPath, "report", defaultReport, "write the Result (JSON) to this file")
	fl.BoolVar(&noReport, "no-report", false, "do not write the Result file")

	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		sinks, err := out.sinks()
		if err != nil {
			return err
		}
		prof, err := check.LookupProfile(loadName)
		if err != nil {
			return usageError("%v", err)
		}
		if duration <= 0 {
			return usageError("--duration must be positive, got %s", duration)
		}
		if diskRuntime < 0 {
			return usageError("--disk-runtime cannot be negative")
		}
		if demand < 0 {
			return usageError("--demand must be a positive rate of writes per second, got %g", demand)
		}
		if demandFrom != "" && cmd.Flags().Changed("demand") {
			return usageError("give --demand or --demand-from, not both")
		}
		if cmd.Flags().Changed("demand-since") && demandFrom == "" {
			return usageError("--demand-since is for --demand-from URL")
		}
		if (demand > 0 || demandFrom != "") && !capacityOn {
			return usageError("--demand judges the capacity sweep: drop --capacity=false")
		}
		if capConfirm < 0 {
			return usageError("--capacity-confirm cannot be negative, got %s", capConfirm)
		}
		if capStep <= 0 {
			return usageError("--capacity-step must be positive, got %s", capStep)
		}
		if diskRate < 0 {
			return usageError("--disk-rate cannot be negative, got %g", diskRate)
		}
		conn.endpointsFound = nf.on
		if !nf.on {
			// The storage test loads only a cluster named by --endpoints,
			// never one that etcdctl's environment points at.
			where := []string{"."}
			if len(dataDirs) > 0 {
				where = dataDirs
			}
			conn.ignoreEnvEndpoints = "doctor judges the storage under " + strings.Join(where, " and ") + " with an embedded etcd"
		}
		co, err := conn.options(cmd)
		if err != nil {
			return err
		}
		if err := nf.conflicts(cmd); err != nil {
			return err
		}
		if nf.on {
			dataDirs = nil
		}
		external := len(co.Endpoints) > 0
		if err := sweep.apply(&prof, external || nf.on, capacityOn); err != nil {
			return err
		}
		soakOn, err := soak.settings(cmd, capacityOn && (!(external || nf.on) || cmd.Flags().Changed("capacity")))
		if err != nil {
			return err
		}
		var target cluster.TargetOptions
		if err := mf.options(cmd, co, &target); err != nil {
			return err
		}
		if external && len(dataDirs) > 1 {
			return usageError("with --endpoints, give at most one --data-dir: the disk of the cluster on this host, to probe")
		}
		if external && slowDelay > 0 {
			return usageError("--simulate-fsync-delay slows the embedded etcd's disk; it cannot be used with --endpoints")
		}
		if external && noiseOn && len(dataDirs) == 0 {
			return usageError("--noise writes on the storage under test: with --endpoints, give the cluster's --data-dir on this host")
		}
		for _, d := range dataDirs {
			if err := checkDir("--data-dir", d); err != nil {
				return err
			}
		}
		if !external && len(dataDirs) == 0 && !nf.on {
			dataDirs = []string{"."}
		}
		if slowDelay != 0 {
			if err := (slowfs.Config{FsyncDelay: slowDelay}).Validate(); err != nil {
				return usageError("--simulate-fsync-delay: %v", err)
			}
			if err := pipeline.CanMountFUSE(); err != nil {
				return usageError("%v", err)
			}
		}
		criteria, err := criteriaOf(limits, &volume)
		if err != nil {
			return err
		}
		probe := diskprobe.Options{Dir: ".", BlockSize: diskprobe.DefaultBlockSize, Size: diskSize, Runtime: diskRuntime,
			Prealloc: true, Sync: diskprobe.SyncFdatasync, RW: diskprobe.Sequential, Jobs: 1, DirFlag: "--data-dir", SizeFlag: "--disk-size"}
		diskExplicit := cmd.Flags().Changed("disk-runtime") || cmd.Flags().Changed("disk-rate")
		if external || nf.on || cmd.Flags().Changed("disk-rate") {
			// Beside a live member the probe leaves the device to etcd.
			probe.Rate = diskRate
		}
		if diskRuntime > 0 {
			if diskSize < int64(probe.BlockSize) {
				return usageError("--disk-size %s: the disk probe writes %d-byte blocks, give it at least one (default %s)",
					units.Size(diskSize), probe.BlockSize, units.Size(diskprobe.DefaultSize))
			}
			if err := probe.Validate(); err != nil {
				return usageError("%v", err)
			}
		}
		if noReport {
			reportPath = ""
		}
		if reportPath != "" {
			if err := result.CheckWritable(reportPath); err != nil {
				return usageError("%s", reportError(reportPath, err))
			}
		}

		demandWords := "--demand"
		if demandFrom != "" {
			if _, err := promexport.CheckURL(demandFrom); err != nil {
				return usageError("--demand-from: %v", err)
			}
			// Read before anything is measured: a Prometheus that cannot
			// say is one line and exit 2.
			d, words, err := pipeline.PeakDemand(cmd.Context(), promexport.Options{URL: demandFrom, Timeout: 30 * time.Second}, demandSince)
			if err != nil {
				return usageError("--demand-from %s: %v", demandFrom, err)
			}
			if d <= 0 {
				return usageError("--demand-from %s: the cluster committed no writes over %s: nothing to judge the capacity against", demandFrom, demandSince)
			}
			demand, demandWords = d, words
		}
		sizesFrom, err := sweep.readProm(cmd.Context(), &prof, promexport.Options{URL: demandFrom, Timeout: 30 * time.Second}, demandSince)
		if err != nil {
			return err
		}
		o := pipeline.DoctorOptions{
			DataDirs: dataDirs, Conn: co, Members: target.Members, Faults: target.Faults, Profile: prof, Duration: duration,
			Capacity: capacityOn && (!(external || nf.on) || cmd.Flags().Changed("capacity")), CapacityStep: capStep, CapacityConfirm: capConfirm, DBSize: sweep.dbSize, SizesFrom: sizesFrom,
			Demand: demand, DemandFrom: demandWords, Soak: soakOn,
			Disk: probe, SkipDisk: diskRuntime == 0, DiskExplicit: diskExplicit, Noise: noiseOn, SimulateFsyncDelay: slowDelay,
			Criteria: criteria, Progress: &pipeline.DoctorProgress{},
		}
		if nf.on {
			if o.Node, err = nf.resolve(cmd, co, probe, o.SkipDisk); err != nil {
				return err
			}
			o.Observe = !cmd.Flags().Changed("load")
		}
		conn.announce(cmd)
		stop := startProgress(cmd, doctorTotal(o), doctorProgressLine(o.Progress, duration))
		res, runErr := pipeline.Doctor(cmd.Context(), o)
		stop()
		if res != nil && reportPath != "" {
			if err := result.WriteFile(reportPath, res); err != nil {
				// As a file -o names: the run could not be carried out
				// to its end.
				runErr = errors.Join(runErr, &exitError{code: ExitError, err: errors.New(reportError(reportPath, err))})
			} else if !quiet(cmd) {
				fmt.Fprintf(cmd.ErrOrStderr(), "etcdperf: the Result is in %s (etcdperf report %s -o report.html draws it)\n", reportPath, reportPath)
			}
		}
		runErr = errors.Join(runErr, nf.writeTuning(res))
		return finish(cmd, sinks, res, runErr)
	}
	return cmd
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
		// About six steps and two holds (at most four).
		per += 6*o.CapacityStep + 2*o.CapacityConfirm
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
		phase, since := p.Phase()
		if phase != last {
			last, doneBase = phase, p.Load.Done()
		}
		el := time.Since(since).Truncate(time.Second)
		switch {
		case strings.HasPrefix(phase, "loading"):
			return phase + " " + countProgress(p.Load.Done()-doneBase, 0, time.Since(since), duration)
		case strings.HasPrefix(phase, "probing"):
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
