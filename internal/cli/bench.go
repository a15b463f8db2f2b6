package cli

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/load"
	"github.com/etcdperf/etcdperf/internal/pipeline"
	"github.com/etcdperf/etcdperf/internal/render"
)

func newBenchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench WORKLOAD",
		Short: "Load etcd like etcd's benchmark tool, and read etcd's own metrics of the run",
		Long: `Load etcd with one of the workloads of etcd's benchmark tool, with its flag
names, and report the client's latency in the benchmark's layout together with
what etcd's /metrics said about the same run: WAL fsync and backend commit
latency, leader changes, failed proposals.

Without --endpoints (nor etcdctl's ETCDCTL_ENDPOINTS, read as etcdctl does
with the other ETCDCTL_ variables of these flags) it starts an embedded etcd
(127.0.0.1, free ports) whose data dir is a new folder inside --data-dir, the
storage under test, and removes it afterwards; --members 3 starts a real 3-member cluster, one process per
member. etcd's logs go to a file in that folder, never to the terminal.

All keys live under --prefix (default /etcdperf/<run id>/): the run refuses a
prefix that holds keys and deletes its keys at the end, also on Ctrl-C.

Latencies are kept in HDR (high dynamic range) histograms: every latency from
a nanosecond to an hour to 3 significant digits, in constant memory whatever
--total. With --rate the load is open loop: requests go out on a fixed
schedule, not each when the one before it returned, and latency runs from
each request's intended send time, so a stalled etcd cannot hide the requests
it held back; the service time from the actual send is reported beside it.`,
		Example: `  # The write benchmark of etcd's performance guide, against an embedded etcd
  # on the current directory
  etcdperf bench put --key-size=8 --sequential-keys --val-size=256 \
    --conns=100 --clients=100 --total=100000 --target-leader

  # The same against a running cluster with TLS and auth, as JSON
  ETCDPERF_PASSWORD=... etcdperf bench put --endpoints=10.0.0.1:2379,10.0.0.2:2379 \
    --cacert=ca.pem --cert=client.pem --key=client-key.pem --user=bench -o json

  # A 3-member embedded cluster on the disk under test, for 30s at 2000 puts/s
  etcdperf bench put --members 3 --data-dir /mnt/ssd --duration 30s --rate 2000

  # Serializable reads, per-second series to a CSV file
  etcdperf bench range --consistency s --total 50000 --clients 50 --sample-csv series.csv`,
	}
	cmd.Args = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usageError("bench needs a workload: %s (see 'etcdperf bench --help')", strings.Join(load.Workloads, ", "))
		}
		return usageError("unknown workload %q: use one of %s", args[0], strings.Join(load.Workloads, ", "))
	}
	cmd.RunE = func(*cobra.Command, []string) error { return nil }
	for _, w := range []struct{ name, short string }{
		{load.Put, "Puts of keys and values of given sizes (etcd benchmark's put)"},
		{load.Range, "Ranges over the run's keys or a given key (etcd benchmark's range)"},
		{load.TxnPut, "Transactions of several puts (etcd benchmark's txn-put)"},
		{load.TxnMixed, "Transactions mixing ranges and puts (etcd benchmark's txn-mixed)"},
		{load.WatchLatency, "Latency from a put to its watch events (etcd benchmark's watch-latency)"},
		{load.LeaseKeepalive, "Lease keep-alives (etcd benchmark's lease-keepalive)"},
	} {
		cmd.AddCommand(newWorkloadCmd(w.name, w.short))
	}
	return cmd
}

// benchFlags are the flags every workload has.
type benchFlags struct {
	conn        *connFlags
	out         *outputFlag
	conns       int
	total       int64
	sampleCSV   string
	thresholds  []string
	members     *memberFlags
	consistency string
	o           pipeline.BenchOptions
}

