package promscrape

import (
	"sort"

	dto "github.com/prometheus/client_model/go"

	"github.com/etcdperf/etcdperf/internal/result"
)

// EtcdNames holds the metric names of etcd's health signals. Where etcd
// renamed a metric across versions the current name comes first, the
// older after it: 3.4 exposes the database size both as
// etcd_mvcc_db_total_size_in_bytes and as the older
// etcd_debugging_mvcc_db_total_size_in_bytes (gone in 3.5), and counts puts
// only as etcd_debugging_mvcc_put_total (etcd_mvcc_put_total from 3.5 on).
var EtcdNames = struct {
	// Histograms, in seconds.
	WALFsync, BackendCommit, SnapshotSave, PeerRTT, ApplyDuration, Defrag []string
	// Histograms in milliseconds: the scheduled compactions' whole
	// duration and their pauses (3.4 to 3.7 alike).
	Compaction, CompactionPause []string
	// Counters.
	LeaderChanges, ProposalsCommitted, ProposalsApplied, ProposalsFailed, Puts,
	SlowApplies, SlowReadIndexes, HeartbeatFailures, PeerSent, PeerReceived, GRPCHandled, WALBytes []string
	// Gauges.
	HasLeader, IsLeader, ProposalsPending, DBSize, DBSizeInUse, Keys, Quota, RSS []string
}{
	WALFsync:           []string{"etcd_disk_wal_fsync_duration_seconds"},
	BackendCommit:      []string{"etcd_disk_backend_commit_duration_seconds"},
	SnapshotSave:       []string{"etcd_debugging_snap_save_total_duration_seconds"},
	PeerRTT:            []string{"etcd_network_peer_round_trip_time_seconds"},
	ApplyDuration:      []string{"etcd_server_apply_duration_seconds"},
	Defrag:             []string{result.DefragMetric},
	Compaction:         []string{result.CompactionMetric},
	CompactionPause:    []string{result.CompactionPauseMetric},
	LeaderChanges:      []string{"etcd_server_leader_changes_seen_total"},
	ProposalsCommitted: []string{"etcd_server_proposals_committed_total"},
	ProposalsApplied:   []string{"etcd_server_proposals_applied_total"},
	ProposalsFailed:    []string{"etcd_server_proposals_failed_total"},
	Puts:               []string{"etcd_mvcc_put_total", "etcd_debugging_mvcc_put_total"},
	SlowApplies:        []string{"etcd_server_slow_apply_total"},
	SlowReadIndexes:    []string{"etcd_server_slow_read_indexes_total"},
	HeartbeatFailures:  []string{"etcd_server_heartbeat_send_failures_total"},
	PeerSent:           []string{"etcd_network_peer_sent_bytes_total"},
	PeerReceived:       []string{"etcd_network_peer_received_bytes_total"},
	GRPCHandled:        []string{"grpc_server_handled_total"},
	WALBytes:           []string{"etcd_disk_wal_write_bytes_total"},
	HasLeader:          []string{"etcd_server_has_leader"},
	IsLeader:           []string{"etcd_server_is_leader"},
	ProposalsPending:   []string{"etcd_server_proposals_pending"},
	DBSize:             []string{"etcd_mvcc_db_total_size_in_bytes", "etcd_debugging_mvcc_db_total_size_in_bytes"},
	DBSizeInUse:        []string{"etcd_mvcc_db_total_size_in_use_in_bytes"},
	Keys:               []string{"etcd_debugging_mvcc_keys_total"},
	Quota:              []string{"etcd_server_quota_backend_bytes"},
	RSS:                []string{"process_resident_memory_bytes"},
}

// Etcd is what one scrape of an etcd member says about its health, read
// the same way whatever etcd's version (3.4 to 3.7).
type Etcd struct {
	// Version is the server_version label of etcd_server_version ("" when
	// the server does not expose it).
	Version string
	// Histograms by signal: wal_fsync, backend_commit, snapshot_save,
	// peer_rtt, apply_duration, defrag; compaction and compaction_pause
	// (milliseconds). A signal the server does not expose is absent.
	Histograms map[string]Histogram
	// Values by signal (counters and gauges): leader_changes, has_leader,
	// is_leader, proposals_committed, proposals_applied, proposals_pending,
	// proposals_failed, puts, slow_applies, slow_read_indexes,
	// heartbeat_failures, failed_requests (gRPC codes other than OK and
	// Canceled), peer_sent, peer_received, db_size, db_size_in_use, keys,
	// quota, rss.
	Values map[string]float64
	// Source names the metric each signal was read from.
	Source map[string]string
}

