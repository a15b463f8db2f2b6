package promscrape

import (
	"math"

	"github.com/etcdperf/etcdperf/internal/result"
)

// The signals read from the histograms, by EtcdSignals' IDs.
const (
	sigWALFsync      = "wal_fsync"
	sigBackendCommit = "backend_commit"
	sigPeerRTT       = "peer_rtt"
	// etcd's upkeep: defragmentations (seconds), scheduled compactions
	// and their pauses (milliseconds).
	sigDefrag          = "defrag"
	sigCompaction      = "compaction"
	sigCompactionPause = "compaction_pause"
)

// SignalsBetween returns a member's signals between its previous answer
// (nil for its first) and the current one, span seconds later, with the
// histogram deltas by signal.
func SignalsBetween(prev *Etcd, cur Etcd, span float64) (*result.MetricsSignals, map[string]Histogram) {
	s := &result.MetricsSignals{Seconds: span}
	deltas := map[string]Histogram{}
	if prev != nil {
		for _, id := range []string{sigWALFsync, sigBackendCommit, sigPeerRTT, sigDefrag, sigCompaction, sigCompactionPause} {
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
		if _, ok := cur.Values["wal_bytes"]; ok {
			s.WALBytes = delta("wal_bytes")
		}
	}
	s.WALFsync, s.BackendCommit, s.PeerRTT = latencyOf(deltas, sigWALFsync), latencyOf(deltas, sigBackendCommit), latencyOf(deltas, sigPeerRTT)
	s.Upkeep = upkeepOf(deltas)
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

func latencyOf(hs map[string]Histogram, id string) *result.Latency {
	h, ok := hs[id]
	if !ok {
		return nil
	}
	l := h.Latency()
	return &l
}

// Totals sums a member's intervals: its histograms and counters over a
// run, correct across restarts (counter resets).
type Totals struct {
	hists    map[string]Histogram
	counters result.MetricsSignals
	spanned  float64
}

// Add counts one interval (SignalsBetween's signals and deltas).
func (st *Totals) Add(s *result.MetricsSignals, deltas map[string]Histogram) {
	if st.hists == nil {
		st.hists = map[string]Histogram{}
	}
	for id, h := range deltas {
		st.hists[id] = AddHist(st.hists[id], h)
	}
	c := &st.counters
	c.LeaderChanges += s.LeaderChanges
	c.ProposalsCommitted += s.ProposalsCommitted
	c.ProposalsFailed += s.ProposalsFailed
	c.SlowApplies += s.SlowApplies
	c.SlowReadIndexes += s.SlowReadIndexes
	c.HeartbeatFailures += s.HeartbeatFailures
	c.WALBytes += s.WALBytes
	st.spanned += s.Seconds
}

// Overall is the member over the run: the sums of its intervals and the
// gauges of its last answer, whose signals are last.
func (st *Totals) Overall(last *result.MetricsSignals) *result.MetricsSignals {
	o := *last
	c := st.counters
	o.Seconds = math.Round(st.spanned*1000) / 1000
	o.LeaderChanges, o.ProposalsCommitted, o.ProposalsFailed = c.LeaderChanges, c.ProposalsCommitted, c.ProposalsFailed
	o.SlowApplies, o.SlowReadIndexes, o.HeartbeatFailures, o.WALBytes = c.SlowApplies, c.SlowReadIndexes, c.HeartbeatFailures, c.WALBytes
	o.WALFsync, o.BackendCommit, o.PeerRTT = latencyOf(st.hists, sigWALFsync), latencyOf(st.hists, sigBackendCommit), latencyOf(st.hists, sigPeerRTT)
	o.Upkeep = upkeepOf(st.hists)
	return &o
}

// Defrags are the member's defragmentations over the run, from its
// etcd_disk_backend_defrag_duration_seconds; false when it did none.
func (st *Totals) Defrags(member string) (result.Defrags, bool) {
	h := st.hists[sigDefrag]
	if h.Count <= 0 {
		return result.Defrags{}, false
	}
	return DefragsOf(member, EtcdNames.Defrag[0], h), true
}

// upkeepOf is the compactions and defragmentations in a span's
// histogram deltas; nil when there were none.
func upkeepOf(hs map[string]Histogram) *result.Upkeep {
	c, p, d := hs[sigCompaction], hs[sigCompactionPause], hs[sigDefrag]
	if c.Count <= 0 && d.Count <= 0 {
		return nil
	}
	return &result.Upkeep{Compactions: c.Count, CompactionSeconds: c.Sum / 1000, CompactionPauseSeconds: p.Sum / 1000, Defrags: d.Count, DefragSeconds: d.Sum}
}

// DefragsOf summarises a defragmentation histogram of a member: their
// count, total, and the upper bound of the bucket the longest fell in
// (etcd's buckets double from 0.1s to 409.6s; past the top one, the top
// bound).
func DefragsOf(member, source string, h Histogram) result.Defrags {
	d := result.Defrags{Member: member, Count: h.Count, Seconds: h.Sum, Bucketed: true, Source: source}
	for _, b := range h.Buckets {
		d.Longest = b.UpperBound
		if b.Count >= h.Count {
			break
		}
	}
	return d
}
