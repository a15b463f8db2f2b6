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
		Use:     "metrics --endpoints HOST:PORT,...",
		Short:   "Watch a running cluster's /metrics: each member's health signals per interval, judged against etcd's limits",
		Long:    metricsLong,
		Example: metricsExample,
		Args:    noArgs,
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
		if err := validateWatch(interval, duration); err != nil {
			return err
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

// validateWatch checks metrics' --interval and --duration by their values.
func validateWatch(interval, duration time.Duration) error {
	switch {
	case interval < minInterval:
		return usageError("--interval %s is too short: at least %s (every scrape makes each member write all its metrics)", interval, minInterval)
	case duration < 0:
		return usageError("--duration cannot be negative (0 watches until Ctrl-C)")
	case duration > 0 && duration < interval:
		return usageError("--duration %s is shorter than --interval %s: no interval would end", duration, interval)
	}
	return nil
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
