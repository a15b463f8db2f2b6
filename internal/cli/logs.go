package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/etcdlog"
	"github.com/etcdperf/etcdperf/internal/pipeline"
	"github.com/etcdperf/etcdperf/internal/promexport"
)

// Events listed in the Result by default, and when a CSV of events is
// written.
const (
	defaultMaxEvents    = 1000
	defaultMaxEventsCSV = 200000
)

func newLogsCmd() *cobra.Command {
	var (
		o         = pipeline.LogsOptions{}
		bucket    time.Duration
		top       int
		maxEvents int
		tz        string
		year      int
		since     string
		until     string
		limits    []string
	)
	cmd := &cobra.Command{
		Use:   "logs FILE... | -",
		Short: "Read etcd's logs: count the slow-disk, network and overload warnings, and say what they point to",
		Long: `Read etcd's logs (3.1 to 3.7: capnslog text, zap JSON or zap console), count
the warnings etcd writes when its disk, network or CPU is too slow - "apply
request took too long", "failed to send out heartbeat on time", "slow
fdatasync", "request timed out", leader elections, peer failures, "database
space exceeded" - per member and per time bucket, with the durations they
report, the slowest requests and their key prefixes, and say whether the
pattern points to the disk, the network, or CPU and large requests.

FILE may be a log file (gzipped or not), a pattern (quote it), a directory
(must-gather, sosreport, /var/log/pods: files whose path names etcd and that
hold etcd log lines are read) or - for standard input. Lines may carry the
prefixes of kubectl logs --timestamps or --prefix, the container runtime's
log files, docker's json-file driver, journalctl -o short, short-iso or json,
docker compose or goreman, or the times of exported and pasted logs (an
RFC 3339 time, with or without a zone such as "UTC" after it, then etcd's
line or only its message; seconds since 1970, or since a test began before
etcd's line; Jenkins' time of day; go test's "logger.go:146: "). Other lines
are counted as not etcd lines.

The verdict is FAIL (exit 1) when the logs show etcd failing: request
timeouts, the space quota exhausted, WAL fdatasyncs over 1s, or 4 leader
changes within 15 minutes; WARN for slow requests, late heartbeats, peer
failures or clock drift; PASS when none of these warnings occur.`,
		Example: `  # The logs of a kubeadm etcd pod
  kubectl logs etcd-node1 -n kube-system --timestamps | etcdperf logs -

  # Rotated, gzipped logs, per minute, with every event in a CSV
  etcdperf logs /var/log/etcd/*.log.gz --bucket 1m -o events.csv

  # An OpenShift must-gather: every etcd member found in it
  etcdperf logs must-gather.local.12345/

  # etcd under systemd, and the Result as JSON
  journalctl -u etcd -o short-iso --since -2h | etcdperf logs - -o json`,
	}
	out := addOutputFlag(cmd)
	fl := cmd.Flags()
	fl.DurationVar(&bucket, "bucket", time.Hour, "width of the timeline's buckets (it doubles when the logs span more than 10000 buckets)")
	fl.IntVar(&top, "top", 10, "how many slow requests and key prefixes to list")
	maxEvents = -1 // not given: it depends on the output
	fl.Var(autoInt{&maxEvents}, "max-events", fmt.Sprintf("how many events the Result lists one by one (default %d, or %d with a CSV output); the others are only counted", defaultMaxEvents, defaultMaxEventsCSV))
	fl.StringVar(&tz, "timezone", "UTC", `zone of timestamps that do not name one (capnslog, syslog): an IANA name such as "Europe/Berlin", or "Local"`)
	fl.IntVar(&year, "year", 0, "year of syslog timestamps (journalctl -o short does not print it; default: this year)")
	fl.StringVar(&since, "since", "", "read only the lines from this time on: RFC3339 (2026-11-23T21:30:00Z), or a time before now (-2h)")
	fl.StringVar(&until, "until", "", "read only the lines before this time (as --since)")

	fl.StringArrayVar(&limits, "limit", nil, "override a level of the findings: NAME=VALUE, e.g. leader_changes_15m=2 or large_range_keys=500 (repeatable; docs/limits.md lists them)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usageError("give the log files, directories or - for standard input (see '%s --help')", cmd.CommandPath())
		}
		criteria, err := check.Override(check.Table, limits)
		if err != nil {
			return usageError("%v", err)
		}
		o.Criteria = criteria
		sinks, err := out.sinks()
		if err != nil {
			return err
		}
		if bucket < time.Second {
			return usageError("--bucket %s is too small: use 1s or more", bucket)
		}
		if top < 1 || top > 1000 {
			return usageError("--top must be between 1 and 1000, got %d", top)
		}
		csvOut := false
		for _, s := range sinks {
			csvOut = csvOut || s.format.Name == "csv"
		}
		if maxEvents < 0 {
			maxEvents = defaultMaxEvents
			if csvOut {
				maxEvents = defaultMaxEventsCSV
			}
		}
		loc, err := time.LoadLocation(tz)
		if err != nil {
			return usageError("--timezone %q: %v", tz, err)
		}
		now := time.Now()
		window := etcdlog.SummaryOptions{Bucket: bucket, Top: top, MaxEvents: maxEvents}
		for _, f := range []struct {
			name, val string
			t         *time.Time
		}{{"since", since, &window.Since}, {"until", until, &window.Until}} {
			if f.val == "" {
				continue
			}
			if *f.t, err = promexport.ParseTime(f.val, now); err != nil {
				return usageError("--%s: %v", f.name, err)
			}
		}
		if !window.Since.IsZero() && !window.Until.IsZero() && !window.Until.After(window.Since) {
			return usageError("--until %s is not after --since %s", until, since)
		}
		o.Paths = args
		o.Stdin = cmd.InOrStdin()
		o.Scan = etcdlog.ScanOptions{
			Parser:  etcdlog.ParserOptions{Location: loc, Year: year},
			Summary: window,
		}
		res, runErr := pipeline.Logs(cmd.Context(), o)
		var ie *etcdlog.InputError
		var ne *pipeline.NoEtcdLinesError
		if errors.As(runErr, &ie) || errors.As(runErr, &ne) {
			return &exitError{code: ExitError, err: runErr}
		}
		if res != nil && res.Logs != nil && csvOut && res.Logs.EventsOmitted > 0 {
			fmt.Fprintf(cmd.ErrOrStderr(), "etcdperf: the CSV lists the first %d events; %d more are only counted (raise --max-events)\n",
				len(res.Logs.Events), res.Logs.EventsOmitted)
		}
		return finish(cmd, sinks, res, runErr)
	}
	return cmd
}
