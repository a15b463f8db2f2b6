package result

// Cause is what limits etcd, or what a finding blames: one vocabulary for
// Finding.Cause, DoctorTarget.LimitedBy and CapacityCause, Capacity.Cause
// and CapacityStep.Cause, and Perf.LimitedBy (CauseClient or CauseServer).
// Its JSON is the string of its constant; every constant has an entry in
// the cause table (Info), which holds all the words said of it.
type Cause string

// The causes. A finding blames only those whose Info has a Finding.
const (
	CauseDisk    Cause = "disk"
	CauseCPU     Cause = "cpu"
	CauseNetwork Cause = "network"
	// CauseDiskOrCPU: a member's fsync was slow and etcdperf could not
	// see its host to tell its disk from its CPU.
	CauseDiskOrCPU Cause = "disk_or_cpu"
	// CauseClient: the load generator could not send on time.
	CauseClient Cause = "client"
	// CauseServer: every client was waiting for etcd (a load check's
	// limit, where the alternative is CauseClient).
	CauseServer Cause = "server"
	// CauseEtcd: etcd could not keep up, and neither its disk nor its CPU
	// stood out.
	CauseEtcd Cause = "etcd"
	// CauseIOPSCap: the volume's IOPS (or throughput) cap, not its
	// latency, is what etcd ran into.
	CauseIOPSCap Cause = "iops_cap"
	// CauseIOPSCapOrCPU: etcd's writes held at a ceiling, as under a
	// cap, while this host's CPUs were busy, as when etcd batches its
	// writes for want of a CPU: the evidence cannot tell them apart.
	CauseIOPSCapOrCPU Cause = "iops_cap_or_cpu"
	// CauseDiskOrIOPSCap: a member's fsyncs were slow while the device
	// under its WAL, as its host sees it, answered fast and its CPU was
	// free: the time went below that device, to a cap on the volume's
	// IOPS or to the storage behind it, which nothing on the host tells
	// apart until the volume's provisioned figures are stated.
	CauseDiskOrIOPSCap Cause = "disk_or_iops_cap"
	// CauseNone: nothing is near its limit.
	CauseNone Cause = "none"
)

// CauseInfo is everything said of a cause, in one place.
type CauseInfo struct {
	// Noun names it in a sentence: "the disk".
	Noun string
	// AtKnee says what limited etcd at a capacity sweep's knee, when it
	// was this cause.
	AtKnee string
	// Failed and Tight are a doctor target's verdict head when it failed
	// or warned with this cause: %[1]s is what was judged ("this
	// storage", "this cluster"), %[2]s the members it was found on
	// (" of member etcdperf-2"), or empty. Empty: the generic head.
	Failed, Tight string
	// Volatile says it of a target in memory (tmpfs) that still failed.
	Volatile string
	// Finding is the finding of a member that this cause limits, for the
	// causes a finding blames.
	Finding *CauseFinding
}

// CauseFinding is a cause's member finding: its ID, its title (%[1]s the
// members, %[2]s what was measured) and its remedy.
type CauseFinding struct {
	ID, Title, Remedy string
}

// DiskRemedy is what to do about a disk too slow for etcd.
const DiskRemedy = "Put etcd's data dir (at least its WAL, --wal-dir) on a dedicated SSD/NVMe or provisioned-IOPS volume, " +
	"keep image pulls, builds and logs of neighbouring workloads off that device, and give etcd I/O priority (ionice -c2 -n0)."

// IOPSCapRemedy is what to do about a volume at its IOPS cap.
const IOPSCapRemedy = "raise its provisioned IOPS or move to a tier with more: gp3/io2, a higher Premium SSD tier"

