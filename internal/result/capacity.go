package result

// Capacity is how much write load a storage location (or a cluster)
// carried within etcd's limits: a sweep of the offered put rate, step by
// step, until a step broke a limit.
type Capacity struct {
	// PutsPerS is the highest offered rate (puts/s) whose step held every
	// limit; 0 when even the first step broke one.
	PutsPerS float64 `json:"puts_per_s"`
	// ValueSize and KeySize are the bytes of each put (check perf's).
	ValueSize int `json:"value_size"`
	KeySize   int `json:"key_size"`
	// LimitedBy are the criteria that broke at the first step that broke
	// one (the next after PutsPerS); empty when every step held.
	LimitedBy []string `json:"limited_by,omitempty"`
	// Cause is what limits etcd there: "disk" (the disk's latency),
	// "iops_cap" (the volume's IOPS or throughput cap), "cpu", "client"
	// (the load generator), "network", "disk_or_cpu", "etcd" (etcd itself,
	// none of the others observed), or "none" when no step broke.
	Cause Cause `json:"cause"`
	// Evidence says in words what shows the cause, with its numbers.
	Evidence string `json:"evidence,omitempty"`
	// StepSeconds is how long each step of the sweep lasted; ConfirmSeconds
	// how long a confirm step held the answer (0: none ran).
	StepSeconds float64 `json:"step_seconds"`
	// DBSize is the bytes of values the sweep's etcd was filled with
	// before its first step (--db-size), FillSeconds how long that took.
	DBSize int64 `json:"db_size,omitempty"`
	// DBSizeFrom and ValueSizeFrom say where the database's size and the
	// values' came from when they are the cluster's, read from its
	// metrics (--db-size and --value-size from-prometheus), and what
	// each assumes; empty when given as a size or by default.
	DBSizeFrom     string  `json:"db_size_from,omitempty"`
	ValueSizeFrom  string  `json:"value_size_from,omitempty"`
	FillSeconds    float64 `json:"fill_seconds,omitempty"`
	ConfirmSeconds float64 `json:"confirm_seconds,omitempty"`
	// CompactionSeconds is how often the sweep compacted its own etcd's
	// history during each step, keeping none (0: it did not; a live
	// cluster's sweep leaves its history alone).
	CompactionSeconds float64        `json:"compaction_seconds,omitempty"`
	Steps             []CapacityStep `json:"steps"`
	// Demand is the cluster's peak write demand the storage is judged
	// against (puts/s, from --demand or Prometheus), DemandFrom where it
	// came from, and Headroom PutsPerS over Demand.
	Demand     float64 `json:"demand,omitempty"`
	DemandFrom string  `json:"demand_from,omitempty"`
	Headroom   float64 `json:"headroom,omitempty"`
	// VolumeIOPS and VolumeWriteBPS are the volume's provisioned write
	// IOPS and bytes/s as the user stated them (--volume-iops,
	// --volume-mbps); VolumeIOPSUsed and VolumeBPSUsed the share of each
	// the device wrote at the capacity's step (the headroom the
	// provisioning leaves is the rest).
	VolumeIOPS     float64 `json:"volume_iops,omitempty"`
	VolumeIOPSUsed float64 `json:"volume_iops_used,omitempty"`
	VolumeWriteBPS float64 `json:"volume_write_bps,omitempty"`
	VolumeBPSUsed  float64 `json:"volume_bps_used,omitempty"`
	// Answer is the one-line answer: what the storage carries, what broke
	// next and why.
	Answer string `json:"answer"`
}

// CapacityStep is one offered rate of a capacity sweep.
type CapacityStep struct {
	Offered  float64 `json:"offered"`
	Achieved float64 `json:"achieved"`
	Clients  int     `json:"clients"`
	Seconds  float64 `json:"seconds"`
	// WALFsyncP99 and BackendCommitP99 are etcd's own (seconds); a *Bound
	// is true when the p99 fell in etcd's lowest bucket (<= 1ms).
	WALFsyncP99        float64 `json:"wal_fsync_p99"`
	WALFsyncBound      bool    `json:"wal_fsync_bound,omitempty"`
	BackendCommitP99   float64 `json:"backend_commit_p99"`
	BackendCommitBound bool    `json:"backend_commit_bound,omitempty"`
	// WALFsyncs is etcd's WAL fsyncs per second (summed over members).
	WALFsyncs  float64 `json:"wal_fsyncs_per_s"`
	RequestP99 float64 `json:"request_p99"`
	// DeviceIOPS, DeviceUtil and DeviceAwait are the device's writes per
	// second, utilisation (0-1) and mean write latency (seconds) from
	// /proc/diskstats, when the device is known.
	DeviceIOPS  float64 `json:"device_iops,omitempty"`
	DeviceUtil  float64 `json:"device_util,omitempty"`
	DeviceAwait float64 `json:"device_await,omitempty"`
	// DeviceWriteBytes is the device's bytes written per second.
	DeviceWriteBytes float64 `json:"device_write_bytes,omitempty"`
	// IOPSCap is the tightest write IOPS cap of an etcd member's cgroup on
	// the device of its data dir (cgroup v1 blkio, v2 io.max), when this
	// host sets one; CappedWriteIOPS is what that cgroup wrote per second
	// during the step, and CapDevice that device.
	IOPSCap         float64 `json:"iops_cap,omitempty"`
	CappedWriteIOPS float64 `json:"capped_write_iops,omitempty"`
	CapDevice       string  `json:"cap_device,omitempty"`
	// HostCPUBusy is how busy this host's CPUs were (0-1), where etcd and
	// the load generator ran side by side.
	HostCPUBusy float64 `json:"host_cpu_busy,omitempty"`
	// EtcdCPU and ClientCPU are cores (CPU-seconds per second) of etcd's
	// processes on this host and of the load generator.
	EtcdCPU   float64 `json:"etcd_cpu,omitempty"`
	ClientCPU float64 `json:"client_cpu,omitempty"`
	// Broke are the criteria this step failed; Cause what limited it.
	Broke []string `json:"broke,omitempty"`
	// Confirm marks a confirm step: the answer held for ConfirmSeconds.
	Confirm bool `json:"confirm,omitempty"`
	// Tight are the limits a step came within the warning level of
	// without breaking them (check perf's warn levels).
	Tight []string `json:"tight,omitempty"`
	Cause Cause    `json:"cause,omitempty"`
	// Intervals are a confirm step's samples, each as long as a soak's
	// (two of 5s in a default 10s hold): its WAL fsync, backend commit and
	// request p99s are the medians of theirs, judged as a soak's are
	// (judge.CapacityStep). Judge again from a saved Result, a step keeps
	// the Broke it was judged with.
	Intervals []SoakSample `json:"intervals,omitempty"`
}

// Failed says whether a step did not hold its rate: it broke a limit.
func (s *CapacityStep) Failed() bool {
	return len(s.Broke) > 0
}

// FsyncsBehind says whether etcd's WAL fsyncs fell behind the step's
// offered rate by more than growth (fsyncs_flat_growth): its writes did
// not follow the rate, as at a ceiling.
func (s *CapacityStep) FsyncsBehind(growth float64) bool {
	return s.WALFsyncs*growth <= s.Offered
}
