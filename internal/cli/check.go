package cli

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/capacity"
	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/load"
	"github.com/etcdperf/etcdperf/internal/pipeline"
)

// checkFlags are the flags check perf and check datascale share.
type checkFlags struct {
	conn        *connFlags
	members     *memberFlags
	out         *outputFlag
	load        string
	prefix      string
	dataDir     string
	autoCompact bool
	autoDefrag  bool
	limits      []string
	volume      volumeFlags
}

func addCheckFlags(cmd *cobra.Command) *checkFlags {
	cf := &checkFlags{conn: addConnFlags(cmd), out: addOutputFlag(cmd), members: addMemberFlags(cmd)}
	fl := cmd.Flags()
	fl.StringVar(&cf.load, "load", "s", "etcdctl's workload model: s, m, l or xl (small, medium, large, xLarge)")
	fl.StringVar(&cf.prefix, "prefix", "", "key prefix of the run (default /etcdperf/<run id>/); it must hold no key")
	fl.StringVar(&cf.dataDir, "data-dir", ".", "embedded etcd: directory on the storage under test that receives its data")
	fl.BoolVar(&cf.autoCompact, "auto-compact", false, "compact etcd's history after deleting the run's keys (as etcdctl)")
	fl.BoolVar(&cf.autoDefrag, "auto-defrag", false, "defragment every member afterwards (as etcdctl; an external cluster only)")
	fl.StringArrayVar(&cf.limits, "limit", nil, "override a limit: NAME=VALUE[,WARN], e.g. wal_fsync_p99=5ms or throughput=95% (repeatable)")
	cf.volume.add(fl)
	return cf
}

// common validates the shared flags and returns the target and criteria.
func (cf *checkFlags) common(cmd *cobra.Command) (cluster.TargetOptions, []check.Criterion, error) {
	var t cluster.TargetOptions
	conn, err := cf.conn.options(cmd)
	if err != nil {
		return t, nil, err
	}
	t.Conn = conn
	if len(conn.Endpoints) > 0 {
		if cmd.Flags().Changed("data-dir") {
			return t, nil, embeddedOnly("--data-dir", conn)
		}
	} else {
		if err := checkDir("--data-dir", cf.dataDir); err != nil {
			return t, nil, err
		}
		t.DataDir = cf.dataDir
	}
	if err := cf.members.options(cmd, conn, &t); err != nil {
		return t, nil, err
	}
	if cf.prefix != "" && !strings.HasSuffix(cf.prefix, "/") {
		cf.prefix += "/"
	}
	criteria, err := criteriaOf(cf.limits, &cf.volume)
	if err != nil {
		return t, nil, err
	}
	return t, criteria, nil
}

