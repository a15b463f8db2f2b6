package result

// MemberProcess is what the kernel of the host a member runs on says of the
// member's process over a run: the CPU it used and was allowed, how long
// its threads waited for a CPU, and the device under its write-ahead log.
// It exists only for members that run on the host etcdperf ran on (started
// by etcdperf, or found listening on a loopback address): these are the
// figures that tell a starved CPU from a slow disk for certain.
type MemberProcess struct {
	// Name is the member's name.
	Name string `json:"name"`
	// Host is the host the figures were measured on.
	Host string `json:"host"`
	PID  int    `json:"pid,omitempty"`
	// Found says how the process was found: "started by etcdperf", or
	// "listening on ADDR".
	Found string `json:"found,omitempty"`
	// Error says why the figures are missing or partial.
	Error string `json:"error,omitempty"`
	// WALDir is the folder of its open write-ahead log, and DataDir its
	// data dir; FSType, MountPoint and Device say what the WAL is on.
	WALDir     string `json:"wal_dir,omitempty"`
	DataDir    string `json:"data_dir,omitempty"`
	FSType     string `json:"fs_type,omitempty"`
	MountPoint string `json:"mount_point,omitempty"`
	Device     string `json:"device,omitempty"`
	// Volatile: the WAL is in memory (tmpfs), where fdatasync is a no-op.
	Volatile bool `json:"volatile,omitempty"`
	// RAMDisk: the device under the WAL lives in memory (zram, brd's
	// ramN): its writes are copies the CPUs make, and nothing lies below
	// it.
	RAMDisk bool `json:"ram_disk,omitempty"`
	// Seconds is the span the figures cover.
	Seconds float64 `json:"seconds"`
	// CPU is the CPU time its threads used per second (CPUs).
	CPU float64 `json:"cpu"`
	// CPULimit is the CPUs its cgroup lets it use (quota over period; 0: no
	// limit), and Cgroup that group's folder.
	CPULimit float64 `json:"cpu_limit,omitempty"`
	Cgroup   string  `json:"cgroup,omitempty"`
	// MemoryLimit is the memory its cgroups let it use (bytes; 0: no
	// limit), and HostMemory its host's (bytes).
	MemoryLimit float64 `json:"memory_limit,omitempty"`
	HostMemory  float64 `json:"host_memory,omitempty"`
	// RSS is its resident memory at the end of the span (bytes).
	RSS float64 `json:"rss,omitempty"`
	// Throttled is the share of the cgroup's CPU periods in which it ran
	// out of quota, and ThrottledTime the time it was stopped for it per
	// second (cgroup cpu.stat).
	Throttled     float64 `json:"throttled,omitempty"`
	ThrottledTime float64 `json:"throttled_time,omitempty"`
	// IOPSCap is the write IOPS its cgroup allows on CapDevice, the disk
	// under its data (cgroup v1 blkio, v2 io.max; 0: no cap), and
	// CappedWriteIOPS what that cgroup wrote there per second.
	IOPSCap         float64 `json:"iops_cap,omitempty"`
	CapDevice       string  `json:"cap_device,omitempty"`
	CappedWriteIOPS float64 `json:"capped_write_iops,omitempty"`
	// RunQueueWait is the time its threads were runnable but waiting for a
	// CPU per second, and SchedWait the mean of such a wait each time a
	// thread got a CPU (/proc/PID/task/*/schedstat).
	RunQueueWait float64 `json:"run_queue_wait"`
	SchedWait    float64 `json:"sched_wait"`
	// HostCPUBusy is the share of all the CPUs of its host that were busy
	// over the span (/proc/stat): on a saturated host the kernel's own
	// work for an fsync waits for a CPU too.
	HostCPUBusy float64 `json:"host_cpu_busy"`
	// The device under the WAL over the same span (/proc/diskstats):
	// mean flush time (what fdatasync waits for), mean write time, busy
	// share. Absent without a block device (tmpfs, FUSE, NFS).
	DeviceFlushAwait float64 `json:"device_flush_await,omitempty"`
	DeviceFlushes    float64 `json:"device_flushes,omitempty"`
	DeviceWriteAwait float64 `json:"device_write_await,omitempty"`
	DeviceUtil       float64 `json:"device_util,omitempty"`
	// DeviceWriteIOPS and DeviceWriteBytes are the writes and bytes per
	// second the device completed over the span, from every writer on it:
	// what a volume's provisioned IOPS and throughput are spent on.
	DeviceWriteIOPS  float64 `json:"device_write_iops,omitempty"`
	DeviceWriteBytes float64 `json:"device_write_bytes,omitempty"`
}

// Measured reports whether the process's figures were read.
func (p *MemberProcess) Measured() bool { return p != nil && p.Seconds > 0 }

// PeerRTT is the round trip from one member to another, as the first
// member's prober measured it (etcd_network_peer_round_trip_time_seconds,
// label To). etcd records a smoothed round trip per peer about every 30
// seconds, so a short run may see none: the figures then cover everything
// the member recorded since it started (Scope "since start"), else the
// run (Scope "run").
type PeerRTT struct {
	From  string  `json:"from"`
	To    string  `json:"to"`
	Scope string  `json:"scope"`
	Count float64 `json:"count"`
	Mean  float64 `json:"mean"`
	// Max is the upper bound of the highest bucket with a sample.
	Max float64 `json:"max"`
}

// Scopes of a PeerRTT.
const (
	ScopeRun   = "run"
	ScopeStart = "since start"
)
