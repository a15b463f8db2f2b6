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
	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/promexport"
	"github.com/etcdperf/etcdperf/internal/promscrape"
	"github.com/etcdperf/etcdperf/internal/render"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/sysinfo"
	"github.com/etcdperf/etcdperf/internal/units"
)

// KindMetrics is the kind of the Results of `etcdperf metrics`.
const KindMetrics = "metrics"

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

// metricsCriteria are the criteria judged at every interval and over the
// run, in order.
var metricsCriteria = []string{check.WALFsyncP99, check.BackendCommitP99, check.LeaderChanges, check.ProposalsFailed}

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
	res := result.New(KindMetrics)
	res.Params = metricsParams(o)
	res.Env = sysinfo.HostEnv()
	res.Env.EtcdVersion = d.Version
	res.Env.Endpoints = strings.Join(o.Conn.Endpoints, ",")
	res.Target = &result.Target{Kind: cluster.External, Endpoints: o.Conn.Endpoints, Version: d.Version}
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
	judgeMetrics(res, o.Criteria)
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

func metricsParams(o MetricsOptions) map[string]any {
	p := map[string]any{
		"interval": o.Interval.Seconds(),
		"duration": o.Duration.Seconds(),
	}
	connParams(p, o.Conn)
	return p
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
}

// memberState is what the watcher keeps of a member between scrapes.
type memberState struct {
	prev   *promscrape.Etcd // the last answer
	prevAt time.Time
	// The sums of the member's interval deltas: its histograms and
	// counters over the run, correct across restarts (counter resets).
	hists    map[string]promscrape.Histogram
	counters result.MetricsSignals
	spanned  float64
	last     *result.MetricsSignals // the last answer's signals
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
	scrapes := scrapeMembers(sctx, w.client, w.members)
	if ctx.Err() != nil {
		return
	}
	t := roundMs(time.Duration(n) * w.interval)
	for i, s := range scrapes {
		st := &w.state[i]
		m := &w.sec.Members[i]
		if s.err != nil {
			if n == 0 {
				w.sec.Notes = append(w.sec.Notes, fmt.Sprintf("%s did not answer the first scrape: %s", m.Name, scrapeError(s.err, w.timeout)))
				continue
			}
			m.Unreachable++
			m.Series = append(m.Series, result.MetricsSample{T: t, Error: scrapeError(s.err, w.timeout)})
			continue
		}
		cur := s.snap.EtcdSignals()
		if n == 0 {
			w.learn(i, cur)
		}
		var span float64
		if st.prev != nil {
			span = roundMs(at.Sub(st.prevAt))
		}
		sig, deltas := signalsBetween(st.prev, cur, span)
		st.prev, st.prevAt, st.last = &cur, at, sig
		if n > 0 {
			m.Series = append(m.Series, result.MetricsSample{T: t, MetricsSignals: sig})
			st.add(sig, deltas)
		}
		m.Overall = st.overall()
	}
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

// The signals read from the histograms, by EtcdSignals' IDs.
const (
	sigWALFsync      = "wal_fsync"
	sigBackendCommit = "backend_commit"
	sigPeerRTT       = "peer_rtt"
)

// signalsBetween returns a member's signals between its previous answer
// (nil for its first) and the current one, span seconds later, with the
// histogram deltas by signal.
func signalsBetween(prev *promscrape.Etcd, cur promscrape.Etcd, span float64) (*result.MetricsSignals, map[string]promscrape.Histogram) {
	s := &result.MetricsSignals{Seconds: span}
	deltas := map[string]promscrape.Histogram{}
	if prev != nil {
		for _, id := range []string{sigWALFsync, sigBackendCommit, sigPeerRTT} {
			if h, ok := cur.Histograms[id]; ok {
				deltas[id] = h.Sub(prev.Histograms[id])
			}
		}
		delta := func(id string) float64 {
			c, p := cur.Values[id], prev.Values[id]
			if c < p { // the member restarted
				return c
			}
			return c - p
		}
		s.LeaderChanges = delta("leader_changes")
		s.ProposalsCommitted = delta("proposals_committed")
		s.ProposalsFailed = delta("proposals_failed")
		s.SlowApplies = delta("slow_applies")
		s.SlowReadIndexes = delta("slow_read_indexes")
		s.HeartbeatFailures = delta("heartbeat_failures")
	}
	s.WALFsync, s.BackendCommit, s.PeerRTT = latencyOf(deltas, sigWALFsync), latencyOf(deltas, sigBackendCommit), latencyOf(deltas, sigPeerRTT)
	v := cur.Values
	s.HasLeader, s.IsLeader, s.ProposalsPending = v["has_leader"], v["is_leader"], v["proposals_pending"]
	s.DBSize, s.DBSizeInUse, s.Quota, s.RSS = v["db_size"], v["db_size_in_use"], v["quota"], v["rss"]
	for _, id := range []string{sigWALFsync, sigBackendCommit} {
		if _, ok := cur.Histograms[id]; !ok {
			s.Missing = append(s.Missing, id)
		}
	}
	for _, id := range []string{"has_leader", "is_leader", "proposals_pending", "proposals_failed", "leader_changes", "db_size", "db_size_in_use",
		"slow_applies", "slow_read_indexes", "heartbeat_failures", "rss"} {
		if _, ok := v[id]; !ok {
			s.Missing = append(s.Missing, id)
		}
	}
	return s, deltas
}

func latencyOf(hs map[string]promscrape.Histogram, id string) *result.Latency {
	h, ok := hs[id]
	if !ok {
		return nil
	}
	l := h.Latency()
	return &l
}

// add counts one interval into the member's totals.
func (st *memberState) add(s *result.MetricsSignals, deltas map[string]promscrape.Histogram) {
	if st.hists == nil {
		st.hists = map[string]promscrape.Histogram{}
	}
	for id, h := range deltas {
		st.hists[id] = addHist(st.hists[id], h)
	}
	c := &st.counters
	c.LeaderChanges += s.LeaderChanges
	c.ProposalsCommitted += s.ProposalsCommitted
	c.ProposalsFailed += s.ProposalsFailed
	c.SlowApplies += s.SlowApplies
	c.SlowReadIndexes += s.SlowReadIndexes
	c.HeartbeatFailures += s.HeartbeatFailures
	st.spanned += s.Seconds
}

// overall is the member over the run: the sums of its intervals and the
// gauges of its last answer.
func (st *memberState) overall() *result.MetricsSignals {
	o := *st.last
	c := st.counters
	o.Seconds = math.Round(st.spanned*1000) / 1000
	o.LeaderChanges, o.ProposalsCommitted, o.ProposalsFailed = c.LeaderChanges, c.ProposalsCommitted, c.ProposalsFailed
	o.SlowApplies, o.SlowReadIndexes, o.HeartbeatFailures = c.SlowApplies, c.SlowReadIndexes, c.HeartbeatFailures
	o.WALFsync, o.BackendCommit, o.PeerRTT = latencyOf(st.hists, sigWALFsync), latencyOf(st.hists, sigBackendCommit), latencyOf(st.hists, sigPeerRTT)
	return &o
}

// metricValue is a criterion's value in a member's signals; false when
// there is none (nothing observed, no deltas yet).
func metricValue(id string, s *result.MetricsSignals) (float64, bool) {
	if s == nil {
		return 0, false
	}
	p99 := func(l *result.Latency) (float64, bool) {
		if l == nil || l.Count == 0 {
			return 0, false
		}
		return l.P99, true
	}
	switch id {
	case check.WALFsyncP99:
		return p99(s.WALFsync)
	case check.BackendCommitP99:
		return p99(s.BackendCommit)
	case promexport.HasLeader.ID:
		return s.HasLeader, true
	}
	if s.Seconds == 0 { // a first answer: no deltas
		return 0, false
	}
	switch id {
	case check.LeaderChanges:
		return s.LeaderChanges, true
	case check.ProposalsFailed:
		return s.ProposalsFailed, true
	}
	return 0, false
}

// judgeMetrics adds the breaches of each interval, the checks over the
// run (worst member), the findings, the verdict and the summary.
func judgeMetrics(res *result.Result, criteria []check.Criterion) {
	sec := res.Metrics
	var crits []check.Criterion
	for _, id := range metricsCriteria {
		if c, ok := check.Lookup(criteria, id); ok {
			crits = append(crits, c)
		}
	}
	t0 := float64(sec.Start.UnixMilli()) / 1000
	for _, c := range append(crits, promexport.HasLeader) {
		counted := c.Unit == check.Count
		for _, m := range sec.Members {
			times := make([]float64, len(m.Series))
			cells := make([]result.PromValue, len(m.Series))
			for i, s := range m.Series {
				times[i] = t0 + s.T
				if v, ok := metricValue(c.ID, s.MetricsSignals); ok && !slices.Contains(s.Missing, c.ID) {
					cells[i] = result.PromSample(v)
				}
			}
			if b, ok := promexport.Breach(c, m.Name, times, cells, counted); ok {
				sec.Breaches = append(sec.Breaches, b)
			}
		}
	}
	var observed []result.PromMember
	for _, m := range sec.Members {
		pm := result.PromMember{Instance: m.Name, Observed: map[string]float64{}}
		for _, c := range crits {
			if v, ok := metricValue(c.ID, m.Overall); ok {
				pm.Observed[c.ID] = v
			}
		}
		observed = append(observed, pm)
	}
	for _, c := range crits {
		worst, who, found := worstMember(observed, c)
		if !found {
			sec.Notes = append(sec.Notes, fmt.Sprintf("%s: no member observed anything, not judged", c.ID))
			continue
		}
		ch := check.Evaluate(c, worst)
		for _, m := range sec.Members {
			if m.Name == who && m.Overall != nil {
				switch c.ID {
				case check.WALFsyncP99:
					ch.Bound = atFloor(m.Overall.WALFsync)
				case check.BackendCommitP99:
					ch.Bound = atFloor(m.Overall.BackendCommit)
				}
			}
		}
		if len(sec.Members) > 1 {
			ch.Title += " (worst member: " + who + ")"
		}
		res.Checks = append(res.Checks, ch)
	}
	res.Findings = diagnose.Run(res)
	res.Verdict = diagnose.Verdict(res.Checks, res.Findings)
	res.Summary = metricsSummary(res)
}

func metricsSummary(res *result.Result) string {
	sec := res.Metrics
	var b strings.Builder
	fmt.Fprintf(&b, "%d member(s) over %s, %d interval(s) of %s", len(sec.Members), units.Seconds(sec.Seconds), sec.Intervals, units.Seconds(sec.Interval))
	if l := sec.WorstP99(func(s *result.MetricsSignals) *result.Latency { return s.WALFsync }); l != nil {
		fmt.Fprintf(&b, "; WAL fsync p99 %s", render.LatencyValue(*l, l.P99))
	}
	if l := sec.WorstP99(func(s *result.MetricsSignals) *result.Latency { return s.BackendCommit }); l != nil {
		fmt.Fprintf(&b, ", backend commit p99 %s", render.LatencyValue(*l, l.P99))
	}
	var down []string
	for _, m := range sec.Members {
		if m.Unreachable > 0 {
			down = append(down, fmt.Sprintf("%s missed %d", m.Name, m.Unreachable))
		}
	}
	if len(down) > 0 {
		fmt.Fprintf(&b, "; %s", strings.Join(down, ", "))
	}
	b.WriteString(overLimits(res.Checks) + ".")
	return b.String()
}
