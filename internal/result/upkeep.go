package result

import "sort"

// etcd's metrics of its upkeep, the same from 3.4 to 3.7: the scheduled
// compactions' duration and their batches' pauses (milliseconds), and
// the defragmentations' duration (seconds).
const (
	CompactionMetric      = "etcd_debugging_mvcc_db_compaction_total_duration_milliseconds"
	CompactionPauseMetric = "etcd_debugging_mvcc_db_compaction_pause_duration_milliseconds"
	DefragMetric          = "etcd_disk_backend_defrag_duration_seconds"
)

// Compactions are the scheduled compactions of one member that a run saw
// (its log's "finished scheduled compaction" lines, or its
// etcd_debugging_mvcc_db_compaction_total_duration_milliseconds
// histogram), and how the latency spikes of the member line up with them.
type Compactions struct {
	Member string `json:"member"`
	Count  int64  `json:"count"`
	// Period is the median time between two compactions in seconds (0
	// with fewer than two); Regular says whether most intervals are
	// within a fifth of it (a schedule: kube-apiserver's
	// --etcd-compaction-interval, etcd's --auto-compaction-retention),
	// give or take one evaluation step of a history, which places each
	// end at the point after it; a step of half the period or more cannot
	// tell a schedule.
	Period  float64 `json:"period,omitempty"`
	Regular bool    `json:"regular,omitempty"`
	// TookP50 and TookMax are the compactions' median and longest
	// duration in seconds (0 when the source does not say).
	TookP50 float64 `json:"took_p50,omitempty"`
	TookMax float64 `json:"took_max,omitempty"`
	// Spikes counts the member's latency spikes (slow-request, slow-apply,
	// slow fdatasync and late heartbeat lines in a log; evaluation points
	// past a latency limit in a history); Near those within Window
	// seconds of a compaction.
	Spikes int64   `json:"spikes"`
	Near   int64   `json:"near"`
	Window float64 `json:"window"`
	// Source names what the figures were read from.
	Source string `json:"source"`
	// Ends and Took are the compactions' ends (unix seconds) and
	// durations (seconds, 0 unknown), where a history's evaluation points
	// place them (prom check).
	Ends []float64 `json:"ends,omitempty"`
	Took []float64 `json:"took,omitempty"`
}

// Defrags are the defragmentations of one member that a run saw.
type Defrags struct {
	Member string  `json:"member"`
	Count  float64 `json:"count"`
	// Seconds is their total duration.
	Seconds float64 `json:"seconds"`
	// Longest is the longest one in seconds: a log's "took", or from
	// etcd_disk_backend_defrag_duration_seconds the upper bound of the
	// bucket it fell in (etcd's buckets double from 0.1 s to 409.6 s).
	Longest float64 `json:"longest"`
	// Bucketed says Longest is a bucket's upper bound.
	Bucketed bool   `json:"bucketed,omitempty"`
	Source   string `json:"source"`
}

// DefragLowestBucket is the upper bound of the lowest bucket of
// etcd_disk_backend_defrag_duration_seconds (its buckets double from
// 0.1 s): a defragmentation in it took anything up to that.
const DefragLowestBucket = 0.1

// LongestBounds are the least and the most the longest defragmentation
// can have taken: Longest itself when it is a measured duration; from the
// histogram, the bucket it fell in (from 0 for the lowest), narrowed by
// the total (none took longer than all together, the longest at least
// their mean), and the total itself when there was one.
func (d Defrags) LongestBounds() (lo, hi float64) {
	if !d.Bucketed {
		return d.Longest, d.Longest
	}
	lo, hi = d.Longest/2, d.Longest
	if d.Longest <= DefragLowestBucket {
		lo = 0
	}
	if d.Count > 0 && d.Seconds > 0 {
		lo, hi = max(lo, d.Seconds/d.Count), min(hi, d.Seconds)
		if d.Count == 1 {
			lo, hi = d.Seconds, d.Seconds
		}
	}
	return min(lo, hi), hi
}

