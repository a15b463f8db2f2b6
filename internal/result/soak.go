package result

import "github.com/etcdperf/etcdperf/internal/units"

// SoakRateCapacity is Soak.RateFrom of a soak that holds the capacity
// sweep's answer.
const SoakRateCapacity = "capacity"

// Soak is a rate held for a while (--soak): its series every interval and
// its steady state, the figure that held over the last part, with the drop
// when the storage gave less after a while (burst credits or a write cache
// that ran out).
type Soak struct {
	// Rate is the offered rate held (puts/s), RateFrom where it came from:
	// "capacity" (the sweep's answer) or "--soak-rate".
	Rate     float64 `json:"rate"`
	RateFrom string  `json:"rate_from"`
	Clients  int     `json:"clients"`
	// ValueSize and KeySize are the bytes of each put (check perf's).
	ValueSize int `json:"value_size"`
	KeySize   int `json:"key_size"`
	// KeySpace is the keys its puts overwrote, written before it, and
	// CompactionSeconds how often it compacted etcd's history (the
	// capacity sweep's workload, on an etcd of its own); 0: a new key each
	// and no compaction (a cluster's endpoints).
	KeySpace          int     `json:"key_space,omitempty"`
	CompactionSeconds float64 `json:"compaction_seconds,omitempty"`
	// Seconds is how long the rate was held; IntervalSeconds the span of
	// each sample of the series.
	Seconds         float64      `json:"seconds"`
	IntervalSeconds float64      `json:"interval_seconds"`
	Series          []SoakSample `json:"series"`
	// LastFrom is when the last part (the steady state judged) began,
	// in seconds into the soak.
	LastFrom float64 `json:"last_from"`
	// SustainedPutsPerS is the rate that held over the last part, or, when
	// it broke its limits there, what the writes that remained carry
	// (SustainedFrom says which: "achieved", "device_iops", or
	// "wal_fsyncs" when only etcd's own fsyncs fell).
	SustainedPutsPerS float64 `json:"sustained_puts_per_s"`
	SustainedFrom     string  `json:"sustained_from,omitempty"`
	// LastAchieved, LastWALFsyncP99, LastBackendCommitP99 and
	// LastRequestP99 are the last part's figures as judged: its puts/s,
	// and the medians of its intervals' p99s (seconds; LastWALFsyncBound:
	// in etcd's lowest bucket, <= 1ms).
	LastAchieved         float64 `json:"last_achieved,omitempty"`
	LastWALFsyncP99      float64 `json:"last_wal_fsync_p99,omitempty"`
	LastWALFsyncBound    bool    `json:"last_wal_fsync_bound,omitempty"`
	LastBackendCommitP99 float64 `json:"last_backend_commit_p99,omitempty"`
	LastRequestP99       float64 `json:"last_request_p99,omitempty"`
	// Broke are the criteria the last part broke (empty: it held).
	Broke []string `json:"broke,omitempty"`
	// Drop is the storage giving less after a while; nil when it did not.
	Drop *SoakDrop `json:"drop,omitempty"`
	// Answer says in one line what held, and the drop.
	Answer string `json:"answer"`
}

// SoakSample is one interval of a soak. p99s are etcd's own over the
// interval (seconds; a *Bound is true when it fell in etcd's lowest
// bucket, <= 1ms); the device's figures are its per-second samples in the
// interval, summed over their time.
type SoakSample struct {
	// T is the interval's end in seconds into the soak.
	T       float64 `json:"t"`
	Seconds float64 `json:"seconds"`
	// Achieved is the puts/s that succeeded; Errors the requests that
	// failed.
	Achieved float64 `json:"achieved"`
	Errors   int64   `json:"errors,omitempty"`
	// RequestP99 is the p99 latency of the puts that succeeded in it,
	// from their intended send (the load's one-second samples within
	// the interval).
	RequestP99         float64 `json:"request_p99,omitempty"`
	WALFsyncP99        float64 `json:"wal_fsync_p99"`
	WALFsyncBound      bool    `json:"wal_fsync_bound,omitempty"`
	BackendCommitP99   float64 `json:"backend_commit_p99"`
	BackendCommitBound bool    `json:"backend_commit_bound,omitempty"`
	// WALFsyncs is etcd's WAL fsyncs per second (summed over members).
	WALFsyncs float64 `json:"wal_fsyncs_per_s"`
	// DeviceIOPS, DeviceUtil (0-1), DeviceAwait (seconds) and
	// DeviceWriteBytes (bytes/s) are the device's writes from
	// /proc/diskstats, when the device is known.
	DeviceIOPS       float64 `json:"device_iops,omitempty"`
	DeviceUtil       float64 `json:"device_util,omitempty"`
	DeviceAwait      float64 `json:"device_await,omitempty"`
	DeviceWriteBytes float64 `json:"device_write_bytes,omitempty"`
}

// SoakDrop is a fall of what the storage gave during a soak, from the
// intervals before it to the last part.
type SoakDrop struct {
	// After is when it fell, in seconds into the soak (the end of the
	// last interval at the earlier level).
	After float64 `json:"after"`
	// Fell names what fell or rose: "device_iops", "device_write_bytes",
	// "achieved", "wal_fsyncs", "wal_fsync_p99".
	Fell []string `json:"fell"`
	// The figures before (the intervals up to After) and after (the last
	// part): device write IOPS and bytes/s, the achieved rate, and the
	// WAL fsync p99 (the median of the intervals' p99s, seconds).
	IOPSBefore        float64 `json:"iops_before,omitempty"`
	IOPSAfter         float64 `json:"iops_after,omitempty"`
	WriteBytesBefore  float64 `json:"write_bytes_before,omitempty"`
	WriteBytesAfter   float64 `json:"write_bytes_after,omitempty"`
	AchievedBefore    float64 `json:"achieved_before"`
	AchievedAfter     float64 `json:"achieved_after"`
	WALFsyncP99Before float64 `json:"wal_fsync_p99_before"`
	WALFsyncP99After  float64 `json:"wal_fsync_p99_after"`
	// WALFsyncsBefore and WALFsyncsAfter are etcd's WAL fsyncs per
	// second (its own writes, which no neighbour of the device shares).
	WALFsyncsBefore float64 `json:"wal_fsyncs_before,omitempty"`
	WALFsyncsAfter  float64 `json:"wal_fsyncs_after,omitempty"`
}

// SustainedWords says the sustained figure: "~N puts/s", or "under N
// puts/s" (the rate held) when the last part broke a limit with no drop
// of the writes to scale it by.
func (s *Soak) SustainedWords() string {
	if len(s.Broke) > 0 && s.SustainedFrom == "achieved" {
		return "under " + units.Thousands(s.Rate) + " puts/s"
	}
	return "~" + units.Thousands(s.SustainedPutsPerS) + " puts/s"
}
