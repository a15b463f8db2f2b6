package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/load"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// KindDatascale is the kind of `etcdperf check datascale`'s Result.
const KindDatascale = "datascale"

// DatascaleOptions configure `etcdperf check datascale`.
type DatascaleOptions struct {
	// Target is the etcd to fill; an embedded member runs in a process
	// of its own, so that its memory is etcd's alone.
	Target cluster.TargetOptions
	// Profile is the load model; Keys, when set, replaces its key count.
	Profile check.ScaleProfile
	Keys    int64
	// Prefix holds the run's keys (default /etcdperf/<run id>/).
	Prefix                  string
	AutoCompact, AutoDefrag bool
	Criteria                []check.Criterion
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
	res, ob, err := observedPuts(ctx, puts{
		target: o.Target, compact: o.AutoCompact, criteria: o.Criteria, started: o.Started,
		load: load.Options{
			Clients: p.Clients, Total: keys, KeySize: p.KeySize, ValSize: p.ValSize,
			KeySpaceSize: int(keys), SequentialKeys: true, Prefix: o.Prefix, Progress: o.Progress,
		},
	})
	if res == nil {
		return nil, err
	}
	res.Kind = KindDatascale
	res.Params["load"] = p.Name
	res.Params["auto_compact"] = o.AutoCompact
	res.Params["auto_defrag"] = o.AutoDefrag
	ds := &result.Datascale{Profile: p.Name, Keys: keys, KVSize: p.KeySize + p.ValSize, Clients: p.Clients, Members: ob.members}
	for _, m := range ob.members {
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
		res.Error = err.Error()
	}
	JudgeDatascale(res, o.Criteria)
	res.Finish()
	return res, err
}

// JudgeDatascale judges a datascale run as etcdctl does (any failed
// request fails it; the memory is reported, not judged) and adds the
// findings, verdict and summary.
func JudgeDatascale(res *result.Result, criteria []check.Criterion) {
	res.Checks = nil
	if c, ok := check.Lookup(criteria, check.RequestErrors); ok && res.Bench != nil {
		res.Checks = append(res.Checks, check.Evaluate(c, float64(result.ErrorTotal(res.Bench.Errors))))
	}
	res.Findings = diagnose.Run(res)
	res.Verdict = diagnose.Verdict(res.Checks, res.Findings)
	ds := res.Datascale
	switch {
	case ds == nil || len(ds.Members) == 0:
		res.Summary = "etcd's memory could not be read (process_resident_memory_bytes), so nothing can be said about it."
	default:
		res.Summary = fmt.Sprintf("etcd's resident memory grew by %s (%s to %s) to hold %d keys of %d bytes: %s per key.",
			units.Bytes(ds.Growth), units.Bytes(ds.RSSBefore), units.Bytes(ds.RSSAfter), ds.Keys, ds.KVSize, units.Bytes(ds.PerKey))
	}
}
