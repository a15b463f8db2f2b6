package result

// Perf is what a load check (`etcdperf check`, and each target of
// `etcdperf doctor`) measured beyond the requests themselves: the profile
// it followed, whether the load generator kept its schedule, and who used
// the CPU. It is what tells etcd's limits apart from the client's.
type Perf struct {
	// Profile is etcdctl check perf's load model: s, m, l or xl.
	Profile string `json:"profile,omitempty"`
	Clients int    `json:"clients"`
	// TargetRate is the profile's puts per second.
	TargetRate float64 `json:"target_rate"`
	// SentRate is requests sent (answered or failed) per second of the
	// time the load sent for.
	SentRate float64 `json:"sent_rate"`
	// Reached is the throughput as a fraction of TargetRate.
	Reached float64 `json:"reached"`
	// ScheduleLag is how long, on average, a request left after its
	// intended send time (the latency from the intended time minus the
	// service time): near zero when the pacer kept its schedule.
	ScheduleLag float64 `json:"schedule_lag"`
	// BusyLag is the part of ScheduleLag during which every client was
	// waiting for etcd (the pacer found no free client): the lag etcd
	// caused; the rest is the load generator's own. nil when the Result
	// did not measure it.
	BusyLag *float64 `json:"busy_lag,omitempty"`
	// InFlight is the mean number of requests waiting for etcd (throughput
	// times the mean service time, Little's law). At Clients, every client
	// was waiting for etcd: etcd, not the client, set the pace.
	InFlight float64 `json:"in_flight"`
	// CPUs is the number of CPUs of the client machine.
	CPUs int `json:"cpus"`
	// ClientCPU is the CPUs etcdperf's own process used during the load
	// (CPU seconds per second, from its rusage). ClientOnly is true when
	// that process ran no etcd member (external cluster, or the embedded
	// member in a process of its own).
	ClientCPU  float64 `json:"client_cpu"`
	ClientOnly bool    `json:"client_only"`
	// ServerCPU is the CPUs etcd's members used together during the load
	// (process_cpu_seconds_total), when their metrics say.
	ServerCPU float64 `json:"server_cpu,omitempty"`
	// Members holds each member's process and database figures.
	Members []PerfMember `json:"members,omitempty"`
	// LimitedBy says what kept the throughput under the target, when it
	// was: "client" (the load generator could not send on time) or
	// "server" (every client was waiting for etcd).
	LimitedBy Cause `json:"limited_by,omitempty"`
	// Notes are facts the reader needs to trust the numbers.
	Notes []string `json:"notes,omitempty"`
}

// PerfMember is one member's process and database during a load check.
type PerfMember struct {
	Name     string `json:"name"`
	Endpoint string `json:"endpoint,omitempty"`
	// CPU is CPU seconds per second during the load.
	CPU float64 `json:"cpu"`
	// RSSBefore and RSSAfter are process_resident_memory_bytes.
	RSSBefore float64 `json:"rss_before,omitempty"`
	RSSAfter  float64 `json:"rss_after,omitempty"`
	// DBSize and DBSizeInUse are the backend's file size and the part of
	// it in use after the load; Quota is its space quota.
	DBSize      float64 `json:"db_size,omitempty"`
	DBSizeInUse float64 `json:"db_size_in_use,omitempty"`
	Quota       float64 `json:"quota,omitempty"`
	// PeerRTT is the p99 of the round trips to the other members during
	// the load, in seconds (0 for a single member).
	PeerRTT float64 `json:"peer_rtt_p99,omitempty"`
	// HeartbeatFailures counts heartbeats the member failed to send.
	HeartbeatFailures float64 `json:"heartbeat_failures,omitempty"`
}

// Datascale is `etcdperf check datascale`: how much memory etcd's members
// grew by to hold a number of keys, as etcdctl check datascale measures it.
type Datascale struct {
	Profile string `json:"profile,omitempty"`
	// Keys is the number of keys written, KVSize the bytes of each key and
	// value together.
	Keys    int64 `json:"keys"`
	KVSize  int   `json:"kv_size"`
	Clients int   `json:"clients"`
	// RSSBefore, RSSAfter and Growth are summed over the members (bytes);
	// PerKey is Growth divided by Keys.
	RSSBefore float64 `json:"rss_before"`
	RSSAfter  float64 `json:"rss_after"`
	Growth    float64 `json:"growth"`
	PerKey    float64 `json:"per_key"`
	// Members holds the same per member.
	Members []PerfMember `json:"members,omitempty"`
}

