package cli

import (
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/etcdperf/etcdperf/internal/pipeline"
	"github.com/etcdperf/etcdperf/internal/promexport"
)

func newPromCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "prom",
		Short: "Read etcd's history from Prometheus: export it as CSV, or judge it",
		Long: `Read etcd's metrics from the Prometheus server that already scrapes the cluster,
with range queries of its HTTP API: export them as one aligned table (CSV or
JSON), or judge the history against etcd's limits with a verdict.`,
		Example: `  # The etcd preset over the last hour, as CSV
  etcdperf prom export --url http://prometheus:9090 --since 1h -o etcd.csv

  # Was etcd healthy over the last day?
  etcdperf prom check --url http://prometheus:9090 --since 24h`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newPromExportCmd(), newPromCheckCmd())
	return cmd
}

// promFlags are the flags both prom subcommands share: the server, the
// credentials, the time range and the selector.
type promFlags struct {
	url, user, tokenFile, caCert string
	insecure                     bool
	timeout                      time.Duration
	tr                           promexport.TimeRange
	selector, window             string
	matrix                       []string
}

func addPromFlags(fl *pflag.FlagSet, defaultSince string) *promFlags {
	f := &promFlags{}
	fl.StringVar(&f.url, "url", "", "base URL of the Prometheus server, e.g. http://prometheus:9090 (required)")
	fl.StringVar(&f.user, "user", "", "basic-auth user; the password is read from $"+promexport.PasswordEnv)
	fl.StringVar(&f.tokenFile, "bearer-token-file", "", "file holding a bearer token to send (e.g. a Kubernetes service account token)")
	fl.StringVar(&f.caCert, "cacert", "", "PEM file of the CA that signed the server's certificate (https)")
	fl.BoolVar(&f.insecure, "insecure-skip-tls-verify", false, "do not check the server's certificate (https)")
	fl.DurationVar(&f.timeout, "timeout", 30*time.Second, "give up on a query after this long")
	fl.StringVar(&f.tr.Start, "start", "", "start: RFC3339 (2024-05-01T10:00:00Z), a date, unix seconds, or relative (-2h)")
	fl.StringVar(&f.tr.End, "end", "now", "end: as --start, or now")
	fl.StringVar(&f.tr.Since, "since", "", "the period before --end, e.g. 30m, 1h, 24h, 7d (default "+defaultSince+" when --start is not given)")
	fl.StringVar(&f.selector, "selector", "", `label matchers added to every preset and check query, e.g. 'job="etcd"' to pick one cluster`)
	fl.StringVar(&f.window, "window", "", "range of rate(), increase() and histogram_quantile() at each point, at least 2 scrape intervals (default 5m, or --step when longer)")
	fl.StringArrayVar(&f.matrix, "matrix", nil, "add plot data to the JSON Result: --matrix (each query against time) or --matrix=NAME (each query against query NAME); repeatable")
	fl.Lookup("matrix").NoOptDefVal = promexport.PlotTime
	return f
}