// causes is the cause table.
var causes = map[Cause]CauseInfo{
	CauseDisk: {
		Noun:   "the disk",
		AtKnee: "the disk's latency limits etcd there",
		Failed: "%[1]s is too slow for etcd: the disk%[2]s limits it",
		Tight:  "etcd runs on %[1]s with little headroom: the disk%[2]s is close to its limit",
		Finding: &CauseFinding{"member_disk_slow", "The disk of %[1]s is too slow for etcd: %[2]s",
			"etcd waits for this storage on every write: " + DiskRemedy},
	},
	CauseCPU: {
		Noun:     "the CPU",
		AtKnee:   "etcd's CPU limits it there",
		Failed:   "etcd fails on %[1]s, but not because of the storage: the CPU%[2]s limits it",
		Tight:    "the storage is fast enough, but the CPU%[2]s limits etcd on %[1]s",
		Volatile: "the CPU limits it",
		Finding: &CauseFinding{"member_cpu_starved", "%[1]s is short of CPU, not of disk: %[2]s",
			"etcd's fsync histogram counts the time a starved member waits for a CPU after the disk answered. " +
				"Raise or remove the member's CPU limit (its cgroup's quota; in Kubernetes, the etcd container's CPU limit), give it dedicated CPUs, " +
				"and keep builds, workers and load generators off its host."},
	},
	CauseNetwork: {
		Noun:     "the network",
		AtKnee:   "the network between the members limits it there",
		Failed:   "etcd fails on %[1]s: the network%[2]s limits it",
		Tight:    "etcd runs on %[1]s with little headroom: the network%[2]s limits it",
		Volatile: "the network between the members limits it",
		Finding: &CauseFinding{"member_network_slow", "The network to %[1]s is slow: %[2]s",
			"Heartbeats and log entries to this member take as long: it lags and answers its clients late, and with longer delays " +
				"it starts elections. Check the link to its host (latency, packet loss, a saturated NIC); if the members are far apart by design, " +
				"set --heartbeat-interval to about the round trip and --election-timeout to 10x it on every member (etcd tuning guide)."},
	},
	CauseDiskOrCPU: {
		Noun:     "the disk or the CPU",
		AtKnee:   "its disk or its CPU limits it there: etcd waited for its commits while the device answered fast; compare etcd's CPU with its cores, and measure the disk alone with etcdperf disk",
		Failed:   "etcd fails on %[1]s: the disk or the CPU%[2]s limits it (etcdperf cannot see that host; the findings say how to tell)",
		Tight:    "etcd runs on %[1]s with little headroom: the disk or the CPU%[2]s limits it",
		Volatile: "the disk or the CPU of a member limits it",
		Finding: &CauseFinding{"member_disk_or_cpu", "The disk or the CPU of %[1]s is too slow for etcd: %[2]s",
			"etcd's fsync histogram counts both the disk and the wait for a CPU after it: to tell them apart, run " +
				"`etcdperf doctor --endpoints <its client URL>` on that member's host (etcdperf then reads the member's run-queue wait and CPU throttling), " +
				"or `etcdperf disk --dir <its data dir>` there: a fast fdatasync there means its CPU."},
	},
	CauseClient: {
		Noun:     "the load generator",
		AtKnee:   "the load generator could not send that fast on this host (not etcd's limit)",
		Failed:   "the load generator's machine, not etcd, was saturated: this run cannot judge %[1]s",
		Tight:    "the load generator's machine, not etcd, was saturated: this run cannot judge %[1]s",
		Volatile: "the load generator's machine was saturated",
	},
	CauseServer: {
		Noun: "the server",
	},
	CauseEtcd: {
		Noun:     "etcd itself",
		AtKnee:   "etcd itself limits it there (every client waited for it; neither the disk nor the CPU was seen at its limit)",
		Failed:   "etcd could not keep up with the load on %[1]s",
		Volatile: "it could not keep up with the load",
	},
	CauseIOPSCap: {
		Noun:   "the IOPS cap",
		AtKnee: "the volume was at its IOPS limit, not slow per write (" + IOPSCapRemedy + ")",
		Failed: "etcd fails on %[1]s: a cap on the write IOPS%[2]s limits it, not the disk's speed per write",
		Tight:  "etcd runs on %[1]s with little headroom: a cap on the write IOPS%[2]s is nearly used up",
		Finding: &CauseFinding{"member_iops_cap", "%[1]s ran into a cap on its writes: %[2]s",
			"etcd's WAL fsyncs wait for the cap to let the next write through, not for the device. On a cloud volume, " + IOPSCapRemedy +
				" (AWS EBS volume types; Azure managed disk sizes); where the cap is a cgroup's (io.max, blkio.throttle.write_iops_device), " +
				"raise or remove it for etcd; keep other writers off that volume, which spend the same IOPS."},
	},
	CauseIOPSCapOrCPU: {
		Noun: "a write IOPS cap or the CPU",
		AtKnee: "a write IOPS cap or etcd's CPU limits it there: its writes held at a ceiling, as under a volume's cap, while this host's CPUs were busy, as when etcd batches its writes for want of a CPU; " +
			"to tell them apart, measure the storage alone (etcdperf disk --dir <the data dir>): fdatasyncs/s near that ceiling mean a cap (" + IOPSCapRemedy + "), far above it the CPU",
	},
	CauseDiskOrIOPSCap: {
		Noun:   "the storage below the device or its IOPS cap",
		AtKnee: "the storage below the device its host sees limits it there: a cap on the volume's IOPS or the storage behind it (state the volume's provisioned IOPS with --volume-iops to tell)",
		Failed: "etcd fails on %[1]s: the storage%[2]s limits it, below the device its host sees (a cap on the volume's IOPS, or the storage behind it)",
		Tight:  "etcd runs on %[1]s with little headroom: the storage%[2]s, below the device its host sees, is close to its limit",
		Finding: &CauseFinding{"member_disk_or_iops_cap", "The storage of %[1]s is too slow for etcd, below the device its host sees: %[2]s",
			"The time went below the device the host sees: to a cap on the volume's IOPS (a cloud volume's provisioned IOPS or throughput, a hypervisor's limit) " +
				"or to the storage behind it (network-attached storage). To tell them apart, state the volume's provisioned figures " +
				"(--volume-iops N, --volume-mbps N; gp2: 3 IOPS per GiB, gp3: 3,000 unless raised): writes near them are its cap (" + IOPSCapRemedy + "); " +
				"far under them, the storage behind the volume is slow (" + DiskRemedy + ") The volume's own metrics say it too " +
				"(AWS: VolumeQueueLength and the IOPS consumed against those provisioned; Azure: Data Disk IOPS Consumed Percentage)."},
	},
	CauseNone: {
		Noun: "nothing",
	},
}

// Info is c's entry in the cause table; an unknown cause (from a Result of
// a later version) has its name as its noun and no other words.
func (c Cause) Info() CauseInfo {
	if i, ok := causes[c]; ok {
		return i
	}
	return CauseInfo{Noun: "the " + string(c)}
}
