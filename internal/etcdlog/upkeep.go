package etcdlog

import (
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
)

// Upkeep: each member's scheduled compactions and defragmentations, with
// the times of its latency spikes, so that spikes that recur with the
// compactions are named as theirs (etcd-io/etcd#11099, #19406).

// maxUpkeep bounds the compactions and spikes kept per member: a day of
// compactions every 5 minutes is 288.
const maxUpkeep = 4096

// compactionWindow is how long after a compaction a spike counts as its
// own: a compaction's deletes reach the disk with the next backend
// commits (--backend-batch-interval, 100ms by default), and the warnings
// of requests that waited for it come when those requests end.
const compactionWindow = 5 * time.Second

type upkeepAcc struct {
	ends, took, spikes []float64
	defrags            int64
	defragSum          float64
	defragMax          float64
}

// spikeClasses are the lines that say etcd was slow.
var spikeClasses = map[Class]bool{SlowApply: true, SlowReadOnlyRange: true, SlowReadOnlyTxn: true, SlowRequest: true,
	SlowFdatasync: true, HeartbeatLate: true, SlowTrace: true}

// upkeep records an event of member m for the compactions' view.
func (s *Summary) upkeep(m int, c Class, ev *Event) {
	if c != ev.Class || ev.Time.IsZero() || !(c == Compaction || c == Defrag || spikeClasses[c]) {
		return
	}
	if s.upkeepBy == nil {
		s.upkeepBy = map[int]*upkeepAcc{}
	}
	u := s.upkeepBy[m]
	if u == nil {
		u = &upkeepAcc{}
		s.upkeepBy[m] = u
	}
	t := float64(ev.Time.UnixNano()) / 1e9
	switch {
	case c == Compaction && len(u.ends) < maxUpkeep:
		u.ends, u.took = append(u.ends, t), append(u.took, ev.Took.Seconds())
	case c == Defrag:
		u.defrags++
		u.defragSum += ev.Took.Seconds()
		u.defragMax = max(u.defragMax, ev.Took.Seconds())
	case spikeClasses[c] && len(u.spikes) < maxUpkeep:
		u.spikes = append(u.spikes, t)
	}
}

// upkeepResult fills the logs section's compactions and defrags.
func (s *Summary) upkeepResult(l *result.Logs) {
	for m, ma := range s.members {
		u := s.upkeepBy[m]
		if u == nil {
			continue
		}
		if len(u.ends) > 0 {
			l.Compactions = append(l.Compactions, result.NewCompactions(ma.name, `the log's "finished scheduled compaction" lines`,
				u.ends, u.took, u.spikes, compactionWindow.Seconds(), 0))
		}
		if u.defrags > 0 {
			l.Defrags = append(l.Defrags, result.Defrags{Member: ma.name, Count: float64(u.defrags), Seconds: u.defragSum, Longest: u.defragMax,
				Source: `the log's defragmentation lines ("defragmented", "finished defragmenting directory")`})
		}
	}
}
