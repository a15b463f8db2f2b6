package promscrape

import (
	"sort"

	"github.com/etcdperf/etcdperf/internal/result"
)

// PeerRTTName is etcd's histogram of the round trips to each peer, by the
// peer's ID in hexadecimal (label To).
const PeerRTTName = "etcd_network_peer_round_trip_time_seconds"

// HistogramsBy returns the series of histogram name, one per value of
// label.
func (s Snapshot) HistogramsBy(name, label string) map[string]Histogram {
	fam, ok := s[name]
	if !ok {
		return nil
	}
	out := map[string]Histogram{}
	for _, m := range fam.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label {
				if h, ok := s.Histogram(name, Labels{label: l.GetValue()}); ok {
					out[l.GetValue()] = h
				}
			}
		}
	}
	return out
}

// PeerRTTs returns member from's round trips to each peer from two scrapes
// of its metrics (before may be nil): over the span between them when the
// member recorded any then, else everything it recorded since it started
// (etcd records one about every 30s per peer). names maps peer IDs (as
// the To label writes them) to names; an unknown ID keeps its ID.
func PeerRTTs(from string, before, after Snapshot, names map[string]string) []result.PeerRTT {
	var out []result.PeerRTT
	var prev map[string]Histogram
	if before != nil {
		prev = before.HistogramsBy(PeerRTTName, "To")
	}
	for id, h := range after.HistogramsBy(PeerRTTName, "To") {
		scope := result.ScopeStart
		if p, ok := prev[id]; ok {
			if d := h.Sub(p); d.Count > 0 {
				h, scope = d, result.ScopeRun
			}
		}
		if h.Count == 0 {
			continue
		}
		to := id
		if n, ok := names[id]; ok {
			to = n
		}
		rtt := result.PeerRTT{From: from, To: to, Scope: scope, Count: h.Count, Mean: h.Sum / h.Count}
		for _, b := range h.Buckets {
			if b.Count >= h.Count {
				rtt.Max = b.UpperBound
				break
			}
		}
		out = append(out, rtt)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].To < out[j].To })
	return out
}
