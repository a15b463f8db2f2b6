package pipeline

import (
	"context"

	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/loadrun"
	"github.com/etcdperf/etcdperf/internal/memberwatch"
	"github.com/etcdperf/etcdperf/internal/result"
)

// BenchOptions configure `etcdperf bench`: its load run, and the limits
// its Result is judged by.
type BenchOptions struct {
	loadrun.Options
	Criteria []limits.Criterion
}

// The errors of a key prefix that a run cannot use.
var (
	ErrPrefixInUse  = loadrun.ErrPrefixInUse
	ErrNoPermission = loadrun.ErrNoPermission
)

// Bench loads etcd and reports the client's view (latency, throughput,
// errors) with etcd's own (its disk histograms, leader changes, failed
// proposals). It writes only under its key prefix, refuses a prefix that
// has keys, and deletes them at the end, also when ctx ends midway; an
// embedded etcd is removed. An interrupted run returns its partial Result
// with the error; a run that could not start returns no Result.
func Bench(ctx context.Context, o BenchOptions) (*result.Result, error) {
	res, _, err := measureBench(ctx, o.Options)
	if res != nil {
		judge.Judge(res, o.Criteria)
		res.Finish()
	}
	return res, err
}

// measureBench is Bench's measurement (loadrun.Run) with its params,
// shared with check and doctor, which judge it as theirs; it also returns
// what the window on the members saw over the load.
func measureBench(ctx context.Context, o loadrun.Options) (*result.Result, *memberwatch.Observation, error) {
	o.Defaults()
	m, err := loadrun.Run(ctx, o)
	if m == nil {
		return nil, nil, err
	}
	res := result.New(result.KindBench)
	res.Env, res.Target, res.Bench, res.Server, res.Error = m.Env, m.Target, m.Bench, m.Server, m.Error
	res.Params = o.Params()
	return res, m.Obs, err
}

func joinErr(a, b string) string { return result.JoinError(a, b) }