func newWorkloadCmd(name, short string) *cobra.Command {
	cmd := &cobra.Command{
		Use:     name,
		Short:   short,
		Args:    noArgs,
		Example: workloadExample(name),
	}
	if name == load.Range {
		cmd.Use = "range [key [range-end]]"
		cmd.Args = cobra.MaximumNArgs(2)
	}
	bf := &benchFlags{conn: addConnFlags(cmd), out: addOutputFlag(cmd), members: addMemberFlags(cmd)}
	lo := &bf.o.Load
	lo.Workload = name
	fl := cmd.Flags()
	fl.IntVar(&bf.conns, "conns", 1, "gRPC connections the clients share")
	fl.IntVar(&lo.Clients, "clients", 1, "concurrent clients (each waits for its request before sending the next)")
	if name == load.WatchLatency {
		fl.Int64Var(&bf.total, "put-total", 1000, "puts to make (0 with --duration)")
		fl.Float64Var(&lo.Rate, "put-rate", 100, "puts per second")
	} else {
		fl.Int64Var(&bf.total, "total", 10000, "requests to send (0 with --duration)")
		fl.Float64Var(&lo.Rate, "rate", 0, "intended requests per second over all clients, sent on that schedule whatever etcd's latency (0: as fast as possible)")
	}
	fl.DurationVar(&lo.Duration, "duration", 0, "send for this long (instead of --total, unless both are given: whichever ends first)")
	fl.BoolVar(&bf.o.TargetLeader, "target-leader", false, "send every request to the leader")
	fl.StringVar(&lo.Prefix, "prefix", "", "key prefix of the run (default /etcdperf/<run id>/); it must hold no key")
	fl.BoolVar(&bf.o.KeepKeys, "keep-keys", false, "leave the run's keys in etcd")
	fl.BoolVar(&bf.o.Compact, "compact", false, "compact etcd's history after deleting the run's keys")
	fl.StringVar(&bf.o.Target.DataDir, "data-dir", ".", "embedded etcd: directory on the storage under test that receives its data")
	fl.BoolVar(&bf.o.Target.KeepData, "keep-data", false, "embedded etcd: keep its data dir and logs")
	fl.StringVar(&bf.sampleCSV, "sample-csv", "", "write the per-second series (t, ops, p50, p99, max, errors) to this CSV file")
	fl.BoolVar(&lo.ClientOnly, "etcd-client", false, "send put, range and txn through etcd's gRPC client instead of etcdperf's own lighter sender of the same gRPC requests (more client CPU per request; to rule that sender out)")
	addWorkloadFlags(fl, name, bf)
	// --limit overrides a check's limit, as in every other command, except
	// where etcd's benchmark has its own --limit (keys per range): there a
	// number is that, NAME=VALUE a check's limit. --threshold is the old name.
	if fl.Lookup("limit") == nil {
		fl.Var(limitsValue{&bf.thresholds}, "limit", "override a limit: NAME=VALUE[,WARN], e.g. wal_fsync_p99=5ms (repeatable)")
	}
	fl.Var(limitsValue{&bf.thresholds}, "threshold", "the old name of --limit NAME=VALUE[,WARN]")
	fl.MarkHidden("threshold")

	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return runBench(cmd, args, bf)
	}
	return cmd
}

