package memberwatch

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"time"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/promscrape"
	"github.com/etcdperf/etcdperf/internal/result"
)

// SeriesOptions shape a series of marks.
type SeriesOptions struct {
	// Interval is the time between two marks; Duration ends the series (0:
	// only ctx does, which is then no error).
	Interval, Duration time.Duration
	// Timeout bounds one round of scrapes.
	Timeout time.Duration
	// Started, when set, is called once the members have been scraped the
	// first time; Sampled after each interval, when each member's series
	// ends with the interval's sample.
	Started func(Learned)
	Sampled func()
}

// Learned is what the members' first answers told of the target: the
// version of the first member that named one, and each member's own, in
// the members' order. Pipeline completes the Result's target and env with
// it; Series leaves them alone.
type Learned struct {
	Version string
	Members []LearnedMember
}

// LearnedMember is what one member's first answer told: its version and,
// when it said (LeaderKnown), whether it leads.
type LearnedMember struct {
	Version             string
	Leader, LeaderKnown bool
}

// Series watches members through a window with a mark at every interval,
// and fills sec, the metrics section, whose Members are the members'
// entries in their order: each member's signals per interval and over the
// run, its process on this host, the peers' round trips, and each
// member's version and leadership from its first answer. A member that
// does not answer a round is recorded as such for that interval and the
// series goes on; a round that ctx interrupted is dropped. It returns what
// the first answers told of the target (also to Started), and ctx's error
// when ctx ended before Duration (none without a Duration).
func Series(ctx context.Context, client *http.Client, members []cluster.Member, sec *result.Metrics, o SeriesOptions) (Learned, error) {
	w := &watcher{client: client, members: members, sec: sec, timeout: o.Timeout, interval: o.Interval}
	w.learned.Members = make([]LearnedMember, len(members))
	err := w.run(ctx, o)
	return w.learned, err
}

// watcher marks the window and fills the section.
type watcher struct {
	client   *http.Client
	members  []cluster.Member
	sec      *result.Metrics
	learned  Learned
	timeout  time.Duration
	interval time.Duration
	state    []memberState
	win      *Window
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
func (w *watcher) run(ctx context.Context, o SeriesOptions) error {
	w.state = make([]memberState, len(w.members))
	start := time.Now()
	w.sec.Start = start.UTC().Truncate(time.Millisecond)
	w.round(ctx, 0)
	if ctx.Err() != nil {
		return w.ended(ctx, o)
	}
	if o.Started != nil {
		o.Started(w.learned)
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
			o.Sampled()
		}
	}
	return nil
}

// ended is the outcome of a run that ctx ended: no error when it had no
// duration to reach.
func (w *watcher) ended(ctx context.Context, o SeriesOptions) error {
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
	var scrapes []promscrape.MemberScrape
	if n == 0 {
		w.win = Start(sctx, w.client, w.members, Options{})
		scrapes = w.win.First()
	} else {
		scrapes = w.win.Mark(sctx).After
	}
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
		w.takeDefrags()
	}
}

// takeDefrags records each member's defragmentations from the first
// round to now.
func (w *watcher) takeDefrags() {
	w.sec.Defrags = nil
	for i, st := range w.state {
		if d, ok := st.totals.Defrags(w.sec.Members[i].Name); ok {
			w.sec.Defrags = append(w.sec.Defrags, d)
		}
	}
}

// takeProcesses records each member process's figures from the first
// round to now.
func (w *watcher) takeProcesses() {
	for _, p := range w.win.Processes() {
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

// learn records what member i's first scrape tells: its version and
// whether it leads (all that is known when the member list could not be
// read).
func (w *watcher) learn(i int, e promscrape.Etcd) {
	m, lm := &w.sec.Members[i], &w.learned.Members[i]
	if m.Version == "" {
		m.Version, lm.Version = e.Version, e.Version
	}
	if w.learned.Version == "" {
		w.learned.Version = e.Version
	}
	if v, ok := e.Values["is_leader"]; ok {
		m.Leader, lm.Leader, lm.LeaderKnown = v == 1, v == 1, true
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