type etcdSignal struct {
	id    string
	names []string
	keep  func(*dto.Metric) bool // nil keeps every series
}

func etcdHistograms() []etcdSignal {
	n := EtcdNames
	return []etcdSignal{
		{id: "wal_fsync", names: n.WALFsync},
		{id: "backend_commit", names: n.BackendCommit},
		{id: "snapshot_save", names: n.SnapshotSave},
		{id: "peer_rtt", names: n.PeerRTT},
		{id: "apply_duration", names: n.ApplyDuration},
		{id: sigDefrag, names: n.Defrag},
		{id: sigCompaction, names: n.Compaction},
		{id: sigCompactionPause, names: n.CompactionPause},
	}
}

func etcdValues() []etcdSignal {
	n := EtcdNames
	return []etcdSignal{
		{id: "leader_changes", names: n.LeaderChanges},
		{id: "has_leader", names: n.HasLeader},
		{id: "is_leader", names: n.IsLeader},
		{id: "proposals_committed", names: n.ProposalsCommitted},
		{id: "proposals_applied", names: n.ProposalsApplied},
		{id: "proposals_pending", names: n.ProposalsPending},
		{id: "proposals_failed", names: n.ProposalsFailed},
		{id: "puts", names: n.Puts},
		{id: "slow_applies", names: n.SlowApplies},
		{id: "slow_read_indexes", names: n.SlowReadIndexes},
		{id: "heartbeat_failures", names: n.HeartbeatFailures},
		{id: "failed_requests", names: n.GRPCHandled, keep: failedGRPC},
		{id: "peer_sent", names: n.PeerSent},
		{id: "peer_received", names: n.PeerReceived},
		{id: "wal_bytes", names: n.WALBytes},
		{id: "db_size", names: n.DBSize},
		{id: "db_size_in_use", names: n.DBSizeInUse},
		{id: "keys", names: n.Keys},
		{id: "quota", names: n.Quota},
		{id: "rss", names: n.RSS},
	}
}

// failedGRPC keeps the gRPC series whose code is neither OK nor Canceled
// (a client that cancels, e.g. closing a watch, is no failure of etcd).
func failedGRPC(m *dto.Metric) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == "grpc_code" {
			return l.GetValue() != "OK" && l.GetValue() != "Canceled"
		}
	}
	return false
}

// EtcdSignals reads etcd's health signals from a scrape, trying each
// signal's names newest first.
func (s Snapshot) EtcdSignals() Etcd {
	e := Etcd{Histograms: map[string]Histogram{}, Values: map[string]float64{}, Source: map[string]string{}}
	for _, sig := range etcdHistograms() {
		for _, name := range sig.names {
			if h, ok := s.Histogram(name, nil); ok {
				e.Histograms[sig.id] = h
				e.Source[sig.id] = name
				break
			}
		}
	}
	for _, sig := range etcdValues() {
		for _, name := range sig.names {
			if v, ok := s.sum(name, sig.keep); ok {
				e.Values[sig.id] = v
				e.Source[sig.id] = name
				break
			}
		}
	}
	if fam, ok := s["etcd_server_version"]; ok {
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "server_version" {
					e.Version = l.GetValue()
				}
			}
		}
	}
	return e
}

// sum adds the series of name that keep keeps. A family that is present
// with no series counts as 0 when it is a counter whose series are made on
// first use (e.g. failed requests without a failure): it reports found
// when the family exists.
func (s Snapshot) sum(name string, keep func(*dto.Metric) bool) (float64, bool) {
	v, _, found := s.total(name, keep)
	return v, found
}

// Signals lists the signal IDs present in e, sorted.
func (e Etcd) Signals() []string {
	var ids []string
	for id := range e.Histograms {
		ids = append(ids, id)
	}
	for id := range e.Values {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