func addWorkloadFlags(fl *pflag.FlagSet, name string, bf *benchFlags) {
	lo := &bf.o.Load
	keys := func(keySize, valSize int) {
		fl.IntVar(&lo.KeySize, "key-size", keySize, "bytes of each key after the prefix (hexadecimal key numbers)")
		fl.IntVar(&lo.ValSize, "val-size", valSize, "bytes of each value")
	}
	space := func(def int) {
		fl.IntVar(&lo.KeySpaceSize, "key-space-size", def, "distinct keys written (1: the same key over and over, as etcd's benchmark)")
	}
	switch name {
	case load.Put:
		keys(8, 8)
		space(1)
		fl.BoolVar(&lo.SequentialKeys, "sequential-keys", false, "write keys 0, 1, 2... (modulo the key space) instead of random ones")
	case load.Range:
		keys(8, 8)
		fl.IntVar(&lo.Prefill, "key-space-size", 1000, "keys written under the prefix before ranging over it (not with a key argument)")
		fl.StringVar(&bf.consistency, "consistency", "l", "l (linearizable) or s (serializable) reads")
		lo.Limit = 0
		fl.Var(rangeLimitValue{&lo.Limit, &bf.thresholds}, "limit", "maximum keys per range, as etcd's benchmark (0: no limit); NAME=VALUE[,WARN] overrides a check's limit instead, e.g. wal_fsync_p99=5ms (repeatable)")
		fl.BoolVar(&lo.KeysOnly, "keys-only", false, "return keys without values")
		fl.BoolVar(&lo.CountOnly, "count-only", false, "return only the count of keys")
	case load.TxnPut:
		keys(8, 8)
		space(1)
		fl.IntVar(&lo.TxnOps, "txn-ops", 1, "puts per transaction (at most --key-space-size)")
	case load.TxnMixed:
		keys(8, 8)
		space(1)
		fl.StringVar(&bf.consistency, "consistency", "l", "l (linearizable) or s (serializable) reads")
		lo.Limit = 1000
		fl.Var(rangeLimitValue{&lo.Limit, &bf.thresholds}, "limit", "maximum keys per read, as etcd's benchmark; NAME=VALUE[,WARN] overrides a check's limit instead, e.g. wal_fsync_p99=5ms (repeatable)")
		fl.Float64Var(&lo.RWRatio, "rw-ratio", 1, "reads per write")
	case load.WatchLatency:
		keys(32, 32)
		fl.IntVar(&lo.Streams, "streams", 10, "watch streams")
		fl.IntVar(&lo.WatchersPerStream, "watchers-per-stream", 10, "watchers per stream, all on the same key")
		fl.BoolVar(&lo.PrevKV, "prevkv", false, "ask for the previous value in events")
	case load.LeaseKeepalive:
		fl.Int64Var(&lo.LeaseTTL, "lease-ttl", 60, "TTL of each client's lease, in seconds")
	}
}

func workloadExample(name string) string {
	switch name {
	case load.Put:
		return `  etcdperf bench put --key-size=8 --sequential-keys --val-size=256 --conns=100 --clients=100 --total=100000 --target-leader
  etcdperf bench put --endpoints=127.0.0.1:2379 --total 20000 --clients 50 --conns 10 -o json`
	case load.Range:
		return `  etcdperf bench range --total 20000 --clients 20 --consistency s
  etcdperf bench range /registry/pods --endpoints=127.0.0.1:2379 --keys-only --limit 500`
	case load.TxnPut:
		return `  etcdperf bench txn-put --txn-ops 4 --key-space-size 1000 --total 20000 --clients 20`
	case load.TxnMixed:
		return `  etcdperf bench txn-mixed --rw-ratio 4 --key-space-size 1000 --total 20000 --clients 20`
	case load.WatchLatency:
		return `  etcdperf bench watch-latency --streams 10 --watchers-per-stream 10 --put-total 1000 --put-rate 100`
	}
	return `  etcdperf bench lease-keepalive --total 20000 --clients 20`
}

