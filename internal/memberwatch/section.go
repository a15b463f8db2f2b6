package memberwatch

import (
	"slices"

	"github.com/etcdperf/etcdperf/internal/result"
)

// Complete completes the target, env and metrics section with what
// the members' first answers told: a version where the member list named
// none, and who leads.
func (l Learned) Complete(res *result.Result) {
	if res.Target.Version == "" && l.Version != "" {
		res.Target.Version, res.Env.EtcdVersion = l.Version, l.Version
	}
	for i, lm := range l.Members {
		tm, mm := &res.Target.Members[i], &res.Metrics.Members[i]
		if tm.Version == "" && lm.Version != "" {
			tm.Version = lm.Version
		}
		if mm.Version == "" && lm.Version != "" {
			mm.Version = lm.Version
		}
		if lm.LeaderKnown {
			tm.Leader, mm.Leader = lm.Leader, lm.Leader
		}
	}
}

// PutIn puts what the series measured so far in the metrics section,
// after the notes the section had before the series began.
func (w *Watched) PutIn(sec *result.Metrics, notes []string) {
	sec.Start, sec.Intervals, sec.Seconds = w.Start, w.Intervals, w.Seconds
	for i, m := range w.Members {
		mm := &sec.Members[i]
		mm.Unreachable, mm.Overall, mm.Series, mm.Process = m.Unreachable, m.Overall, m.Series, m.Process
	}
	sec.PeerRTTs, sec.Defrags = w.PeerRTTs, w.Defrags
	sec.Notes = slices.Concat(notes, w.Notes)
}
