package cli

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/load"
	"github.com/etcdperf/etcdperf/internal/pipeline"
	"github.com/etcdperf/etcdperf/internal/profile"
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
func (cf *checkFlags) common(cmd *cobra.Command) (lab.TargetOptions, []limits.Criterion, error) {
	var t lab.TargetOptions
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
	cmd := &cobra.Command{
		Use:     "check",
		Short:   "etcdctl check perf with latency percentiles and etcd's own disk metrics: PASS or FAIL per criterion",
		Long:    checkLong,
		Example: checkExample,
		// "check perf" is etcdctl's spelling of the same command.
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 1 && args[0] == "perf" {
				return nil
			}
			return noArgs(c, args)
		},
	}
	f := &checkPerfFlags{checkFlags: addCheckFlags(cmd), duration: time.Minute, capacity: newCapacityFlags(false)}
	cmd.Flags().DurationVar(&f.duration, "duration", f.duration, "how long to send (etcdctl: 60s)")
	f.capacity.add(cmd.Flags(), false)
	cmd.RunE = completeRun(f.out, f.complete, f.run)
	cmd.AddCommand(newCheckDatascaleCmd())
	return cmd
}

// run runs check perf's load (and the sweep and the soak asked for) with
// a progress line.
func (f *checkPerfFlags) run(cmd *cobra.Command, sinks []sink, o pipeline.CheckOptions) error {
	f.conn.announceLoad(cmd, fmt.Sprintf("check perf's profile %s: %.0f puts/s of %d-byte values from %d clients for %s",
		o.Profile.Name, o.Profile.Rate, o.Profile.ValSize, o.Profile.Clients, o.Duration))
	var stop func()
	o.Progress, o.Started, o.Soak.Phase, stop = loadProgress(cmd, len(o.Target.Conn.Endpoints) == 0, o.Duration)
	res, runErr := pipeline.Check(cmd.Context(), o)
	stop()
	return finish(cmd, sinks, res, runErr)
}

// checkPerfFlags are check perf's flags.
type checkPerfFlags struct {
	*checkFlags
	duration time.Duration
	capacity capacityFlags
}

// validate checks check perf's own flags by their values alone; given
// says which were given by name.
func (f *checkPerfFlags) validate(given func(string) bool) error {
	if _, err := profile.Lookup(f.load); err != nil {
		return usageError("%v", err)
	}
	if f.duration <= 0 {
		return usageError("--duration must be positive, got %s", f.duration)
	}
	if err := f.capacity.validate(); err != nil {
		return err
	}
	switch {
	case f.capacity.on && f.prefix != "":
		return usageError("--capacity writes each step under a prefix of its own: drop --prefix")
	case f.capacity.soak.duration > 0 && f.prefix != "":
		return usageError("--soak writes under a prefix of its own: drop --prefix")
	}
	return nil
}

// complete validates the flags and turns them into the run's options.
func (f *checkPerfFlags) complete(cmd *cobra.Command) (pipeline.CheckOptions, error) {
	given := cmd.Flags().Changed
	if err := f.validate(given); err != nil {
		return pipeline.CheckOptions{}, err
	}
	target, criteria, err := f.common(cmd)
	if err != nil {
		return pipeline.CheckOptions{}, err
	}
	prof, _ := profile.Lookup(f.load)
	if err := f.capacity.sizes.apply(&prof, len(target.Conn.Endpoints) > 0, f.capacity.on); err != nil {
		return pipeline.CheckOptions{}, err
	}
	soak, err := f.capacity.soak.settings(given, f.capacity.on)
	if err != nil {
		return pipeline.CheckOptions{}, err
	}
	return pipeline.CheckOptions{Target: target, Profile: prof, Duration: f.duration, Prefix: f.prefix,
		AutoCompact: f.autoCompact, AutoDefrag: f.autoDefrag, Criteria: criteria, Capacity: f.capacity.on, CapacityStep: f.capacity.step,
		CapacityConfirm: f.capacity.confirm, DBSize: f.capacity.sizes.dbSize, Soak: soak}, nil
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
		prof, err := profile.LookupScale(cf.load)
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