func newCheckCmd() *cobra.Command {
	var duration time.Duration
	cmd := &cobra.Command{
		Use:   "check",
		Short: "etcdctl check perf with latency percentiles and etcd's own disk metrics: PASS or FAIL per criterion",
		Long: `Run etcdctl check perf's load against etcd and judge it: each profile puts
256-byte keys with 1 KiB values from a number of clients at a fixed rate:

  s   50 clients,   150 puts/s      m   200 clients, 1000 puts/s
  l   500 clients, 8000 puts/s      xl 1000 clients, 15000 puts/s

etcdctl's criteria (throughput at least 90% of the rate, slowest request at
most 0.5s, standard deviation at most 0.1s, no failed request) come with the
request p99 and with etcd's own view of the same run, from its /metrics: WAL
fsync p99 under 10ms, backend commit p99 under 25ms, no leader change, no
failed proposal. Each prints as one line PASS|WARN|FAIL name: observed (limit);
--limit changes a limit. Exit 0 when all pass, 1 when one fails.

The load is open loop on an absolute schedule: request i is due at start +
i/rate, and latency runs from that time. etcdctl paces with a token bucket
of one token, which drops every token it is late for, so it often sends less
than the profile asks at l and xl (etcd issues #13455, #10609: FAIL at l,
PASS at xl). Here a throughput under the rate means that the clients were all
waiting for etcd, or that this machine could not send on time; the output
says which, and does not blame etcd for the second.

Without --endpoints (nor etcdctl's ETCDCTL_ENDPOINTS, read as etcdctl does
with the other ETCDCTL_ variables of these flags; a flag wins) it starts an
embedded etcd in a process of its own, with its data in a new folder inside
--data-dir (the storage under test), and removes it afterwards. Keys live under --prefix (default /etcdperf/<run id>/):
the run refuses a prefix that holds keys and deletes its keys at the end,
also on Ctrl-C.`,
		Example: `  # etcdctl check perf --load=s against an embedded etcd on the current directory
  etcdperf check

  # A running cluster, profile m, as JSON
  etcdperf check --endpoints=10.0.0.1:2379,10.0.0.2:2379 --load m -o json

  # How many puts/s does this cluster carry, and what breaks first?
  etcdperf check --endpoints=10.0.0.1:2379 --capacity

  # A quick look: 10 seconds, and a stricter WAL fsync limit
  etcdperf check --duration 10s --limit wal_fsync_p99=5ms

  # Rehearse a fault: 3 members, the third limited to 0.05 CPU
  etcdperf check --members 3 --fault 3:cpu-limit=0.05 --duration 20s

  # Memory growth for 10,000 keys of 1 KiB (etcdctl check datascale)
  etcdperf check datascale --load s

  # etcdctl's spelling works too
  etcdperf check perf --load m`,
	}
	// "check perf" is etcdctl's spelling of the same command.
	cmd.Args = func(c *cobra.Command, args []string) error {
		if len(args) == 1 && args[0] == "perf" {
			return nil
		}
		return noArgs(c, args)
	}
	cf := addCheckFlags(cmd)
	cmd.Flags().DurationVar(&duration, "duration", time.Minute, "how long to send (etcdctl: 60s)")
	var (
		capacityOn bool
		capStep    time.Duration
		capConfirm time.Duration
		sweep      sweepFlags
		soak       soakFlags
	)
	sweep.add(cmd.Flags(), false)
	cmd.Flags().BoolVar(&capacityOn, "capacity", false, "after the profile's load, raise the offered write rate step by step until a limit breaks: how many puts/s the cluster carries, and what breaks first (it loads the cluster up to 15,000 puts/s)")
	cmd.Flags().DurationVar(&capStep, "capacity-step", capacity.DefaultStep, "with --capacity, how long each step loads etcd")
	cmd.Flags().DurationVar(&capConfirm, "capacity-confirm", capacity.DefaultConfirm, "with --capacity, hold the answer this long after the knee, then rates above it while the holds hold and under it once one breaks, each judged as a soak is (0: no confirm step)")
	soak.add(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		sinks, err := cf.out.sinks()
		if err != nil {
			return err
		}
		prof, err := check.LookupProfile(cf.load)
		if err != nil {
			return usageError("%v", err)
		}
		if duration <= 0 {
			return usageError("--duration must be positive, got %s", duration)
		}
		target, criteria, err := cf.common(cmd)
		if err != nil {
			return err
		}
		if capConfirm < 0 {
			return usageError("--capacity-confirm cannot be negative, got %s", capConfirm)
		}
		if err := sweep.apply(&prof, len(target.Conn.Endpoints) > 0, capacityOn); err != nil {
			return err
		}
		if capStep <= 0 {
			return usageError("--capacity-step must be positive, got %s", capStep)
		}
		if capacityOn && cf.prefix != "" {
			return usageError("--capacity writes each step under a prefix of its own: drop --prefix")
		}
		soakOn, err := soak.settings(cmd, capacityOn)
		if err != nil {
			return err
		}
		if soakOn.Duration > 0 && cf.prefix != "" {
			return usageError("--soak writes under a prefix of its own: drop --prefix")
		}
		o := pipeline.CheckOptions{Target: target, Profile: prof, Duration: duration, Prefix: cf.prefix,
			AutoCompact: cf.autoCompact, AutoDefrag: cf.autoDefrag, Criteria: criteria, Capacity: capacityOn, CapacityStep: capStep, CapacityConfirm: capConfirm, DBSize: sweep.dbSize, Soak: soakOn}
		cf.conn.announceLoad(cmd, fmt.Sprintf("check perf's profile %s: %.0f puts/s of %d-byte values from %d clients for %s",
			prof.Name, prof.Rate, prof.ValSize, prof.Clients, duration))
		var stop func()
		var phase func(string)
		o.Progress, o.Started, phase, stop = loadProgress(cmd, len(target.Conn.Endpoints) == 0, duration)
		o.Soak.Phase = phase
		res, runErr := pipeline.Check(cmd.Context(), o)
		stop()
		return finish(cmd, sinks, res, runErr)
	}
	cmd.AddCommand(newCheckDatascaleCmd())
	return cmd
}

