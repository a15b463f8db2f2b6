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
	// Names are the members' names as the caller shows them, in the
	// members' order (default: each member's own name).
	Names []string
	// Started, when set, is called once the members have been scraped the
	// first time; Sampled after each interval, when each member's series
	// ends with the interval's sample. Both get what was measured so far,
	// which they must not keep past the call.
	Started, Sampled func(*Watched)
}

// Learned is what the members' first answers told of the target: the
// version of the first member that named one, and each member's own, in
// the members' order.
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

// Watched is what a series measured: each member's signals per interval
// and over the run, its process on this host, the peers' round trips, the
// defragmentations, and what the first answers told (Learned). Pipeline
// puts it in the Result; Series writes no Result.
type Watched struct {
	Learned
	// Start is the time of the first scrape; Intervals counts the marks
	// after it, Seconds the time they cover.
	Start     time.Time
	Intervals int
	Seconds   float64
	// Members are in the members' order.
	Members  []WatchedMember
	PeerRTTs []result.PeerRTT
	Defrags  []result.Defrags
	// Notes say what could not be measured.
	Notes []string
}

// WatchedMember is one member over a series.
type WatchedMember struct {
	// Unreachable counts the intervals the member did not answer.
	Unreachable int
	Overall     *result.MetricsSignals
	Series      []result.MetricsSample
	Process     *result.MemberProcess
}

// Series watches members with a mark at every interval (Watch) and
// returns what it measured (Watched). A member that does not answer a
// round is recorded as such for that interval and the series goes on; a
// round that ctx interrupted is dropped. The error is ctx's when ctx ended
// before Duration (none without a Duration).
func Series(ctx context.Context, client *http.Client, members []cluster.Member, o SeriesOptions) (*Watched, error) {
	w := &watcher{names: o.Names, timeout: o.Timeout, interval: o.Interval}
	if len(w.names) != len(members) {
		w.names = make([]string, len(members))
		for i, m := range members {
			w.names[i] = m.Name
		}
	}
	w.out.Learned.Members = make([]LearnedMember, len(members))
	w.out.Members = make([]WatchedMember, len(members))
	for i := range w.out.Members {
		w.out.Members[i].Series = []result.MetricsSample{}
	}
	w.state = make([]memberState, len(members))
	total := 0
	if o.Duration > 0 {
		total = int(math.Ceil(float64(o.Duration) / float64(o.Interval)))
	}
	w.out.Start = time.Now().UTC().Truncate(time.Millisecond)
	done := false
	Watch(ctx, client, members, WatchOptions{Interval: o.Interval, Timeout: o.Timeout}, func(t Tick) bool {
		w.round(t)
		if t.N == 0 {
			if o.Started != nil {
				o.Started(&w.out)
			}
		} else {
			w.out.Intervals = t.N
			w.out.Seconds = roundMs(time.Duration(t.N) * o.Interval)
			if o.Sampled != nil {
				o.Sampled(&w.out)
			}
		}
		done = total > 0 && t.N >= total
		return !done
	})
	if done || (o.Duration == 0 && errors.Is(ctx.Err(), context.Canceled)) {
		return &w.out, nil
	}
	return &w.out, ctx.Err()
}

// watcher turns the marks of a window into a series.
type watcher struct {
	names    []string
	out      Watched
	timeout  time.Duration
	interval time.Duration
	state    []memberState
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

func roundMs(d time.Duration) float64 { return d.Round(time.Millisecond).Seconds() }

// round takes one round of scrapes; its N is the interval it ends (0: the
// first scrape, which only sets the starting point).
func (w *watcher) round(tk Tick) {
	n := tk.N
	t := roundMs(time.Duration(n) * w.interval)
	for i, s := range tk.Mark.After {
		st, m := &w.state[i], &w.out.Members[i]
		if s.Err != nil {
			if n == 0 {
				w.out.Notes = append(w.out.Notes, fmt.Sprintf("%s did not answer the first scrape: %s", w.names[i], scrapeError(s.Err, w.timeout)))
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
			span = roundMs(tk.At.Sub(st.prevAt))
		}
		sig, deltas := promscrape.SignalsBetween(st.prev, cur, span)
		st.prev, st.prevAt = &cur, tk.At
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
		w.takeProcesses(tk.Window)
		w.takePeerRTTs(tk.Window.members)
		w.takeDefrags()
	}
}

// takeDefrags records each member's defragmentations from the first
// round to now.
func (w *watcher) takeDefrags() {
	w.out.Defrags = nil
	for i, st := range w.state {
		if d, ok := st.totals.Defrags(w.names[i]); ok {
			w.out.Defrags = append(w.out.Defrags, d)
		}
	}
}

// takeProcesses records each member process's figures from the first
// round to now.
func (w *watcher) takeProcesses(win *Window) {
	for _, p := range win.Processes() {
		for i, m := range win.members {
			if m.Name == p.Name {
				w.out.Members[i].Process = &p
			}
		}
	}
}

// takePeerRTTs records the members' round trips to each other from their
// first answers to their latest.
func (w *watcher) takePeerRTTs(members []cluster.Member) {
	var first, latest []promscrape.MemberScrape
	for i, st := range w.state {
		if st.latest == nil {
			continue
		}
		first = append(first, promscrape.MemberScrape{Member: members[i], Snap: st.first})
		latest = append(latest, promscrape.MemberScrape{Member: members[i], Snap: st.latest})
	}
	w.out.PeerRTTs = promscrape.PeerRTTsBetween(first, latest)
}

// learn records what member i's first scrape tells: its version and
// whether it leads (all that is known when the member list could not be
// read).
func (w *watcher) learn(i int, e promscrape.Etcd) {
	lm := &w.out.Learned.Members[i]
	lm.Version = e.Version
	if w.out.Learned.Version == "" {
		w.out.Learned.Version = e.Version
	}
	if v, ok := e.Values["is_leader"]; ok {
		lm.Leader, lm.LeaderKnown = v == 1, true
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