// resolve validates the shared flags into connection options, a time
// range, a selector and a window (0 when not given).
func (f *promFlags) resolve() (promexport.Options, promexport.Resolved, string, time.Duration, error) {
	o := promexport.Options{URL: f.url, User: f.user, CACert: f.caCert, InsecureSkipVerify: f.insecure, Timeout: f.timeout}
	var r promexport.Resolved
	if f.url == "" {
		return o, r, "", 0, usageError("--url is required: the base URL of the Prometheus server that scrapes etcd, e.g. --url http://prometheus:9090")
	}
	if _, err := promexport.CheckURL(f.url); err != nil {
		return o, r, "", 0, usageError("%v", err)
	}
	if f.timeout <= 0 {
		return o, r, "", 0, usageError("--timeout must be positive")
	}
	if f.user != "" {
		o.Password = os.Getenv(promexport.PasswordEnv)
		if o.Password == "" {
			return o, r, "", 0, usageError("--user %s: set the password in $%s (it is never taken from the command line)", f.user, promexport.PasswordEnv)
		}
	}
	if f.tokenFile != "" {
		if f.user != "" {
			return o, r, "", 0, usageError("give --user or --bearer-token-file, not both")
		}
		tok, err := promexport.ReadToken(f.tokenFile)
		if err != nil {
			return o, r, "", 0, usageError("%v", err)
		}
		o.BearerToken = tok
	}
	r, err := f.tr.Resolve(time.Now())
	if err != nil {
		return o, r, "", 0, usageError("%v", err)
	}
	sel, err := promexport.ParseSelector(f.selector)
	if err != nil {
		return o, r, "", 0, usageError("%v", err)
	}
	var win time.Duration
	if f.window != "" {
		if win, err = promexport.ParseDuration(f.window); err != nil {
			return o, r, "", 0, usageError("--window: %v", err)
		}
	}
	return o, r, sel, win, nil
}

func newPromExportCmd() *cobra.Command {
	var (
		queries []string
		preset  string
	)
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Export etcd's metrics from Prometheus as one aligned table (CSV, JSON)",
		Long: `Run PromQL range queries against a Prometheus server and align their series
into one table: one row per timestamp, one column per series, named
QUERY{label=value,...}. A series without a sample at a timestamp leaves that
cell empty, so columns stay aligned through gaps (a member that was down, a
metric that appeared later). This is the curl + jq + paste of a hand-made
export (OpenStack performance-docs' etcd health test plan) in one command.

Without --query the etcd preset runs; with --query only your queries run,
unless --preset etcd is given too. The preset's queries, per member
(instance), with rates and quantiles over --window:

` + promexport.PresetHelp(promexport.PresetEtcd) + `
Credentials: --user takes the password from $` + promexport.PasswordEnv + ` (never from the
command line); --bearer-token-file sends a token. Neither is written to the
output.

-o csv writes the table (first columns time, RFC3339 UTC, and unix seconds;
NaN is a quantile over a window without observations); -o json writes the
Result with the table in "prom" (and plot data with --matrix).`,
		Example: `  # The etcd preset over the last hour, every 15s, as CSV
  etcdperf prom export --url http://prometheus:9090 --since 1h -o etcd.csv

  # A fixed period, one cluster of several
  etcdperf prom export --url http://prometheus:9090 --start 2024-05-01T10:00:00Z \
      --end 2024-05-01T12:00:00Z --step 30s --selector 'job="etcd-main"' -o csv

  # Your own queries beside the preset, and plot data of every metric
  # against the pod count (as etcd health tests plot them)
  etcdperf prom export --url http://prometheus:9090 --since 6h --preset etcd \
      --query pods='count(kube_pod_info)' --matrix=pods -o run.json

  # Behind basic auth
  ETCDPERF_PROM_PASSWORD=... etcdperf prom export --url https://prom.example --user me -o csv`,
		Args: noArgs,
	}
	out := addOutputFlag(cmd)
	fl := cmd.Flags()
	pf := addPromFlags(fl, "1h")
	fl.StringVar(&pf.tr.Step, "step", "15s", "time between two rows")
	fl.StringArrayVar(&queries, "query", nil, "a query: NAME=PROMQL, e.g. puts='sum by (instance) (rate(etcd_mvcc_put_total[5m]))' (repeatable)")
	fl.StringVar(&preset, "preset", "", "a set of queries: etcd (the default when no --query is given)")

	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		sinks, err := out.sinks()
		if err != nil {
			return err
		}
		pf.tr.DefaultSince = time.Hour
		conn, rng, sel, win, err := pf.resolve()
		if err != nil {
			return err
		}
		o := pipeline.PromExportOptions{Conn: conn, Range: rng, Selector: sel, Window: win, Preset: preset, Matrix: pf.matrix}
		if preset == "" && len(queries) == 0 {
			o.Preset = promexport.PresetEtcd
		}
		for _, s := range queries {
			q, err := promexport.ParseQuery(s)
			if err != nil {
				return usageError("%v", err)
			}
			o.Queries = append(o.Queries, q)
		}
		if _, err := o.ExportQueries(); err != nil {
			return usageError("%v", err)
		}
		res, err := pipeline.PromExport(cmd.Context(), o)
		return finish(cmd, sinks, res, err)
	}
	return cmd
}

