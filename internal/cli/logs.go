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
	cmd := &cobra.Command{
		Use:     "logs FILE... | -",
		Short:   "Read etcd's logs: count the slow-disk, network and overload warnings, and say what they point to",
		Long:    logsLong,
		Example: logsExample,
	}
	f := addLogsFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		sinks, err := f.out.sinks()
		if err != nil {
			return err
		}
		csvOut := false
		for _, s := range sinks {
			csvOut = csvOut || s.format.Name == "csv"
		}
		o, err := f.options(args, csvOut, time.Now())
		if err != nil {
			return err
		}
		o.Stdin = cmd.InOrStdin()
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

// logsFlags are logs' flags as given.
type logsFlags struct {
	out          *outputFlag
	bucket       time.Duration
	top          int
	maxEvents    int
	tz           string
	year         int
	since, until string
	overrides    []string
}

func addLogsFlags(cmd *cobra.Command) *logsFlags {
	f := &logsFlags{out: addOutputFlag(cmd), maxEvents: -1} // -1: not given, it depends on the output
	fl := cmd.Flags()
	fl.DurationVar(&f.bucket, "bucket", time.Hour, "width of the timeline's buckets (it doubles when the logs span more than 10000 buckets)")
	fl.IntVar(&f.top, "top", 10, "how many slow requests and key prefixes to list")
	fl.Var(autoInt{&f.maxEvents}, "max-events", fmt.Sprintf("how many events the Result lists one by one (default %d, or %d with a CSV output); the others are only counted", defaultMaxEvents, defaultMaxEventsCSV))
	fl.StringVar(&f.tz, "timezone", "UTC", `zone of timestamps that do not name one (capnslog, syslog): an IANA name such as "Europe/Berlin", or "Local"`)
	fl.IntVar(&f.year, "year", 0, "year of syslog timestamps (journalctl -o short does not print it; default: this year)")
	fl.StringVar(&f.since, "since", "", "read only the lines from this time on: RFC3339 (2026-11-23T21:30:00Z), or a time before now (-2h)")
	fl.StringVar(&f.until, "until", "", "read only the lines before this time (as --since)")
	fl.StringArrayVar(&f.overrides, "limit", nil, "override a level of the findings: NAME=VALUE, e.g. leader_changes_15m=2 or large_range_keys=500 (repeatable; docs/limits.md lists them)")
	return f
}

// options checks the flags and the paths by their values alone (csvOut:
// a CSV is written; now: the time --since and --until count back from)
// and returns the run's options, or a usage error of one line.
func (f *logsFlags) options(paths []string, csvOut bool, now time.Time) (pipeline.LogsOptions, error) {
	var o pipeline.LogsOptions
	if len(paths) == 0 {
		return o, usageError("give the log files, directories or - for standard input (see 'etcdperf logs --help')")
	}
	criteria, err := limits.Override(limits.Table, f.overrides)
	if err != nil {
		return o, usageError("%v", err)
	}
	switch {
	case f.bucket < time.Second:
		return o, usageError("--bucket %s is too small: use 1s or more", f.bucket)
	case f.top < 1 || f.top > 1000:
		return o, usageError("--top must be between 1 and 1000, got %d", f.top)
	}
	maxEvents := f.maxEvents
	if maxEvents < 0 {
		maxEvents = defaultMaxEvents
		if csvOut {
			maxEvents = defaultMaxEventsCSV
		}
	}
	loc, err := time.LoadLocation(f.tz)
	if err != nil {
		return o, usageError("--timezone %q: %v", f.tz, err)
	}
	window := etcdlog.SummaryOptions{Bucket: f.bucket, Top: f.top, MaxEvents: maxEvents}
	for _, t := range []struct {
		name, val string
		t         *time.Time
	}{{"since", f.since, &window.Since}, {"until", f.until, &window.Until}} {
		if t.val == "" {
			continue
		}
		if *t.t, err = promexport.ParseTime(t.val, now); err != nil {
			return o, usageError("--%s: %v", t.name, err)
		}
	}
	if !window.Since.IsZero() && !window.Until.IsZero() && !window.Until.After(window.Since) {
		return o, usageError("--until %s is not after --since %s", f.until, f.since)
	}
	o.Criteria, o.Paths = criteria, paths
	o.Scan = etcdlog.ScanOptions{Parser: etcdlog.ParserOptions{Location: loc, Year: f.year}, Summary: window}
	return o, nil
}