func newCheckDatascaleCmd() *cobra.Command {
	var keys int64
	cmd := &cobra.Command{
		Use:   "datascale",
		Short: "How much memory etcd needs per key (etcdctl check datascale)",
		Long: `Write a profile's keys as etcdctl check datascale does (512-byte keys and
512-byte values, as fast as the clients go) and report how much etcd's
resident memory grew to hold them, from process_resident_memory_bytes before
and after:

  s  10,000 keys, 50 clients       m  100,000 keys, 200 clients
  l  1,000,000 keys, 500 clients   xl 3,000,000 keys, 1000 clients

Any failed request fails the check (exit 1); the memory is reported. Without
--endpoints the embedded etcd runs in a process of its own, so that its
memory is etcd's alone. The keys are deleted at the end, also on Ctrl-C.`,
		Example: `  # 10,000 keys into an embedded etcd on the current directory
  etcdperf check datascale

  # 100,000 keys into a running cluster, compacted and defragmented afterwards
  etcdperf check datascale --endpoints=10.0.0.1:2379 --load m --auto-compact --auto-defrag`,
		Args: noArgs,
	}
	cf := addCheckFlags(cmd)
	cmd.Flags().Int64Var(&keys, "keys", 0, "write this many keys instead of the profile's")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		sinks, err := cf.out.sinks()
		if err != nil {
			return err
		}
		prof, err := check.LookupScaleProfile(cf.load)
		if err != nil {
			return usageError("%v", err)
		}
		if keys < 0 {
			return usageError("--keys cannot be negative")
		}
		target, criteria, err := cf.common(cmd)
		if err != nil {
			return err
		}
		o := pipeline.DatascaleOptions{Target: target, Profile: prof, Keys: keys, Prefix: cf.prefix,
			AutoCompact: cf.autoCompact, AutoDefrag: cf.autoDefrag, Criteria: criteria}
		n := prof.Keys
		if keys > 0 {
			n = keys
		}
		cf.conn.announceLoad(cmd, fmt.Sprintf("check datascale's profile %s: %d keys of %d+%d bytes from %d clients, as fast as they go",
			prof.Name, n, prof.KeySize, prof.ValSize, prof.Clients))
		var stop func()
		o.Progress, o.Started, _, stop = loadProgress(cmd, len(target.Conn.Endpoints) == 0, 0)
		res, runErr := pipeline.Datascale(cmd.Context(), o)
		stop()
		return finish(cmd, sinks, res, runErr)
	}
	return cmd
}

// loadProgress reports a load's progress on stderr (startProgress):
// "starting" until the load begins, then the requests (through a total or
// a duration). It returns the counter and the start hook to hand to the
// pipeline, and the function that erases the line.
func loadProgress(cmd *cobra.Command, embedded bool, duration time.Duration) (*load.Progress, func(), func(string), func()) {
	prog := &load.Progress{}
	var started atomic.Bool
	var phase atomic.Pointer[phaseSince]
	stop := startProgress(cmd, duration, func(el time.Duration) string {
		if p := phase.Load(); p != nil {
			return fmt.Sprintf("%s... %s", p.phase, time.Since(p.since).Truncate(time.Second))
		}
		if !started.Load() {
			if embedded {
				return "starting the embedded etcd..."
			}
			return "connecting to etcd..."
		}
		return countProgress(prog.Done(), prog.Total(), el, duration)
	})
	setPhase := func(s string) { phase.Store(&phaseSince{s, time.Now()}) }
	return prog, func() { started.Store(true) }, setPhase, stop
}

// phaseSince is what a run does after its load (a soak), and since when.
type phaseSince struct {
	phase string
	since time.Time
}