func newPromCheckCmd() *cobra.Command {
	var (
		limits []string
		volume volumeFlags
		step   string
	)
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Judge etcd's history in Prometheus against etcd's limits, with the windows of every breach",
		Long: `Judge etcd's history in Prometheus against the limits etcd's documentation
gives, per member (instance):

  wal_fsync_p99       histogram_quantile(0.99, ...etcd_disk_wal_fsync_duration_seconds_bucket...) < 10ms
  backend_commit_p99  histogram_quantile(0.99, ...etcd_disk_backend_commit_duration_seconds_bucket...) < 25ms
  leader_changes      increase(etcd_server_leader_changes_seen_total) = 0
  proposals_failed    increase(etcd_server_proposals_failed_total) = 0

Each is judged twice. Over the whole period (the quantile of all observations
of the period, the total increase): the checks, worst member. And at every
--step, over the --window before it: consecutive points past the limit (or
the warning level) form windows, reported per member with how often and how
bad, so that "when" is answered too. A member without a leader, applies
slower than 100ms and late heartbeats are reported as findings.

The verdict fails (exit 1) when a check fails or a member lost its leader;
it warns (exit 0) when limits were passed only in some windows.

After the verdict it says which of etcd's timers the round trips between
members over the period call for (etcd tuning guide): --heartbeat-interval
about the slowest pair's mean round trip, --election-timeout 10x it, against
the values in force stated with --current-flag. Nothing is changed.`,
		Example: `  # The last 24 hours
  etcdperf prom check --url http://prometheus:9090 --since 24h

  # One cluster among several, a stricter fsync limit, the Result as JSON
  etcdperf prom check --url http://prometheus:9090 --since 7d --selector 'job="etcd"' \
      --limit wal_fsync_p99=5ms -o history.json

  # A week of round trips between far-apart members, against the timers in force
  etcdperf prom check --url http://prometheus:9090 --since 7d \
      --current-flag heartbeat-interval=100 --current-flag election-timeout=1000

  # The breach windows of an incident, at a fine step
  etcdperf prom check --url http://prometheus:9090 --start 2024-05-01T10:00:00Z \
      --end 2024-05-01T11:00:00Z --step 15s --window 1m`,
		Args: noArgs,
	}
	out := addOutputFlag(cmd)
	fl := cmd.Flags()
	pf := addPromFlags(fl, "24h")
	fl.StringVar(&step, "step", "", "time between two evaluation points (default: the period / 1000, at least 1s)")
	fl.StringArrayVar(&limits, "limit", nil, "override a limit: NAME=VALUE[,WARN], e.g. wal_fsync_p99=5ms (repeatable)")
	volume.add(fl)
	current := addCurrentFlag(fl)

	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		sinks, err := out.sinks()
		if err != nil {
			return err
		}
		known, err := current.values()
		if err != nil {
			return err
		}
		pf.tr.DefaultSince = 24 * time.Hour
		pf.tr.DefaultPoints = 1000
		pf.tr.Step = step
		conn, rng, sel, win, err := pf.resolve()
		if err != nil {
			return err
		}
		criteria, err := criteriaOf(limits, &volume)
		if err != nil {
			return err
		}
		res, err := pipeline.PromCheck(cmd.Context(), pipeline.PromCheckOptions{
			Conn: conn, Range: rng, Window: win, Selector: sel, Criteria: criteria, Matrix: pf.matrix, Known: known,
		})
		return finish(cmd, sinks, res, err)
	}
	return cmd
}
