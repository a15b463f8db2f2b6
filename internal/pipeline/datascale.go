package pipeline

import (
	"context"
	"errors"

	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/load"
	"github.com/etcdperf/etcdperf/internal/profile"
	"github.com/etcdperf/etcdperf/internal/result"
)

// DatascaleOptions configure `etcdperf check datascale`.
type DatascaleOptions struct {
	// Target is the etcd to fill; an embedded member runs in a process
	// of its own, so that its memory is etcd's alone.
	Target lab.TargetOptions
	// Profile is the load model; Keys, when set, replaces its key count.
	Profile profile.Scale
	Keys    int64
	// Prefix holds the run's keys (default /etcdperf/<run id>/).
	Prefix                  string
	AutoCompact, AutoDefrag bool
	Criteria                []limits.Criterion
	Progress                *load.Progress
	Started                 func()
}

// Datascale writes the profile's keys as etcdctl check datascale does
// (512-byte keys, 512-byte values, as fast as the clients go) and reports
// how much the members' resident memory grew to hold them, from
// process_resident_memory_bytes before and after. The keys are deleted at
// the end, as in Bench.
func Datascale(ctx context.Context, o DatascaleOptions) (*result.Result, error) {
	p := o.Profile
	keys := o.Keys
	if keys <= 0 {
		keys = p.Keys
	}
	res, obs, err := observedPuts(ctx, puts{
		target: o.Target, compact: o.AutoCompact, started: o.Started,
		load: load.Options{
			Clients: p.Clients, Total: keys, KeySize: p.KeySize, ValSize: p.ValSize,
			KeySpaceSize: int(keys), SequentialKeys: true, Prefix: o.Prefix, Progress: o.Progress,
		},
	})
	if res == nil {
		return nil, err
	}
	res.Kind = result.KindDatascale
	bp, _ := res.Params.(*result.BenchParams)
	res.Params = &result.CheckParams{BenchParams: bp, ProfileParams: &result.ProfileParams{Load: p.Name, AutoCompact: o.AutoCompact, AutoDefrag: o.AutoDefrag}}
	ds := &result.Datascale{Profile: p.Name, Keys: keys, KVSize: p.KeySize + p.ValSize, Clients: p.Clients, Members: obs.Members}
	for _, m := range obs.Members {
		ds.RSSBefore += m.RSSBefore
		ds.RSSAfter += m.RSSAfter
	}
	ds.Growth = ds.RSSAfter - ds.RSSBefore
	if keys > 0 {
		ds.PerKey = ds.Growth / float64(keys)
	}
	res.Datascale = ds
	if o.AutoDefrag {
		_, derr := defragAfter(ctx, res, o.Target.Conn)
		err = errors.Join(err, derr)
	}
	if err != nil && res.Error == "" {
		res.Error = errorText(err)
	}
	judge.Judge(res, o.Criteria)
	res.Finish()
	return res, err
}
