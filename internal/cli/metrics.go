package cli

import (
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/pipeline"
	"github.com/etcdperf/etcdperf/internal/render"
	"github.com/etcdperf/etcdperf/internal/result"
)

// minInterval keeps the scrapes from loading the members.
const minInterval = 100 * time.Millisecond

func newMetricsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "metrics --endpoints HOST:PORT,...",
		Short: "Watch a running cluster's /metrics: each member's health signals per interval, judged against etcd's limits",
		Long: `Scrape the /metrics of every member of a running cluster at each --interval
and show, per member and interval, etcd's health signals: WAL fsync and backend
commit p99 (from the deltas of etcd's histograms), proposals pending and
failed, leader changes, whether it has a leader and is the leader, the
database size (total and in use), its RSS, the p99 round trip to its peers,
slow applies, slow read indexes and heartbeats the leader failed to send.

The members are found from --endpoints (one answering is enough; a member that
is down is what one watches for). /metrics is fetched with the same TLS as the
gRPC connection (--cacert, --cert, --key), and needs no user. A member that
does not answer a scrape is reported for that interval, and the run goes on.

Beside the first intervals it reads the cluster's own state, as etcdctl
endpoint status, alarm list and endpoint hashkv do: each member's ID, cluster
ID, version, the leader it sees, its raft term, committed and applied index
and revision (three status rounds a second apart), the alarms raised, five
serializable and five linearizable reads of the key "health" per member, and
every member's HashKV at one revision they all have. It names an endpoint of
another cluster, members that disagree on the leader, a member behind the
leader or behind in its applies, a member whose key-value store differs from
the others', linearizable reads that wait at the leader, mixed or known-bad
etcd versions and a raised alarm. It only reads (at most 20 requests per
member, each bounded by --command-timeout).

The p99s come from etcd's histograms, whose lowest bucket is 1ms: below it
etcd cannot tell, and the value reads "<= 1ms". Each interval, and the whole
run per member, is judged against the limits of 'etcdperf prom check'
(wal_fsync_p99 < 10ms, backend_commit_p99 < 25ms, no leader change, no failed
proposal; --limit changes them); a member without a leader, or one that
stopped answering, fails the verdict (exit 1).

In text mode each interval's lines are printed as it ends; -o json and -o csv
(one row per member and interval) are written at the end. Ctrl-C ends the run
early and still writes the Result of what was collected (exit 2 when a
--duration was cut short; with --duration 0, Ctrl-C is how the run ends).

After the verdict it says which of etcd's timers the round trips between
members call for (etcd tuning guide): --heartbeat-interval about the slowest
pair's mean round trip, --election-timeout 10x it. Nothing is changed on the
cluster. State the values in force with --current-flag to have them kept or
changed; a member whose CPU or disk was named is left out, as raising the
timers would only hide it.

There is no embedded etcd here: an etcd started for the run would have nothing
to say. 'etcdperf bench' reports etcd's metrics of its own load.`,
		Example: `  # Watch a cluster for a minute, every 5s
  etcdperf metrics --endpoints 10.0.0.1:2379,10.0.0.2:2379,10.0.0.3:2379

  # With TLS (as etcdctl), every second until Ctrl-C, the series to a CSV file too
  etcdperf metrics --endpoints https://10.0.0.1:2379 --cacert ca.pem --cert client.pem --key client-key.pem \
    --interval 1s --duration 0 -o metrics.csv -o text

  # Members far apart: the timers for their round trips, against the values in force
  etcdperf metrics --endpoints 10.0.0.1:2379 --current-flag heartbeat-interval=100 --current-flag election-timeout=1000

  # A stricter fsync limit, the Result as JSON and the HTML report
  etcdperf metrics --endpoints 127.0.0.1:2379 --limit wal_fsync_p99=5ms -o run.json --html run.html`,
		Args: noArgs,
	}
	conn := addConnFlags(cmd)
	fl := cmd.Flags()
	fl.Lookup("endpoints").Usage = "client endpoints of the cluster to watch (host:port or http(s)://host:port, comma-separated; required, default " + endpointsEnv + "): its members are found from them"
	out := addOutputFlag(cmd)
	var (
		interval, duration time.Duration
		limits             []string
		volume             volumeFlags
	)
	fl.DurationVar(&interval, "interval", 5*time.Second, "time between two scrapes of every member (at least 100ms)")
	fl.DurationVar(&duration, "duration", time.Minute, "watch for this long; 0 watches until Ctrl-C")
	fl.StringArrayVar(&limits, "limit", nil, "override a limit: NAME=VALUE[,WARN], e.g. wal_fsync_p99=5ms (repeatable)")
	volume.add(fl)
	current := addCurrentFlag(fl)

	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		sinks, err := out.sinks()
		if err != nil {
			return err
		}
		if interval < minInterval {
			return usageError("--interval %s is too short: at least %s (every scrape makes each member write all its metrics)", interval, minInterval)
		}
		if duration < 0 {
			return usageError("--duration cannot be negative (0 watches until Ctrl-C)")
		}
		if duration > 0 && duration < interval {
			return usageError("--duration %s is shorter than --interval %s: no interval would end", duration, interval)
		}
		criteria, err := criteriaOf(limits, &volume)
		if err != nil {
			return err
		}
		known, err := current.values()
		if err != nil {
			return err
		}
		co, err := conn.options(cmd)
		if err != nil {
			return err
		}
		if len(co.Endpoints) == 0 {
			return usageError("metrics watches a running cluster: give its client endpoints with --endpoints (or " + endpointsEnv + "), e.g. --endpoints 10.0.0.1:2379 " +
				"(an etcd started by etcdperf would have nothing to tell; 'etcdperf bench' reports etcd's metrics of its own load)")
		}
		o := pipeline.MetricsOptions{Conn: co, Interval: interval, Duration: duration, Criteria: criteria, Known: known}
		conn.announce(cmd)
		var done atomic.Int64
		o.Sampled = func(*result.Result) { done.Add(1) }
		stop := func() {}
		if sinks[0].format.Name == "text" {
			// The lines on stdout are the progress.
			sinks[0].format = streamText(cmd.OutOrStdout(), &o)
		} else {
			stop = startProgress(cmd, duration, func(el time.Duration) string {
				return metricsProgress(done.Load(), interval, duration, el)
			})
		}
		res, runErr := pipeline.Metrics(cmd.Context(), o)
		stop()
		return finish(cmd, sinks, res, runErr)
	}
	return cmd
}

// streamText prints the head once the members are known and each
// interval's lines as it ends; it returns the text format of what is left
// at the end (the members over the run and the judgement).
func streamText(w io.Writer, o *pipeline.MetricsOptions) render.Format {
	sampled := o.Sampled
	o.Started = func(r *result.Result) { render.MetricsHead(w, r) }
	o.Sampled = func(r *result.Result) {
		sampled(r)
		render.MetricsRows(w, r)
	}
	return render.Format{Name: "text", Render: func(w io.Writer, r *result.Result) error {
		render.MetricsTail(w, r)
		render.Judgement(w, r)
		return nil
	}}
}

func metricsProgress(done int64, interval, duration, elapsed time.Duration) string {
	if duration == 0 {
		return fmt.Sprintf("%d intervals of %s in %s (Ctrl-C ends the run)", done, interval, elapsed.Truncate(time.Second))
	}
	total := int64((duration + interval - 1) / interval)
	return fmt.Sprintf("%d of %d intervals of %s in %s", done, total, interval, elapsed.Truncate(time.Second))
}
