package result

// Scale is the outcome of `etcdperf scale`: etcd's figures after each step
// of growing Kubernetes-shaped data.
type Scale struct {
	// Kinds are the objects the run grows to, with their key layout and
	// value sizes.
	Kinds []ScaleKind `json:"kinds"`
	// Steps holds one entry per completed step, in order.
	Steps []ScaleStep `json:"steps"`
	// Planned is the number of steps asked for; fewer were made when the
	// run stopped early.
	Planned int `json:"planned_steps"`
	// Stopped says why the run stopped before its last step.
	Stopped string `json:"stopped,omitempty"`
	// Seconds is the wall time of the steps.
	Seconds float64 `json:"seconds"`
	// Quota is the backend quota the members report (etcd's
	// --quota-backend-bytes), 0 when unknown.
	Quota float64 `json:"quota_bytes,omitempty"`
	// Notes say what the reader must know to trust the numbers.
	Notes []string `json:"notes,omitempty"`
}

// ScaleKind is one kind of object of a scale run.
type ScaleKind struct {
	Name string `json:"name"`
	// Target is the number of objects the run grows to.
	Target int64 `json:"target"`
	// Prefix is where the objects live, e.g. <prefix>registry/pods/.
	Prefix string `json:"prefix"`
	// ValueSize is the distribution of the values' sizes (ParseDist's
	// syntax) and MeanValueSize its measured mean over the objects written.
	ValueSize     string  `json:"value_size"`
	MeanValueSize float64 `json:"mean_value_size,omitempty"`
	// LeaseTTL is the TTL of the leases the objects are written with
	// (events), in seconds.
	LeaseTTL float64 `json:"lease_ttl,omitempty"`
}

// ScaleStep is what etcd looked like after one step.
type ScaleStep struct {
	Step int `json:"step"`
	// T is the end of the step, in seconds since the first began.
	T float64 `json:"t"`
	// Seconds is the step's duration.
	Seconds float64 `json:"seconds"`
	// Objects is the number of objects under the run's prefix at the end
	// of the step (leased ones that expired are gone); Kinds the same per
	// kind.
	Objects int64            `json:"objects"`
	Kinds   map[string]int64 `json:"kinds"`
	// Written and Updates count the step's creations and status updates.
	Written int64 `json:"written"`
	Updates int64 `json:"updates"`
	// DBSize and DBSizeInUse are the largest over the members, bytes.
	DBSize      float64 `json:"db_size"`
	DBSizeInUse float64 `json:"db_size_in_use"`
	// RSS is the largest resident memory of a member, bytes, as its
	// process_resident_memory_bytes says (absent when it does not).
	RSS float64 `json:"rss,omitempty"`
	// WALFsync and BackendCommit are etcd's histograms over the step
	// (summed over the members).
	WALFsync      *Latency `json:"wal_fsync,omitempty"`
	BackendCommit *Latency `json:"backend_commit,omitempty"`
	// Put is the latency of the step's creations, Update of its status
	// updates (from the intended send time: they are paced).
	Put    *Latency `json:"put,omitempty"`
	Update *Latency `json:"update,omitempty"`
	// Lists has one entry per kind: the lists of the whole resource made
	// after the step's writes.
	Lists []ScaleList `json:"lists,omitempty"`
	// WatchLag is from each put to its event on the resource's watch.
	WatchLag    *Latency `json:"watch_lag,omitempty"`
	WatchEvents int64    `json:"watch_events"`
	// ProposalsPending is the most etcd_server_proposals_pending any member
	// showed while the step wrote.
	ProposalsPending float64 `json:"proposals_pending"`
	// SlowApplies is the growth of etcd_server_slow_apply_total over the
	// step (applies over --warning-apply-duration), all members.
	SlowApplies float64 `json:"slow_applies"`
	// LogWarnings counts the warnings the members logged during the step
	// by class (etcdperf logs' class ids; embedded members only).
	LogWarnings map[string]int64 `json:"log_warnings,omitempty"`
	// Errors counts the failed requests of the step by reason.
	Errors map[string]int64 `json:"errors,omitempty"`
	// Members holds the per-member figures.
	Members []ScaleMember `json:"members,omitempty"`
}

// ScaleList is the lists of one resource made in one step.
type ScaleList struct {
	Kind string `json:"kind"`
	// Latency is the whole list (every page), SlowestPage the slowest
	// single range request of them.
	Latency     *Latency `json:"latency"`
	SlowestPage float64  `json:"slowest_page"`
	Pages       int      `json:"pages"`
	Keys        int64    `json:"keys"`
	Bytes       int64    `json:"bytes"`
}

// ScaleMember is one member's figures after a step.
type ScaleMember struct {
	Name             string  `json:"name"`
	DBSize           float64 `json:"db_size"`
	DBSizeInUse      float64 `json:"db_size_in_use"`
	RSS              float64 `json:"rss,omitempty"`
	ProposalsPending float64 `json:"proposals_pending"`
}
