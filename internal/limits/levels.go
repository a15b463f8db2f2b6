package limits

import (
	"strings"

	"github.com/etcdperf/etcdperf/internal/result"
)

// The levels the findings judge by (package diagnose): unlike the criteria
// above, none of them is a check of its own; a finding quotes its level as
// the limit of its evidence. Each is reachable by --limit like the checks.
const (
	MemberThrottled     = "member_throttled"
	MemberThrottledTime = "member_throttled_time"
	MemberSchedWait     = "member_sched_wait"
	MemberCPUAtLimit    = "member_cpu_at_limit"
	MemberHostBusy      = "member_host_busy"
	PeerRTT             = "peer_rtt"
	DeviceFastFactor    = "device_fast_factor"
	ClientCPU           = "client_cpu"
	ClientsBusy         = "clients_busy"
	PacerOwnLag         = "pacer_own_lag"
	DeviceBusy          = "device_busy"
	DBFragmentedSize    = "db_fragmented_size"
	DBInUse             = "db_in_use"
	DBQuotaAlarm        = "db_quota_alarm"
	HostCPUBusy         = "host_cpu_busy"
	HostCPUSteal        = "host_cpu_steal"
	RSSPerValue         = "rss_per_value"
	ListGrowth          = "list_growth_exponent"
	ListMinTime         = "list_min_time"
	WatchLag            = "watch_lag_p99"
	NoiseSlower         = "noise_slower"
	LeaderChanges15m    = "leader_changes_15m"
	LargeRangeKeys      = "large_range_keys"
	IOPSCapUsed         = "iops_cap_used"
	DeviceFastAwait     = "device_fast_await"
	DeviceIdle          = "device_idle"
	DeviceIdleAwait     = "device_idle_await"
	WALFsyncFast        = "wal_fsync_fast"
	FsyncsFlatGrowth    = "fsyncs_flat_growth"
	OfferedRise         = "offered_rise"
	DeviceQueued        = "device_queued_growth"
	EtcdCPUBusy         = "etcd_cpu_busy"
	MemberBehind        = "member_behind"
	MemberApplyGap      = "member_apply_gap"
	ReadIndexWait       = "read_index_wait"
	ProbeDeviceBusy     = "probe_device_busy"
	MemberFsyncsEnough  = "member_fsyncs_enough"
	// VolumeIOPS and VolumeWriteBPS are the volume's provisioned write
	// IOPS and bytes/s as the user states them (--volume-iops,
	// --volume-mbps); 0: not stated.
	RequestsFailed = "requests_failed"
	VolumeIOPS     = "volume_iops"
	VolumeWriteBPS = "volume_write_bps"
	// VolumeOverStated is how far past every stated figure a device wrote
	// for the figures not to be its volume's.
	VolumeOverStated = "volume_over_stated"
	// SoakLastPart, SoakDrop and SoakP99Rise judge a soak's steady state
	// (--soak): the share of its intervals that is its last part, the
	// share of the first part's writes (or rate) under which the last
	// part's is a drop, and the rise of the WAL fsync p99 that is one.
	SoakLastPart = "soak_last_part"
	SoakDrop     = "soak_drop"
	SoakP99Rise  = "soak_p99_rise"
)

// The sources the levels share.
const (
	tuningGuide   = "etcd tuning guide, https://etcd.io/docs/v3.5/tuning/"
	maintenance   = "etcd maintenance guide, https://etcd.io/docs/v3.5/op-guide/maintenance/"
	cfsThrottling = "CFS quota throttling of latency-sensitive containers (kubernetes/kubernetes#67577)"
	etcdMixin     = "etcd's alerting rules (etcd-io/etcd contrib/mixin)"
	useMethod     = "the USE method (utilisation, saturation, errors; iostat, /proc/stat)"
	scaleTest     = "OpenStack performance-docs' etcd health tests (a 430-node Kubernetes cluster grown to about 40,000 pods)"
)

