package result

import "time"

// Metrics is what `etcdperf metrics` saw of a running cluster: every
// member's /metrics scraped at each interval, each member's health signals
// per interval (histogram and counter deltas, gauges) and over the whole
// run, and when a limit was passed.
type Metrics struct {
	// Start is the time of the first scrape, from which the samples' T
	// counts.
	Start time.Time `json:"start"`
	// Interval is the time between two scrapes, in seconds.
	Interval float64 `json:"interval"`
	// Duration is the length of run asked for, in seconds (0: until
	// interrupted).
	Duration float64 `json:"duration"`
	// Seconds is the time the run covered, from the first scrape to the
	// last.
	Seconds float64 `json:"seconds"`
	// Intervals is how many intervals were scraped after the first scrape.
	Intervals int             `json:"intervals"`
	Members   []MetricsMember `json:"members"`
	// PeerRTTs are the members' round trips to each other.
	PeerRTTs []PeerRTT `json:"peer_rtts,omitempty"`
	// Breaches holds every member and criterion whose limit (or warning
	// level) was passed in some interval, with the windows of consecutive
	// such intervals. Instance is the member's name; each point judges the
	// interval before it.
	Breaches []PromBreach `json:"breaches,omitempty"`
	Notes    []string     `json:"notes,omitempty"`
	// Compactions and Defrags are each member's scheduled compactions and
	// defragmentations over the run, from its histograms.
	Compactions []Compactions `json:"compactions,omitempty"`
	Defrags     []Defrags     `json:"defrags,omitempty"`
}

// MetricsMember is one member's view over the run.
type MetricsMember struct {
	Name string `json:"name"`
	// ID is the member ID in hexadecimal, as etcdctl prints it.
	ID         string `json:"id,omitempty"`
	MetricsURL string `json:"metrics_url"`
	Version    string `json:"version,omitempty"`
	// Leader is true when the member was the leader when the run started.
	Leader bool `json:"leader,omitempty"`
	// Unreachable counts the intervals in which the member did not answer
	// its scrape.
	Unreachable int `json:"unreachable"`
	// Overall holds the signals over the whole run: the deltas from the
	// member's first answer to its last, and the gauges of its last. It is
	// absent when the member never answered.
	Overall *MetricsSignals `json:"overall,omitempty"`
	// Series holds one sample per interval.
	Series []MetricsSample `json:"series"`
	// Process is what this host's kernel says of the member's process over
	// the run, when it runs on this host.
	Process *MemberProcess `json:"process,omitempty"`
}

// MetricsSample is one member over one interval.
type MetricsSample struct {
	// T is the end of the interval, in seconds since Start.
	T float64 `json:"t"`
	// Error says why the member did not answer; the signals are absent
	// then.
	Error string `json:"error,omitempty"`
	*MetricsSignals
}

// Up reports whether the member answered the sample's scrape.
func (s MetricsSample) Up() bool { return s.MetricsSignals != nil }

// MetricsSignals are etcd's health signals of one member over a span:
// latencies and counters are what happened in the span (deltas between two
// scrapes), gauges are their value at its end.
type MetricsSignals struct {
	// Seconds is the span the deltas cover: the interval, longer after
	// scrapes the member missed, and 0 for the member's first answer, of
	// which only the gauges are known.
	Seconds float64 `json:"seconds"`
	// WALFsync, BackendCommit and PeerRTT are the deltas of etcd's
	// histograms (etcd_disk_wal_fsync_duration_seconds,
	// etcd_disk_backend_commit_duration_seconds,
	// etcd_network_peer_round_trip_time_seconds): bucketed quantiles, with
	// the lowest bucket as their Resolution. A count of 0 means nothing was
	// observed; an absent one that the member does not expose it (a member
	// without peers has no round-trip times).
	WALFsync      *Latency `json:"wal_fsync,omitempty"`
	BackendCommit *Latency `json:"backend_commit,omitempty"`
	PeerRTT       *Latency `json:"peer_rtt,omitempty"`
	// Counters (increases over the span).
	LeaderChanges      float64 `json:"leader_changes"`
	ProposalsCommitted float64 `json:"proposals_committed"`
	ProposalsFailed    float64 `json:"proposals_failed"`
	// SlowApplies counts applies slower than etcd's
	// --warning-apply-duration (etcd_server_slow_apply_total).
	SlowApplies float64 `json:"slow_applies"`
	// SlowReadIndexes counts read indexes that timed out or were not in
	// sync with the leader's (etcd_server_slow_read_indexes_total).
	SlowReadIndexes float64 `json:"slow_read_indexes"`
	// HeartbeatFailures counts heartbeats the leader failed to send
	// (etcd_server_heartbeat_send_failures_total).
	HeartbeatFailures float64 `json:"heartbeat_failures"`
	// WALBytes counts the bytes the member wrote to its WAL
	// (etcd_disk_wal_write_bytes_total, etcd 3.4.13 and later): over
	// ProposalsCommitted, the mean size of a raft entry.
	WALBytes float64 `json:"wal_bytes,omitempty"`
	// Gauges at the end of the span.
	HasLeader        float64 `json:"has_leader"`
	IsLeader         float64 `json:"is_leader"`
	ProposalsPending float64 `json:"proposals_pending"`
	DBSize           float64 `json:"db_size"`
	DBSizeInUse      float64 `json:"db_size_in_use"`
	// Quota is etcd's --quota-backend-bytes.
	Quota float64 `json:"quota,omitempty"`
	// RSS is the member's resident memory.
	RSS float64 `json:"rss"`
	// Missing lists the signals the member does not expose (older etcd
	// versions), whose values above are zero.
	Missing []string `json:"missing,omitempty"`
	// Upkeep is what compacted and defragmented the member in the span;
	// absent when nothing did.
	Upkeep *Upkeep `json:"upkeep,omitempty"`
}

// WorstP99 returns, of the members' latencies over the run that get picks
// (e.g. their WAL fsync), the one with the highest p99; nil when no member
// observed any.
func (m *Metrics) WorstP99(get func(*MetricsSignals) *Latency) *Latency {
	var worst *Latency
	for _, mm := range m.Members {
		if mm.Overall == nil {
			continue
		}
		if l := get(mm.Overall); l != nil && l.Count > 0 && (worst == nil || l.P99 > worst.P99) {
			worst = l
		}
	}
	return worst
}