// NewCompactions summarises a member's compactions: ends are the times
// they finished (seconds since any origin, any order), each known to
// within resolution seconds (0 for a log's timestamps; a history's step,
// which places an end at the point after it), took their durations in
// seconds (nil when unknown), spikes the times of the member's latency
// spikes. A spike is near a compaction when it falls from the
// compaction's start (its end less its duration) to window seconds after
// its end.
func NewCompactions(member, source string, ends, took, spikes []float64, window, resolution float64) Compactions {
	c := Compactions{Member: member, Count: int64(len(ends)), Spikes: int64(len(spikes)), Window: window, Source: source}
	es := append([]float64(nil), ends...)
	sortFloats(es)
	if len(es) >= 2 {
		gaps := make([]float64, 0, len(es)-1)
		for i := 1; i < len(es); i++ {
			gaps = append(gaps, es[i]-es[i-1])
		}
		sortFloats(gaps)
		c.Period = gaps[len(gaps)/2]
		within := 0
		for _, g := range gaps {
			// the interval lies within resolution of g
			if g+resolution >= 0.8*c.Period && g-resolution <= 1.2*c.Period {
				within++
			}
		}
		c.Regular = c.Period > 0 && resolution < c.Period/2 && within*4 >= len(gaps)*3
	}
	if len(took) > 0 {
		ts := append([]float64(nil), took...)
		sortFloats(ts)
		c.TookP50, c.TookMax = ts[len(ts)/2], ts[len(ts)-1]
	}
	for _, s := range spikes {
		for i, e := range ends {
			d := 0.0
			if i < len(took) {
				d = took[i]
			}
			if s >= e-d-1 && s <= e+window {
				c.Near++
				break
			}
		}
	}
	return c
}

func sortFloats(v []float64) { sort.Float64s(v) }

// ExpectedDefrag is the stall a defragmentation of a database of DBSize
// bytes in use would cause on the storage: etcd copies the live keyspace
// into a new file and answers nothing meanwhile.
type ExpectedDefrag struct {
	// Member is the member it is about ("" for the storage under test).
	Member string `json:"member,omitempty"`
	// DBSize is the database size in use the stall is expected for, and
	// DBSizeFrom where it comes from (--db-size, the member's
	// etcd_mvcc_db_total_size_in_use_in_bytes, or etcd's default quota).
	DBSize     float64 `json:"db_size"`
	DBSizeFrom string  `json:"db_size_from"`
	// Rate is the live data a defragmentation copies per second on this
	// storage (bytes/s), RateFrom how it was measured; 0 when unknown.
	Rate     float64 `json:"rate,omitempty"`
	RateFrom string  `json:"rate_from,omitempty"`
	// Seconds is the stall to expect (DBSize / Rate); 0 when it cannot
	// be told, and Missing then says what it would need.
	Seconds float64 `json:"seconds,omitempty"`
	Missing string  `json:"missing,omitempty"`
	// Rehearsal is the defragmentation rehearsed on the storage that Rate
	// comes from: a database of Bytes in use, Keys values of Value bytes,
	// copied in Seconds.
	Rehearsal *DefragRehearsal `json:"rehearsal,omitempty"`
	// Past are the member's own defragmentations since it started
	// (etcd_disk_backend_defrag_duration_seconds), when Rate comes from
	// them.
	Past *Defrags `json:"past,omitempty"`
}

// DefragRehearsal is a defragmentation done in little on the storage.
type DefragRehearsal struct {
	Bytes   int64   `json:"bytes"`
	Keys    int     `json:"keys"`
	Value   int     `json:"value"`
	Seconds float64 `json:"seconds"`
}

// Upkeep is a member's compactions and defragmentations over a span, from
// its histograms: how many ended in it and how long they took in all.
type Upkeep struct {
	// Compactions and CompactionSeconds are the scheduled compactions
	// (etcd_debugging_mvcc_db_compaction_total_duration_milliseconds);
	// CompactionPauseSeconds the pauses of their batches, in which the
	// member's writes waited (..._pause_duration_milliseconds).
	Compactions            float64 `json:"compactions,omitempty"`
	CompactionSeconds      float64 `json:"compaction_seconds,omitempty"`
	CompactionPauseSeconds float64 `json:"compaction_pause_seconds,omitempty"`
	// Defrags and DefragSeconds are the defragmentations
	// (etcd_disk_backend_defrag_duration_seconds).
	Defrags       float64 `json:"defrags,omitempty"`
	DefragSeconds float64 `json:"defrag_seconds,omitempty"`
}

// UpkeepSeen returns the scheduled compactions and defragmentations the
// Result saw, per member, from every source it holds (logs, metrics,
// prom check), in that order.
func (r *Result) UpkeepSeen() ([]Compactions, []Defrags) {
	var cs []Compactions
	var ds []Defrags
	if r.Logs != nil {
		cs, ds = append(cs, r.Logs.Compactions...), append(ds, r.Logs.Defrags...)
	}
	if r.Metrics != nil {
		cs, ds = append(cs, r.Metrics.Compactions...), append(ds, r.Metrics.Defrags...)
	}
	if r.Prom != nil {
		cs, ds = append(cs, r.Prom.Compactions...), append(ds, r.Prom.Defrags...)
	}
	return cs, ds
}