// levels are the levels of the findings, in the order of the rules that
// read them. Op says which side is healthy.
var levels = []Criterion{
	{ID: MemberThrottled, Title: "share of a member's CPU periods throttled by its cgroup", Unit: Fraction, Op: Below, Limit: 0.20, Findings: "member_cpu_starved",
		Source: cfsThrottling + ": a member stopped in a fifth of its periods waits for its CPU limit"},
	{ID: MemberThrottledTime, Title: "time a member's cgroup stopped it, per second", Unit: Seconds, Op: Below, Limit: 0.05, Findings: "member_cpu_starved",
		Source: cfsThrottling + ": 50ms per second is half of a 100ms heartbeat interval (" + tuningGuide + ")"},
	{ID: MemberSchedWait, Title: "mean wait of a member's threads for a CPU", Unit: Seconds, Op: Below, Limit: 0.001, Findings: "member_cpu_starved",
		Source: "etcd FAQ, https://etcd.io/docs/v3.5/faq/: heartbeats sent late are often CPU starvation; measured by etcdperf in /proc/PID/schedstat: a healthy member's threads wait 0.05ms idle, 0.12ms beside three CPU-bound neighbours on two CPUs, a starved one milliseconds"},
	{ID: MemberCPUAtLimit, Title: "CPU used by a member, of its cgroup's limit", Unit: Fraction, Op: Below, Limit: 0.90, Findings: "member_cpu_starved",
		Source: cfsThrottling + ": a member using 90% of its quota has none to spare for a burst"},
	{ID: MemberHostBusy, Title: "CPUs busy on a member's host, its device fast", Unit: Fraction, Op: Below, Limit: 0.90, Findings: "member_cpu_starved",
		Source: useMethod + ": CPUs 90% busy make each fsync's kernel work and etcd's thread after it wait for a CPU"},
	{ID: PeerRTT, Title: "mean round trip between members", Unit: Seconds, Op: Below, Limit: 0.050, Findings: "member_network_slow",
		Source: tuningGuide + ": the heartbeat interval (default 100ms) is set to about the peers' round trip; half of it"},
	{ID: DeviceFastFactor, Title: "fsync p99 over the device's mean flush time, beyond which the device is not what etcd waits for", Unit: Times, Op: Below, Limit: 10,
		Findings: "member_disk_slow, member_cpu_starved, disk_too_slow, host_cpu_saturated, the capacity sweep's cause iops_cap (a cap above the device, which this host does not show)",
		Source:   "an order of magnitude: a device that flushes ten times faster than the fsync p99 leaves the rest to the CPU (etcd FAQ, https://etcd.io/docs/v3.5/faq/), or to a cap above it"},
	{ID: ClientCPU, Title: "etcdperf's own CPU, of the machine's CPUs", Unit: Fraction, Op: Below, Limit: 0.80, Findings: "client_saturated",
		Source: useMethod + ": a load generator using 80% of its machine's CPUs cannot send on time"},
	{ID: ClientsBusy, Title: "share of the clients waiting for etcd on average", Unit: Fraction, Op: Below, Limit: 0.90, Findings: "client_saturated",
		Source: "Little's law (throughput x service time): with 90% of the clients waiting, etcd set the pace (etcdctl check perf's clients)"},
	{ID: PacerOwnLag, Title: "share of the sends' lag spent while a client was free", Unit: Fraction, Op: Below, Limit: 0.50, Findings: "client_saturated",
		Source: "etcdperf's pacer: with half of the lag its own, the load generator, not etcd, was late"},
	{ID: DeviceBusy, Title: "device busy (iostat %util)", Unit: Fraction, Op: Below, Limit: 0.80, Findings: "device_busy",
		Source: useMethod + ": a device busy 80% of the time queues its requests; etcd hardware guide, https://etcd.io/docs/v3.5/op-guide/hardware/: give etcd a dedicated disk"},
	{ID: DBFragmentedSize, Title: "database size from which its free pages are worth a defragmentation", Unit: Bytes, Op: Below, Limit: 100 << 20, Findings: "db_fragmented",
		Source: maintenance + ": defragmentation gives the free pages back, and blocks the member while it runs; worth it from 100 MiB"},
	{ID: DBInUse, Title: "share of the database file in use", Unit: Fraction, Op: AtLeast, Limit: 0.50, Findings: "db_fragmented",
		Source: maintenance + ": free pages count against the quota until a defragmentation; half of the file free is worth one"},
	{ID: DBQuotaAlarm, Title: "database size / backend quota, beyond which its finding is critical", Unit: Fraction, Op: Below, Limit: 0.95, Findings: "db_near_quota",
		Source: "etcd's own alert, etcdDatabaseQuotaLowSpace (etcd-io/etcd contrib/mixin), pages at 95% of the quota; the finding warns from db_quota_used's limit"},
	{ID: HostCPUBusy, Title: "CPU busy on the host etcdperf ran on", Unit: Fraction, Op: Below, Limit: 0.80, Findings: "host_cpu_saturated, disk_too_slow, client_saturated",
		Source: useMethod + ": CPUs 80% busy delay the threads that complete I/O"},
	{ID: HostCPUSteal, Title: "CPU time taken by the hypervisor (steal)", Unit: Fraction, Op: Below, Limit: 0.10, Findings: "host_cpu_steal",
		Source: "etcd FAQ, https://etcd.io/docs/v3.5/faq/: \"failed to send out heartbeat on time\" is often CPU starvation; a tenth of the CPU stolen is an overcommitted hypervisor"},
	{ID: RSSPerValue, Title: "memory growth per object, in object value sizes", Unit: Times, Op: AtMost, Limit: 10, Findings: "scale_rss_growth",
		Source: scaleTest + ": etcd grew from 2 GB to 40 GB, about 950 KB per pod; in-memory index, raft entries and the mapped database cost a few times the value"},
	{ID: ListGrowth, Title: "exponent of a whole list's time over its objects", Unit: Times, Op: AtMost, Limit: 1.3, Findings: "scale_list_superlinear",
		Source: "a list is linear in the keys it returns (etcd-io/etcd#8931: a range of 1000s of keys takes ~100ms); 1.3 leaves room for noise"},
	{ID: ListMinTime, Title: "list time under which its growth is noise", Unit: Seconds, Op: AtLeast, Limit: 0.01, Findings: "scale_list_superlinear",
		Source: "etcd's backend commit p99 limit is 25ms (etcd FAQ, https://etcd.io/docs/v3.5/faq/): a list under 10ms is in the noise of one commit"},
	{ID: WatchLag, Title: "watch event lag p99", Unit: Seconds, Op: Below, Limit: 1, Findings: "scale_watch_lag",
		Source: "the API server's watch cache, and every controller behind it, sees a change that late; " + sloSource + " counts a single object's calls in 1s"},
	{ID: NoiseSlower, Title: "WAL fsync p99 under a neighbour's writes, over the quiet one", Unit: Times, Op: Below, Limit: 2, Findings: "noise_degrades",
		Source: "etcd hardware guide, https://etcd.io/docs/v3.5/op-guide/hardware/: etcd's disk must not be shared with I/O-heavy neighbours; twice as slow is what they cost"},
	{ID: LeaderChanges15m, Title: "leader changes within 15 minutes in the logs", Unit: Count, Op: Below, Limit: 4, Findings: "logs_leader_churn",
		Source: etcdMixin + ": etcdHighNumberOfLeaderChanges, increase(etcd_server_leader_changes_seen_total[15m]) >= 4"},
	{ID: LargeRangeKeys, Title: "keys of a range that make it large", Unit: Count, Op: Below, Limit: 1000, Findings: "logs_slow_requests",
		Source: "etcd-io/etcd#8931: a range query that returns 1000s of keys will probably take ~100ms"},
	// A capacity sweep's cause at its knee (judge.Capacity).
	{ID: IOPSCapUsed, Title: "share of a write-IOPS cap (its cgroup's, or the volume's as --volume-iops states it) a member used, from which the cap is the cause", Unit: Fraction, Op: Below, Limit: 0.6,
		Findings: "the cause iops_cap",
		Source:   "etcdperf's: the cgroup (io.max, blkio throttle) counts the writes it lets through, and a step near its knee spends part of its time under the cap; capped members measured at their knee wrote 82% and 92% of it"},
	// device_fast_await, device_idle_await and wal_fsync_fast are shares
	// of wal_fsync_p99's limit (derivedLevels): their Limit is derived.
	{ID: DeviceFastAwait, Title: "device's mean write time (iostat w_await) under which it explains no etcd limit", Unit: Seconds, Op: AtMost,
		Findings: "the capacity sweep's causes disk_or_cpu and iops_cap (a cap neither the device nor this host shows; a flat ceiling whose writes were that fast below it and slower at it)",
		Source:   "etcdperf's: a fifth of the WAL fsync p99 limit (wal_fsync_p99, 10ms by default, etcd metrics guide; it follows --limit wal_fsync_p99); etcd waiting for its commits while the device answers each write that fast waited above the device, its CPU as much as its disk; writes that fast at a ceiling as below it did not queue there (the disk's latency, not a cap)"},
	{ID: DeviceIdle, Title: "device busy (iostat %util) under which it explains none of etcd's waits", Unit: Fraction, Op: Below, Limit: 0.5,
		Findings: "the capacity sweep's causes iops_cap and disk_or_cpu",
		Source:   useMethod + "; etcdperf's: a device busy under half the time, answering fast, has no queue for etcd to wait in"},
	{ID: DeviceIdleAwait, Title: "device's mean write time (iostat w_await) under which, not busy (device_idle) below a member's cgroup cap, it explains none of etcd's waits", Unit: Seconds, Op: Below,
		Findings: "the capacity sweep's cause iops_cap (the member's cgroup cap)",
		Source:   "etcdperf's: half the WAL fsync p99 limit (wal_fsync_p99, 10ms by default; it follows --limit wal_fsync_p99); with the cap seen on this host, a device that answers each write within half of etcd's limit leaves etcd's waits to the cap above it, looser than device_fast_await, which names a cause with no cap seen"},
	{ID: WALFsyncFast, Title: "WAL fsync p99 at or under which a sweep's step found the disk fast, and from which a climbing p99 shows a queue at a write cap", Unit: Seconds, Op: AtMost,
		Findings: "the capacity sweep's cause iops_cap (a flat ceiling)",
		Source:   "etcdperf's: half the WAL fsync p99 limit (wal_fsync_p99, 10ms by default; it follows --limit wal_fsync_p99): fast at the sweep's lowest rate, climbing past it as the writes queue at a cap"},
	{ID: FsyncsFlatGrowth, Title: "spread of the writes (the device's write IOPS, else etcd's WAL fsyncs/s) across a sweep's steps at and past its knee, under which they are flat (a write cap); a step that was offered more than the one that wrote the most, yet wrote less (within this spread twice), is at the ceiling too", Unit: Times, Op: AtLeast, Limit: 1.15,
		Findings: "the capacity sweep's cause iops_cap",
		Source:   "etcdperf's: a cloud volume's provisioned IOPS (e.g. gp2, gp3) hold its writes, and etcd's WAL fsyncs per second, at a ceiling the host cannot see; under 15% more writes for 50% more load offered is flat beside noise and etcd's batching. etcd's WAL fsyncs and its backend's commits share the cap, and past the knee the commits may take more of it: the device's writes are the ceiling's measure when known"},
	{ID: OfferedRise, Title: "rise of the offered rate across the steps whose writes are flat, from which the flat ceiling shows a write cap", Unit: Times, Op: AtLeast, Limit: 1.4,
		Findings: "the capacity sweep's cause iops_cap",
		Source:   "etcdperf's: the sweep's knee step sits at the geometric middle of the rates around it (1.4x from the step that broke, rounded), so a ceiling seen from it to the break spans 1.4x; fsyncs/s not held at a ceiling follow such a rise well beyond fsyncs_flat_growth"},
	{ID: DeviceQueued, Title: "rise of the device's mean write time (iostat w_await) from a sweep's lowest rate, where it answered within device_fast_await, to the step that broke, from which its writes queued at the device or below it", Unit: Times, Op: AtLeast, Limit: 2,
		Findings: "the capacity sweep's cause disk_or_iops_cap (a disk named at the knee whose writes were fast below it)",
		Source:   useMethod + "; etcdperf's: a disk bound by its latency answers each write in about the same time at any rate; one whose writes take twice as long as the rate rises queued them (saturation), at a cap on the volume (a cloud volume's, a hypervisor's) or at the storage behind it, which the host cannot tell apart"},
	{ID: EtcdCPUBusy, Title: "CPU used by etcd, as a share of one CPU, from which its own work explains a backend commit's wait as much as the disk does", Unit: Fraction, Op: Below, Limit: 0.5,
		Findings: "the capacity sweep's causes disk_or_cpu (a backend commit that broke alone over a fast device, not the storage below it) and iops_cap (a ceiling of the writes that etcd's CPU explains is not a cap)",
		Source:   "etcdperf's: a backend commit writes the pages its puts dirtied, then fsyncs; with the WAL's fsyncs within their limit and the device fast, a commit that took longer while etcd did that much CPU work of its own waited for the CPU as much as for the disk. As measured on a 2-CPU host: where its CPUs were the limit (a directory of its virtio disk, a RAM disk, a loop device over the disk), etcd used 0.80-1.12 CPUs at the steps that broke so; under a cap of 1,500 IOPS below a loop device, which delayed the commits alone, 0.16-0.26 at the steps where its device answered fast"},
	// The cluster's own state (Status, reads of one key): a member behind
	// the others, or whose linearizable reads wait at the leader.
	{ID: MemberBehind, Title: "time of the cluster's writes by which a member's committed index trailed the leader's, or its applied index its own committed one, in every status round", Unit: Seconds, Op: Below, Limit: 1,
		Findings: "cluster_member_behind, cluster_member_apply_behind",
		Source:   "etcdperf's: a follower learns the commit index with the leader's next message (heartbeats every 100ms by default, etcd tuning guide) and trails by what the cluster commits meanwhile; a second's worth of the cluster's writes, in three rounds a second apart, is a member that does not keep up (measured in time, it holds at any write rate; an idle cluster's followers trail by none)"},
	{ID: MemberApplyGap, Title: "raft entries a member committed but had not applied, in every status round (critical)", Unit: Count, Op: Below, Limit: 5000,
		Findings: "cluster_member_apply_behind",
		Source:   "etcd's server rejects new proposals with \"etcdserver: too many requests\" when its committed index is more than 5,000 entries ahead of its applied index (maxGapBetweenApplyAndCommitIndex, server/etcdserver/server.go)"},
	{ID: ReadIndexWait, Title: "a member's wait at the leader's ReadIndex: its fastest linearizable read beyond its fastest serializable one, less the leader's own such wait (the leader's: its own)", Unit: Seconds, Op: Below, Limit: 0.05,
		Findings: "cluster_read_index_slow",
		Source:   "etcd's API guarantees (https://etcd.io/docs/v3.5/learning/api_guarantees/): a linearizable read waits for the leader to confirm it still leads (ReadIndex: a heartbeat round to a quorum), a serializable one is served from the member's own store. Half of etcd's default heartbeat interval (100ms; etcd's tuning guide sets the heartbeat to about the round trip between members): a follower that waits that much longer than the leader itself is on a link whose round trip is of the order of the heartbeat. The leader's own wait is taken off a follower's, so that CPUs busy for every member (the same rounds, slower) do not read as a slow link"},
	// A load run's failed requests (bench_errors).
	{ID: RequestsFailed, Title: "share of a load's requests that failed, from which the failures are critical", Unit: Fraction, Op: Below, Limit: 0.1, Findings: "bench_errors",
		Source: "etcdperf's: a tenth of the requests failing is no longer a passing fault (a leader change, a timeout) but a cluster that cannot serve the load; any failure warns"},
	// The volume's provisioned figures, as the user states them: a cap
	// below the guest that no reading on the host shows.
	{ID: VolumeIOPS, Title: "the volume's provisioned write IOPS (--volume-iops; 0: not stated)", Unit: PerSec, Op: AtMost, Limit: 0,
		Findings: "the cause iops_cap",
		Source:   "the volume's provisioning, as the user states it: AWS gp3 3,000 IOPS by default, gp2 3 per GiB (100 to 16,000), Azure Premium SSD P15 1,100 (AWS EBS volume types; Azure managed disk sizes)"},
	{ID: VolumeWriteBPS, Title: "the volume's provisioned throughput in bytes/s (--volume-mbps in MiB/s; 0: not stated)", Unit: Bytes, Op: AtMost, Limit: 0,
		Findings: "the cause iops_cap",
		Source:   "the volume's provisioning, as the user states it: AWS gp3 125 MiB/s by default, Azure Premium SSD P15 125 MB/s (AWS EBS volume types; Azure managed disk sizes)"},
	{ID: VolumeOverStated, Title: "a device's writes over every provisioned figure stated (--volume-iops, --volume-mbps), beyond which the figures are not its volume's", Unit: Times, Op: AtMost, Limit: 1.25,
		Findings: "the cause iops_cap",
		Source:   "etcdperf's: a volume does not write past its cap for long; as measured, two members on a RAM disk wrote 1,204 IOPS beside a member on a volume capped at 300 (--volume-iops 300); a quarter more than every figure stated is past a burst's noise"},
	// The disk probe beside a live member (doctor --node, or --endpoints
	// with --data-dir; package liveprobe).
	{ID: MemberFsyncsEnough, Title: "WAL fsyncs a live member makes in its window for them to judge its disk (no probe written beside it)", Unit: Count, Op: AtLeast, Limit: 300,
		Findings: "the disk probe beside a live member",
		Source:   "etcdperf's: the member's own etcd_disk_wal_fsync_duration_seconds (etcd metrics guide) measures its disk under the real load; with 300 fsyncs its p99 rests on its 3 slowest rather than on one"},
	{ID: ProbeDeviceBusy, Title: "device busy (iostat %util) beyond which the probe beside a live member stops", Unit: Fraction, Op: AtMost, Limit: 0.9,
		Findings: "the disk probe beside a live member",
		Source:   useMethod + "; etcdperf's: the probe yields before the device, 90% busy, queues the member's own writes"},
	// A soak's steady state (--soak).
	{ID: SoakLastPart, Title: "share of a soak's intervals, at its end, judged as its steady state (the figure that held)", Unit: Fraction, Op: AtMost, Limit: 1.0 / 3,
		Findings: "the soak's sustained figure",
		Source:   "fio's steady state (steadystate=iops_slope, ss_dur: the last window of a run decides) and SNIA's Solid State Storage Performance Test Specification (steady state over the last rounds of a run); a third leaves the first two for a burst to run out in"},
	{ID: SoakDrop, Title: "a soak's device write IOPS, MB/s or achieved rate over its last part, of its first part's, under which it dropped", Unit: Fraction, Op: AtLeast, Limit: 0.7,
		Findings: "the soak's drop",
		Source:   "SNIA's Solid State Storage Performance Test Specification: steady state holds within 20% of the window's mean; 30% here, as a busy machine's intervals spread wider; AWS gp2 falls from 3,000 to 3 IOPS per GiB when its credits run out (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html)"},
	{ID: SoakP99Rise, Title: "rise of a soak's WAL fsync p99 from its first part to its last, past its limit, that is a drop", Unit: Times, Op: Below, Limit: 2,
		Findings: "the soak's drop",
		Source:   "etcdperf's: twice the first part's p99 and past the WAL fsync limit (etcd metrics guide: 10ms) is no interval's noise; Azure's host cache drains after a minute or two and the writes then wait"},
}

