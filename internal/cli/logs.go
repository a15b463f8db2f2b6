package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/etcdlog"
	"github.com/etcdperf/etcdperf/internal/limits"
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
		overrides []string
	)
	cmd := &cobra.Command{
		Use:     "logs FILE... | -",
		Short:   "Read etcd's logs: count the slow-disk, network and overload warnings, and say what they point to",
		Long:    logsLong,
		Example: logsExample,
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

	fl.StringArrayVar(&overrides, "limit", nil, "override a level of the findings: NAME=VALUE, e.g. leader_changes_15m=2 or large_range_keys=500 (repeatable; docs/limits.md lists them)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usageError("give the log files, directories or - for standard input (see '%s --help')", cmd.CommandPath())
		}
		criteria, err := limits.Override(limits.Table, overrides)
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
