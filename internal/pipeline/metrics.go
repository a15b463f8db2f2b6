package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/clusterstate"
	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/loadrun"
	"github.com/etcdperf/etcdperf/internal/memberwatch"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/sysinfo"
	"github.com/etcdperf/etcdperf/internal/units"
)

// MetricsOptions configure `etcdperf metrics`.
type MetricsOptions struct {
	// Conn reaches the cluster; only one endpoint needs to answer.
	Conn cluster.ConnOptions
	// Interval is the time between two scrapes.
	Interval time.Duration
	// Duration ends the run; 0 runs until ctx ends, which is then no
	// error.
	Duration time.Duration
	// Criteria are the limits to judge by (limits.Table, maybe overridden).
	Criteria []limits.Criterion
	// ClusterState bounds the reading of the cluster's own state (each
	// member's status, the alarms, a few reads, the hashes).
	ClusterState clusterstate.Options
	// Started, when set, is called once the members are known and have
	// been scraped the first time; Sampled after each interval, when each
	// member's series ends with the interval's sample. Both get the Result
	// being filled, which they must not keep.
	Started, Sampled func(r *result.Result)
	// Known are etcd's flags in force as the user stated them
	// (--current-flag): the tuning compares its suggestions with them.
	Known []result.FlagValue
}

// Metrics scrapes every member's /metrics at each interval and reports
// each member's health signals per interval and over the run, judged
// against the criteria. A member that does not answer a scrape is recorded
// as such for that interval and the run goes on. When ctx ends before the
// duration, the Result holds what was collected, with the error set, and
// the error is returned; without a duration that is how the run ends, and
// no error. A run that could not start returns no Result.
func Metrics(ctx context.Context, o MetricsOptions) (*result.Result, error) {
	if o.Interval <= 0 {
		return nil, errors.New("the interval must be positive")
	}
	if o.Duration < 0 {
		return nil, errors.New("the duration cannot be negative")
	}
	d, err := cluster.Discover(ctx, o.Conn)
	if err != nil {
		return nil, err
	}
	res := result.New(result.KindMetrics)
	res.Params = metricsParams(o)
	res.Env = sysinfo.HostEnv()
	res.Env.EtcdVersion = d.Version
	res.Env.Endpoints = strings.Join(o.Conn.Endpoints, ",")
	res.Target = &result.Target{Kind: lab.External, Endpoints: o.Conn.Endpoints, EndpointsFrom: o.Conn.EndpointsFrom, Version: d.Version}
	sec := &result.Metrics{Interval: o.Interval.Seconds(), Duration: o.Duration.Seconds(), Notes: d.Notes}
	for _, err := range d.Unreachable {
		sec.Notes = append(sec.Notes, err.Error())
	}
	slices.SortStableFunc(d.Members, func(a, b cluster.Member) int { return strings.Compare(a.Name, b.Name) })
	for i, m := range d.Members {
		name := m.Name
		if name == "" { // a member added but not started yet
			name = fmt.Sprintf("member-%d", i)
		}
		mm := result.MetricsMember{Name: name, MetricsURL: m.MetricsURL, Version: m.Version, Leader: m.Leader, Series: []result.MetricsSample{}}
		if m.ID != 0 {
			mm.ID = fmt.Sprintf("%x", m.ID)
		}
		sec.Members = append(sec.Members, mm)
		res.Target.Members = append(res.Target.Members, result.TargetMember{Name: name, ClientURL: m.ClientURL, MetricsURL: m.MetricsURL, Leader: m.Leader, Version: m.Version})
	}
	res.Metrics = sec
	res.Tuning = &result.Tuning{Known: o.Known}

	names := make([]string, len(sec.Members))
	for i, m := range sec.Members {
		names[i] = m.Name
	}
	notes := sec.Notes
	so := memberwatch.SeriesOptions{Interval: o.Interval, Duration: o.Duration, Timeout: scrapeBound(o), Names: names}
	so.Started = func(w *memberwatch.Watched) {
		w.Learned.Complete(res)
		w.PutIn(sec, notes)
		if o.Started != nil {
			o.Started(res)
		}
	}
	so.Sampled = func(w *memberwatch.Watched) {
		w.PutIn(sec, notes)
		if o.Sampled != nil {
			o.Sampled(res)
		}
	}
	// The cluster's own state is read beside the first intervals: it
	// adds no time to the run.
	state := clusterStateBeside(ctx, func(context.Context) (*cluster.Discovery, error) { return d, nil }, o.ClusterState)
	watched, runErr := memberwatch.Series(ctx, d.HTTP, d.Members, so)
	res.Cluster = state()
	watched.Learned.Complete(res)
	watched.PutIn(sec, notes)
	if runErr != nil {
		res.Error = runErr.Error()
		if errors.Is(runErr, context.Canceled) {
			res.Error = fmt.Sprintf("interrupted after %s of the %s asked for", units.Seconds(sec.Seconds), o.Duration)
		}
	}
	judge.Judge(res, o.Criteria)
	res.Finish()
	return res, runErr
}

// scrapeBound bounds one round of scrapes: about the interval, so that a
// member that hangs does not stall the others for long, but at least a
// second (a busy member takes a while to write its metrics) and at most
// the command timeout.
func scrapeBound(o MetricsOptions) time.Duration {
	b := max(o.Interval, time.Second)
	if o.Conn.CommandTimeout > 0 {
		b = min(b, o.Conn.CommandTimeout)
	}
	return b
}

func metricsParams(o MetricsOptions) *result.MetricsParams {
	return &result.MetricsParams{Interval: o.Interval.Seconds(), Duration: o.Duration.Seconds(), ConnParams: loadrun.ConnParams(o.Conn)}
}

// clusterStateBeside starts reading the state of the cluster that
// discover finds, beside whatever the caller runs meanwhile, and returns
// the wait for it: the read adds no time to a run longer than it. A state
// that could not be read at all is a note of its own.
func clusterStateBeside(ctx context.Context, discover func(context.Context) (*cluster.Discovery, error), o clusterstate.Options) (wait func() *result.ClusterState) {
	ch := make(chan *result.ClusterState, 1)
	go func() {
		d, err := discover(ctx)
		var st *result.ClusterState
		if err == nil {
			st, err = clusterstate.Read(ctx, d, o)
		}
		if st == nil {
			st = &result.ClusterState{Notes: []string{fmt.Sprintf("the cluster's state could not be read: %v", err)}}
		}
		ch <- st
	}()
	return func() *result.ClusterState { return <-ch }
}

// discoverAt finds the cluster at conn.
func discoverAt(conn cluster.ConnOptions) func(context.Context) (*cluster.Discovery, error) {
	return func(ctx context.Context) (*cluster.Discovery, error) { return cluster.Discover(ctx, conn) }
}
