package pipeline

import (
	"context"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/load"
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
	res.Params = benchParams(o)
	return res, m.Obs, err
}

func joinErr(a, b string) string { return result.JoinError(a, b) }

func benchParams(o loadrun.Options) *result.BenchParams {
	l := o.Load
	p := &result.BenchParams{
		Workload:       l.Workload,
		Conns:          max(o.Conns, 1),
		Clients:        l.Clients,
		Prefix:         l.Prefix,
		TargetLeader:   new(o.TargetLeader),
		KeepKeys:       new(o.KeepKeys),
		Compact:        new(o.Compact),
		EtcdClient:     l.ClientOnly,
		Total:          max(l.Total, 0),
		Duration:       max(l.Duration.Seconds(), 0),
		Rate:           max(l.Rate, 0),
		CommandTimeout: max(l.CommandTimeout.Seconds(), 0),
		TargetParams:   targetParams(o.Target),
	}
	switch l.Workload {
	case load.Put, load.TxnPut, load.TxnMixed:
		p.KeySize, p.ValSize, p.KeySpaceSize = l.KeySize, l.ValSize, new(int64(l.KeySpaceSize))
		if l.Workload == load.Put {
			p.SequentialKeys = new(l.SequentialKeys)
		}
		if l.Workload == load.TxnPut {
			p.TxnOps = l.TxnOps
		}
		if l.Workload == load.TxnMixed {
			p.RWRatio, p.Limit, p.Consistency = l.RWRatio, new(l.Limit), consistency(l.Serializable)
		}
	case load.Range:
		p.Consistency, p.Limit, p.KeysOnly, p.CountOnly = consistency(l.Serializable), new(l.Limit), new(l.KeysOnly), new(l.CountOnly)
		if l.RangeKey != "" {
			p.Key, p.RangeEnd = l.RangeKey, new(l.RangeEnd)
		} else {
			p.KeySpaceSize = new(int64(l.Prefill))
		}
	case load.WatchLatency:
		p.Streams, p.WatchersPerStream, p.KeySize, p.ValSize, p.PrevKV = l.Streams, l.WatchersPerStream, l.KeySize, l.ValSize, new(l.PrevKV)
	case load.LeaseKeepalive:
		p.LeaseTTL = l.LeaseTTL
	}
	return p
}

// targetParams are the options of the target in a Result's params: the
// endpoints (and user, never the password), or the embedded members.
func targetParams(t lab.TargetOptions) result.TargetParams {
	if len(t.Conn.Endpoints) > 0 {
		return result.TargetParams{ConnParams: connParams(t.Conn)}
	}
	return result.TargetParams{EmbeddedParams: &result.EmbeddedParams{DataDir: t.DataDir, Members: max(t.Members, 1), KeepData: t.KeepData}}
}

// connParams are the endpoints of a connection, its user (never the
// password) and whether TLS is on, in a Result's params.
func connParams(c cluster.ConnOptions) result.ConnParams {
	if len(c.Endpoints) == 0 {
		return result.ConnParams{}
	}
	return result.ConnParams{Endpoints: c.Endpoints, EndpointsFrom: c.EndpointsFrom, User: c.User, TLS: c.TLSConfigured()}
}

func consistency(serializable bool) string {
	if serializable {
		return "s"
	}
	return "l"
}
