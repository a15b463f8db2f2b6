package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/etcdperf/etcdperf/internal/etcdlog"
	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
)

// LogsOptions configure `etcdperf logs`.
type LogsOptions struct {
	// Paths are files, patterns, directories or "-" for Stdin.
	Paths []string
	Stdin io.Reader
	Scan  etcdlog.ScanOptions
	// Criteria hold the levels the findings are judged by (--limit);
	// limits.Table when nil.
	Criteria []limits.Criterion
}

// NoEtcdLinesError says that the inputs held no etcd log line at all:
// wrong files, or a format etcdperf does not know.
type NoEtcdLinesError struct {
	Lines int64
	Paths []string
}

func (e *NoEtcdLinesError) Error() string {
	what := strings.Join(e.Paths, " ")
	if e.Lines == 0 {
		return fmt.Sprintf("no log lines in %s", what)
	}
	if e.Lines == 1 {
		return fmt.Sprintf("the one line in %s is not an etcd log line (capnslog, zap JSON or zap console, maybe behind kubectl, journald or CRI prefixes); check that these are etcd's logs", what)
	}
	return fmt.Sprintf("none of the %d lines in %s is an etcd log line (capnslog, zap JSON or zap console, maybe behind kubectl, journald or CRI prefixes); check that these are etcd's logs", e.Lines, what)
}

// Logs reads etcd's logs and judges what they say. A path that cannot be
// read is an *etcdlog.InputError, returned before anything is read. When
// reading fails midway (or ctx is cancelled) it returns the Result of what
// was read, with the error.
func Logs(ctx context.Context, o LogsOptions) (*result.Result, error) {
	inputs, err := etcdlog.Inputs(o.Paths, o.Stdin)
	if err != nil {
		return nil, err
	}
	res := result.New(result.KindLogs)
	res.Params = logsParams(o)
	sum, err := etcdlog.Scan(ctx, inputs, o.Scan)
	res.Logs = sum.Result()
	if err == nil && res.Logs.Lines == res.Logs.Unparsed {
		return nil, &NoEtcdLinesError{Lines: res.Logs.Lines, Paths: o.Paths}
	}
	if err != nil {
		res.Error = err.Error()
		if errors.Is(err, context.Canceled) {
			res.Error = fmt.Sprintf("interrupted after %d lines: the Result holds what was read", res.Logs.Lines)
		}
	}
	judge.Judge(res, o.Criteria)
	res.Finish()
	return res, err
}

func logsParams(o LogsOptions) *result.LogsParams {
	s := o.Scan.Summary
	p := &result.LogsParams{Paths: o.Paths, Bucket: s.Bucket.Seconds(), Top: s.Top, MaxEvents: max(s.MaxEvents, 0)}
	if l := o.Scan.Parser.Location; l != nil {
		p.Timezone = l.String()
	}
	return p
}