func runBench(cmd *cobra.Command, args []string, bf *benchFlags) error {
	sinks, err := bf.out.sinks()
	if err != nil {
		return err
	}
	if bf.sampleCSV != "" {
		if err := checkWritable("--sample-csv", bf.sampleCSV); err != nil {
			return err
		}
		f, _ := render.LookupFormat("csv")
		sinks = append(sinks, sink{format: f, path: bf.sampleCSV})
	}
	fl := cmd.Flags()
	o := bf.o
	lo := &o.Load
	switch bf.consistency {
	case "l", "":
	case "s":
		lo.Serializable = true
	default:
		return usageError("--consistency must be l (linearizable) or s (serializable), got %q", bf.consistency)
	}
	if len(args) > 0 {
		lo.RangeKey = args[0]
		lo.Prefill = 0
		if len(args) > 1 {
			lo.RangeEnd = args[1]
		}
	}
	totalFlag := "total"
	if lo.Workload == load.WatchLatency {
		totalFlag = "put-total"
	}
	lo.Total = bf.total
	if fl.Changed("duration") && !fl.Changed(totalFlag) {
		lo.Total = 0
	}
	if lo.Duration < 0 {
		return usageError("--duration cannot be negative")
	}
	if bf.conns < 1 {
		return usageError("--conns must be at least 1, got %d", bf.conns)
	}
	o.Conns = bf.conns
	conn, err := bf.conn.options(cmd)
	if err != nil {
		return err
	}
	lo.CommandTimeout = conn.CommandTimeout
	o.Target.Conn = conn
	embedded := len(conn.Endpoints) == 0
	if !embedded {
		for _, f := range []string{"data-dir", "keep-data"} {
			if fl.Changed(f) {
				return embeddedOnly("--"+f, conn)
			}
		}
	}
	if err := bf.members.options(cmd, conn, &o.Target); err != nil {
		return err
	}
	if lo.Prefix != "" && !strings.HasSuffix(lo.Prefix, "/") {
		lo.Prefix += "/"
	}
	// Check the workload now, before etcd starts; the default prefix is
	// only known then.
	probe := *lo
	if probe.Prefix == "" {
		probe.Prefix = "/etcdperf/run/"
	}
	if err := probe.Validate(); err != nil {
		return usageError("%v", err)
	}
	o.Criteria, err = limits.Override(limits.Table, bf.thresholds)
	if err != nil {
		return usageError("%v", err)
	}

	bf.conn.announceLoad(cmd, benchLoadWords(lo))
	cluster.QuietGRPC()
	prog := &load.Progress{}
	lo.Progress = prog
	var started atomic.Bool
	o.Started = func() { started.Store(true) }
	stop := startProgress(cmd, lo.Duration, func(el time.Duration) string {
		if !started.Load() {
			if embedded {
				return "starting the embedded etcd..."
			}
			return "connecting to etcd..."
		}
		return countProgress(prog.Done(), prog.Total(), el, lo.Duration)
	})
	// Every failure of the run (etcd unreachable, a used prefix, an
	// interruption) exits with 2 through ExitCode.
	res, runErr := pipeline.Bench(cmd.Context(), o)
	stop()
	return finish(cmd, sinks, res, runErr)
}

// benchLoadWords says what load bench sends: the workload, how many
// requests or for how long, at what rate, from how many clients.
func benchLoadWords(lo *load.Options) string {
	s := lo.Describe()
	switch {
	case lo.Total > 0:
		s += fmt.Sprintf(", %d requests", lo.Total)
	case lo.Duration > 0:
		s += ", for " + lo.Duration.String()
	}
	if lo.Rate > 0 {
		s += fmt.Sprintf(" at %g/s", lo.Rate)
	} else {
		s += " as fast as they go"
	}
	return s + fmt.Sprintf(" from %d clients", lo.Clients)
}

// countProgress formats progress through a number of requests, or through
// a duration when the total is 0.
func countProgress(done, total int64, elapsed, limit time.Duration) string {
	var frac float64
	switch {
	case total > 0:
		frac = float64(done) / float64(total)
		if limit > 0 {
			frac = max(frac, elapsed.Seconds()/limit.Seconds())
		}
	case limit > 0:
		frac = elapsed.Seconds() / limit.Seconds()
	}
	frac = min(frac, 1)
	const width = 30
	n := int(frac * width)
	bar := strings.Repeat("#", n) + strings.Repeat(".", width-n)
	rate := 0.0
	if elapsed > 0 {
		rate = float64(done) / elapsed.Seconds()
	}
	return fmt.Sprintf("[%s] %3.0f%% %d requests in %s (%.0f/s)", bar, frac*100, done, elapsed.Truncate(time.Second), rate)
}