// Doctor is the top of `etcdperf doctor`: one row per target (the entries
// of runs, in the same order) with the figures that answer "is this
// storage fast enough for etcd, with how much headroom, and what limits it".
type Doctor struct {
	Targets []DoctorTarget `json:"targets"`
}

// DoctorTarget is one storage location (or cluster) that doctor judged.
type DoctorTarget struct {
	Name      string   `json:"name"`
	Dir       string   `json:"dir,omitempty"`
	FSType    string   `json:"fs_type,omitempty"`
	Device    string   `json:"device,omitempty"`
	Volatile  bool     `json:"volatile,omitempty"`
	Endpoints []string `json:"endpoints,omitempty"`
	// Member names the etcd member of a node that doctor --node judged:
	// the findings and the summary are about it.
	Member string `json:"member,omitempty"`
	// DiskProbe says, beside a live member (doctor --node, or --endpoints
	// with --data-dir), whether the disk probe ran and why: not when the
	// member's own WAL fsyncs during the window were enough to judge its
	// disk; paced and guarded otherwise.
	DiskProbe string `json:"disk_probe,omitempty"`
	// Capacity is the capacity sweep's puts/s (capacity.puts_per_s) and
	// CapacityCause what limits etcd at its knee, when doctor swept.
	Capacity      float64 `json:"capacity,omitempty"`
	CapacityCause Cause   `json:"capacity_cause,omitempty"`
	// SimulatedFsyncDelay is the delay added to every fsync by a slow view
	// of the directory (--simulate-fsync-delay), in seconds.
	SimulatedFsyncDelay float64 `json:"simulated_fsync_delay,omitempty"`
	Verdict             Verdict `json:"verdict"`
	// LimitedBy names what limits etcd here: "disk", "cpu", "client",
	// "network" or "none".
	LimitedBy Cause `json:"limited_by"`
	// LimitedOn names the members where it limits etcd, when the finding
	// that says so names them.
	LimitedOn []string `json:"limited_on,omitempty"`
	// DiskSyncP99 is the disk probe's fdatasync p99; WALFsyncP99 and
	// BackendCommitP99 are etcd's own, under the load.
	DiskSyncP99      float64 `json:"disk_sync_p99,omitempty"`
	DiskIOPS         float64 `json:"disk_iops,omitempty"`
	WALFsyncP99      float64 `json:"wal_fsync_p99,omitempty"`
	BackendCommitP99 float64 `json:"backend_commit_p99,omitempty"`
	// WALFsyncBound and BackendCommitBound are true when the p99 fell in
	// etcd's lowest histogram bucket: it is at most that bound.
	WALFsyncBound      bool `json:"wal_fsync_bound,omitempty"`
	BackendCommitBound bool `json:"backend_commit_bound,omitempty"`
	// FsyncHeadroom is the WAL fsync limit divided by WALFsyncP99 (or by
	// DiskSyncP99 without a load): 2 means twice as fast as needed.
	FsyncHeadroom float64 `json:"fsync_headroom,omitempty"`
	RequestP99    float64 `json:"request_p99,omitempty"`
	Throughput    float64 `json:"throughput,omitempty"`
	TargetRate    float64 `json:"target_rate,omitempty"`
	// DeviceUtil is the fraction of the load's time the device was busy.
	DeviceUtil float64 `json:"device_util,omitempty"`
	ServerCPU  float64 `json:"server_cpu,omitempty"`
	ClientCPU  float64 `json:"client_cpu,omitempty"`
	// Noise is the same load again while a neighbour wrote bulk data on
	// the same device (--noise).
	Noise *NoiseEffect `json:"noise,omitempty"`
}

// NoiseEffect compares a target's load without and with a background bulk
// writer on the same device.
type NoiseEffect struct {
	// BytesWritten is what the background writer wrote during the load.
	BytesWritten     int64   `json:"bytes_written"`
	WALFsyncP99      float64 `json:"wal_fsync_p99"`
	BackendCommitP99 float64 `json:"backend_commit_p99"`
	RequestP99       float64 `json:"request_p99"`
	DeviceUtil       float64 `json:"device_util,omitempty"`
	// WALFsyncRatio and RequestRatio are the noisy p99 divided by the
	// quiet one (2 means twice as slow under contention).
	WALFsyncRatio float64 `json:"wal_fsync_ratio,omitempty"`
	RequestRatio  float64 `json:"request_ratio,omitempty"`
	Verdict       Verdict `json:"verdict"`
}