// derivation is a level whose limit is a share of another criterion's.
type derivation struct {
	level, of string
	share     float64
}

// derivedLevels are the levels derived from another criterion's limit, in
// this one place: Table's limit of each is its share of the other's, and
// --limit moves it with the other unless --limit sets it too (Override).
// A Result records a moved level (Changed), so that judging it again
// holds it.
var derivedLevels = []derivation{
	{DeviceFastAwait, WALFsyncP99, 1.0 / 5},
	{DeviceIdleAwait, WALFsyncP99, 1.0 / 2},
	{WALFsyncFast, WALFsyncP99, 1.0 / 2},
}

// derive sets, in table, the limit of each derived level whose own limit
// was not set (set[level] false) and whose source's was (set nil: all).
func derive(table []Criterion, set map[string]bool) []Criterion {
	for _, d := range derivedLevels {
		if set != nil && (set[d.level] || !set[d.of]) {
			continue
		}
		of, _ := Lookup(table, d.of)
		for i := range table {
			if table[i].ID == d.level {
				table[i].Limit = of.Limit * d.share
			}
		}
	}
	return table
}

// Changed lists the criteria of table set with --limit (their limit or
// warning level differs from Table's, or --limit named them), as a Result
// records them. A source alone that differs is no change: a Result written
// by an earlier version quotes the table of its day.
func Changed(table []Criterion) []result.Limit {
	var out []result.Limit
	for _, c := range table {
		d, ok := Lookup(Table, c.ID)
		if ok && c.Limit == d.Limit && sameWarn(c.Warn, d.Warn) && !strings.HasPrefix(c.Source, limitSource) {
			continue
		}
		out = append(out, result.Limit{Name: c.ID, Limit: c.Limit, Warn: c.Warn, Source: c.Source})
	}
	return out
}

func sameWarn(a, b *float64) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// WithLimits returns table with the limit, warning level and source of
// each of limits (as a Result records them).
func WithLimits(table []Criterion, limits []result.Limit) []Criterion {
	out := append([]Criterion(nil), table...)
	for _, l := range limits {
		for i := range out {
			if out[i].ID == l.Name {
				out[i].Limit, out[i].Warn, out[i].Source = l.Limit, l.Warn, l.Source
			}
		}
	}
	return out
}
