package loadrun

import (
	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/load"
	"github.com/etcdperf/etcdperf/internal/result"
)

// Params are the run's options in a Result's params.
func (o Options) Params() *result.BenchParams {
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
		TargetParams:   TargetParams(o.Target),
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

// TargetParams are the options of the target in a Result's params: the
// endpoints (and user, never the password), or the embedded members.
func TargetParams(t lab.TargetOptions) result.TargetParams {
	if len(t.Conn.Endpoints) > 0 {
		return result.TargetParams{ConnParams: ConnParams(t.Conn)}
	}
	return result.TargetParams{EmbeddedParams: &result.EmbeddedParams{DataDir: t.DataDir, Members: max(t.Members, 1), KeepData: t.KeepData}}
}

// ConnParams are the endpoints of a connection, its user (never the
// password) and whether TLS is on, in a Result's params.
func ConnParams(c cluster.ConnOptions) result.ConnParams {
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
