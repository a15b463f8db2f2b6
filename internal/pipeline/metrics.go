package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/hoststats"
	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/promscrape"
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
	// Criteria are the limits to judge by (check.Table, maybe overridden).
	Criteria []check.Criterion
	// Started, when set, is called once the members are known and have
	// been scraped the first time; Sampled after each interval, when each
	// member's series ends with the interval's sample. Both get the Result
	// being filled, which they must not keep.
	Started, Sampled func(r *result.Result)
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
	res.Target = &result.Target{Kind: cluster.External, Endpoints: o.Conn.Endpoints, EndpointsFrom: o.Conn.EndpointsFrom, Version: d.Version}
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

	w := &watcher{client: d.HTTP, members: d.Members, res: res, sec: sec, timeout: scrapeBound(o), interval: o.Interval}
	runErr := w.run(ctx, o)
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
	return &result.MetricsParams{Interval: o.Interval.Seconds(), Duration: o.Duration.Seconds(), ConnParams: connParams(o.Conn)}
}

// watcher scrapes the members and fills the section.
type watcher struct {
	client   *http.Client
	members  []cluster.Member
	res      *result.Result
	sec      *result.Metrics
	timeout  time.Duration
	interval time.Duration
	state    []memberState
	procs    *hoststats.MemberWatch
}

// memberState is what the watcher keeps of a member between scrapes.
type memberState struct {
	prev   *promscrape.Etcd // the last answer
	prevAt time.Time
	// totals sums the member's intervals over the run.
	totals promscrape.Totals
	// first and latest are the member's first and latest answers whole,
	// for the peers' round trips (recorded too rarely for deltas).
	first, latest promscrape.Snapshot
}

// run scrapes once, then at every interval until the duration has passed
// or ctx ends. A round of scrapes that ctx interrupted is dropped.
func (w *watcher) run(ctx context.Context, o MetricsOptions) error {
	w.state = make([]memberState, len(w.members))
	start := time.Now()
	w.sec.Start = start.UTC().Truncate(time.Millisecond)
	w.round(ctx, 0)
	if ctx.Err() != nil {
		return w.ended(ctx, o)
	}
	w.procs = hoststats.WatchMembers(w.members)
	if o.Started != nil {
		o.Started(w.res)
	}
	total := 0
	if o.Duration > 0 {
		total = int(math.Ceil(float64(o.Duration) / float64(o.Interval)))
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for n := 1; total == 0 || n <= total; n++ {
		due := start.Add(time.Duration(n) * o.Interval)
		t.Reset(time.Until(due))
		select {
		case <-ctx.Done():
			return w.ended(ctx, o)
		case <-t.C:
		}
		w.round(ctx, n)
		if ctx.Err() != nil {
			return w.ended(ctx, o)
		}
		w.sec.Intervals = n
		w.sec.Seconds = roundMs(time.Duration(n) * o.Interval)
		if o.Sampled != nil {
			o.Sampled(w.res)
		}
	}
	return nil
}

// ended is the outcome of a run that ctx ended: no error when it had no
// duration to reach.
func (w *watcher) ended(ctx context.Context, o MetricsOptions) error {
	if o.Duration == 0 && errors.Is(ctx.Err(), context.Canceled) {
		return nil
	}
	return ctx.Err()
}

func roundMs(d time.Duration) float64 { return d.Round(time.Millisecond).Seconds() }

// round scrapes every member once; n is the interval it ends (0: the
// first scrape, which only sets the starting point).
func (w *watcher) round(ctx context.Context, n int) {
	sctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	at := time.Now()
	scrapes := promscrape.ScrapeMembers(sctx, w.client, w.members)
	if ctx.Err() != nil {
		return
	}
	t := roundMs(time.Duration(n) * w.interval)
	for i, s := range scrapes {
		st := &w.state[i]
		m := &w.sec.Members[i]
		if s.Err != nil {
			if n == 0 {
				w.sec.Notes = append(w.sec.Notes, fmt.Sprintf("%s did not answer the first scrape: %s", m.Name, scrapeError(s.Err, w.timeout)))
				continue
			}
			m.Unreachable++
			m.Series = append(m.Series, result.MetricsSample{T: t, Error: scrapeError(s.Err, w.timeout)})
			continue
		}
		cur := s.Snap.EtcdSignals()
		if n == 0 {
			w.learn(i, cur)
		}
		var span float64
		if st.prev != nil {
			span = roundMs(at.Sub(st.prevAt))
		}
		sig, deltas := promscrape.SignalsBetween(st.prev, cur, span)
		st.prev, st.prevAt = &cur, at
		if n > 0 {
			m.Series = append(m.Series, result.MetricsSample{T: t, MetricsSignals: sig})
			st.totals.Add(sig, deltas)
		}
		m.Overall = st.totals.Overall(sig)
		if st.first == nil {
			st.first = s.Snap
		}
		st.latest = s.Snap
	}
	if n > 0 {
		w.takeProcesses()
		w.takePeerRTTs()
	}
}

// takeProcesses records each member process's figures from the first
// round to now.
func (w *watcher) takeProcesses() {
	for _, p := range w.procs.Since() {
		for i := range w.sec.Members {
			if w.members[i].Name == p.Name {
				w.sec.Members[i].Process = &p
			}
		}
	}
}

// takePeerRTTs records the members' round trips to each other from their
// first answers to their latest.
func (w *watcher) takePeerRTTs() {
	var first, latest []promscrape.MemberScrape
	for i, st := range w.state {
		if st.latest == nil {
			continue
		}
		first = append(first, promscrape.MemberScrape{Member: w.members[i], Snap: st.first})
		latest = append(latest, promscrape.MemberScrape{Member: w.members[i], Snap: st.latest})
	}
	w.sec.PeerRTTs = promscrape.PeerRTTsBetween(first, latest)
}

// learn completes what the cluster told of member i with its first
// scrape: its version and whether it leads (all that is known when the
// member list could not be read).
func (w *watcher) learn(i int, e promscrape.Etcd) {
	m, tm := &w.sec.Members[i], &w.res.Target.Members[i]
	if m.Version == "" {
		m.Version, tm.Version = e.Version, e.Version
	}
	if w.res.Target.Version == "" {
		w.res.Target.Version, w.res.Env.EtcdVersion = e.Version, e.Version
	}
	if v, ok := e.Values["is_leader"]; ok {
		m.Leader, tm.Leader = v == 1, v == 1
	}
}

// scrapeError says why a member did not answer, without the URL that the
// member's entry already holds.
func scrapeError(err error, timeout time.Duration) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("no answer within %s", timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}
