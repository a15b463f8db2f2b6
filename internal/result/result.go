package result

import (
	"time"
)

// Schema is the value of the "schema" field of every Result.
const Schema = "etcdperf/v1"

// Verdict is the overall outcome of a run.
type Verdict string

// The verdicts, from best to worst.
const (
	Pass Verdict = "pass"
	Warn Verdict = "warn"
	Fail Verdict = "fail"
	// Incomplete is the verdict of a run that ended early (interrupted, or
	// failed midway): its sections hold what it measured until then, which
	// is too little to pass or fail anything.
	Incomplete Verdict = "incomplete"
)

// Worse returns the worse of two verdicts; an empty verdict counts as pass,
// and a run with an incomplete part is incomplete as a whole.
func Worse(a, b Verdict) Verdict {
	if rank(b) > rank(a) {
		return b
	}
	if a == "" {
		return b
	}
	return a
}

func rank(v Verdict) int {
	switch v {
	case Warn:
		return 1
	case Fail:
		return 2
	case Incomplete:
		return 3
	}
	return 0
}

// Severity grades a Finding.
type Severity string

// The severities of findings.
const (
	Info     Severity = "info"
	Warning  Severity = "warn"
	Critical Severity = "critical"
)

// Result is one run of one command against one target. A comparison or a
// doctor run over several targets holds one Result per target in Runs.
type Result struct {
	Schema   string    `json:"schema"`
	Kind     string    `json:"kind"`
	Tool     Tool      `json:"tool"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Name     string    `json:"name,omitempty"`
	// Summary says in one sentence what the run means for etcd.
	Summary string `json:"summary,omitempty"`
	Env     *Env   `json:"env,omitempty"`
	// Params are the run's options, of the type of its kind (see Params).
	Params  Params   `json:"params,omitempty"`
	Disk    *Disk    `json:"disk,omitempty"`
	Bench   *Bench   `json:"bench,omitempty"`
	Target  *Target  `json:"target,omitempty"`
	Server  *Server  `json:"server,omitempty"`
	Host    *Host    `json:"host,omitempty"`
	Prom    *Prom    `json:"prom,omitempty"`
	Logs    *Logs    `json:"logs,omitempty"`
	Scale   *Scale   `json:"scale,omitempty"`
	Kube    *Kube    `json:"kube,omitempty"`
	Metrics *Metrics `json:"metrics,omitempty"`
	// Cluster is the cluster's own state as its members tell it (live
	// commands).
	Cluster  *ClusterState `json:"cluster,omitempty"`
	Checks   []Check       `json:"checks,omitempty"`
	Findings []Finding     `json:"findings,omitempty"`
	Verdict  Verdict       `json:"verdict,omitempty"`
	// Error is set when the run ended early; the sections hold what was
	// measured until then.
	Error string   `json:"error,omitempty"`
	Runs  []Result `json:"runs,omitempty"`
	// The sections of check, check datascale and doctor.
	Perf      *Perf      `json:"perf,omitempty"`
	Datascale *Datascale `json:"datascale,omitempty"`
	Doctor    *Doctor    `json:"doctor,omitempty"`
	// Capacity is the sweep of the offered write rate (doctor).
	Capacity *Capacity `json:"capacity,omitempty"`
	// Soak is a rate held for a while and its steady state (--soak).
	Soak *Soak `json:"soak,omitempty"`
	// The section of discover.
	Discover *Discover `json:"discover,omitempty"`
	// The section of db: what a database file holds.
	DB *DB `json:"db,omitempty"`
	// DBMembers compares several members' databases (db FILE FILE...).
	DBMembers *DBMembers `json:"db_members,omitempty"`
	// ExpectedDefrag is the stall a defragmentation would cause (doctor).
	ExpectedDefrag *ExpectedDefrag `json:"expected_defrag,omitempty"`
	// Tuning is etcd's flags as the figures call for them (metrics).
	Tuning *Tuning `json:"tuning,omitempty"`
	// Limits are the levels the run was judged by that differ from the
	// defaults (set with --limit).
	Limits []Limit `json:"limits,omitempty"`
}

// Tool names the program that wrote the Result.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Env describes where the run happened.
type Env struct {
	Hostname string `json:"hostname,omitempty"`
	Kernel   string `json:"kernel,omitempty"`
	OS       string `json:"os,omitempty"`
	Arch     string `json:"arch,omitempty"`
	CPUs     int    `json:"cpus,omitempty"`
	MemBytes uint64 `json:"mem_bytes,omitempty"`
	// Dir is the directory (the storage) under test.
	Dir string `json:"dir,omitempty"`
	// FSType is the file system type of Dir, as in /proc/self/mountinfo.
	FSType string `json:"fs_type,omitempty"`
	// MountPoint is the mount point that holds Dir.
	MountPoint string `json:"mount_point,omitempty"`
	// MountSource is the mount's source as the kernel names it (e.g. /dev/vda1).
	MountSource string `json:"mount_source,omitempty"`
	// Device is the block device behind Dir (e.g. "nvme0n1p2"), empty when
	// the file system has none (tmpfs, overlay without a resolvable lower).
	Device string `json:"device,omitempty"`
	// Rotational reports a spinning disk, when the kernel knows.
	Rotational *bool `json:"rotational,omitempty"`
	// Volatile is true when Dir is in memory (tmpfs, ramfs): fdatasync is a
	// no-op there and the data is lost on reboot.
	Volatile    bool   `json:"volatile,omitempty"`
	EtcdVersion string `json:"etcd_version,omitempty"`
	Endpoints   string `json:"endpoints,omitempty"`
	GoVersion   string `json:"go_version,omitempty"`
}

// Latency summarises a latency distribution, in seconds.
type Latency struct {
	Count  int64   `json:"count"`
	Min    float64 `json:"min"`
	Mean   float64 `json:"mean"`
	Stddev float64 `json:"stddev"`
	Max    float64 `json:"max"`
	P50    float64 `json:"p50"`
	P90    float64 `json:"p90"`
	P99    float64 `json:"p99"`
	P999   float64 `json:"p999"`
	P9999  float64 `json:"p9999"`
	// HDR is the HdrHistogram (base64 of its compressed V2 encoding, values in
	// nanoseconds) so that Results merge exactly.
	HDR string `json:"hdr,omitempty"`
	// Resolution, when set, is the smallest latency the source can tell
	// apart (etcd's histograms start at 1 ms): a quantile at or below it
	// means "at most this", not a measured value.
	Resolution float64 `json:"resolution,omitempty"`
	// Bucketed is true when the quantiles are bucket upper bounds of a
	// Prometheus histogram rather than measured values.
	Bucketed bool `json:"bucketed,omitempty"`
}

// AtFloor reports a p99 in the lowest bucket of etcd's histogram: it is
// only a bound ("<= 1ms"), not a measured value.
func (l *Latency) AtFloor() bool {
	return l != nil && l.Count > 0 && l.Bucketed && l.Resolution > 0 && l.P99 <= l.Resolution
}

// Quantile returns the summary value for a quantile name such as "p99".
func (l Latency) Quantile(name string) (float64, bool) {
	switch name {
	case "min":
		return l.Min, true
	case "mean":
		return l.Mean, true
	case "stddev":
		return l.Stddev, true
	case "max":
		return l.Max, true
	case "p50":
		return l.P50, true
	case "p90":
		return l.P90, true
	case "p99":
		return l.P99, true
	case "p999":
		return l.P999, true
	case "p9999":
		return l.P9999, true
	}
	return 0, false
}

// Disk is the outcome of the WAL disk probe (native or fio).
type Disk struct {
	Engine string `json:"engine"`
	// Sync is how each write was made durable: "fdatasync" (etcd's WAL),
	// "fsync", "odsync" (O_DSYNC writes) or "none".
	Sync string `json:"sync,omitempty"`
	// EngineVersion is fio's version with the fio engine.
	EngineVersion string `json:"engine_version,omitempty"`
	Ops           int64  `json:"ops"`
	Bytes         int64  `json:"bytes"`
	// Seconds is the wall time of the measured phase.
	Seconds      float64  `json:"seconds"`
	IOPS         float64  `json:"iops"`
	Bandwidth    float64  `json:"bandwidth"`
	WriteLatency *Latency `json:"write_latency,omitempty"`
	SyncLatency  *Latency `json:"sync_latency,omitempty"`
	// Jobs holds one entry per parallel writer when there were several.
	Jobs []DiskJob `json:"jobs,omitempty"`
	// Notes are facts the reader must know to trust the numbers (e.g. no
	// pre-allocation on this file system).
	Notes []string `json:"notes,omitempty"`
	// Rate is the pace the probe was held to, in writes (each with its
	// sync) per second; absent when it wrote as fast as the device allowed.
	Rate float64 `json:"rate,omitempty"`
	// Stopped says why the probe stopped before its runtime or size: beside
	// a live member, it yields when the member's WAL fsyncs slow down or
	// the device is busy.
	Stopped string `json:"stopped,omitempty"`
}

// Durable returns the latency that stands for "making a write durable":
// the sync call's, or with O_DSYNC the write's; nil when nothing was
// synced.
func (d *Disk) Durable() *Latency {
	switch d.Sync {
	case "fdatasync", "fsync":
		return d.SyncLatency
	case "odsync":
		return d.WriteLatency
	}
	return nil
}

// DiskJob is one writer of a multi-job disk probe.
type DiskJob struct {
	File        string   `json:"file"`
	Ops         int64    `json:"ops"`
	Bytes       int64    `json:"bytes"`
	SyncLatency *Latency `json:"sync_latency,omitempty"`
}

// TopError returns the most frequent key of errs (counts by reason, as in
// bench.errors) and its count; among equal counts, the first in order. It
// returns "" and 0 for no error.
func TopError(errs map[string]int64) (string, int64) {
	top, n := "", int64(0)
	for k, v := range errs {
		if v > n || v == n && k < top {
			top, n = k, v
		}
	}
	return top, n
}

// ErrorTotal is the number of failed requests in a count by reason
// (Bench.Errors, ScaleStep.Errors).
func ErrorTotal(byReason map[string]int64) int64 {
	var n int64
	for _, v := range byReason {
		n += v
	}
	return n
}

// Bench is the client side of a load run against etcd.
type Bench struct {
	Workload string           `json:"workload"`
	Ops      int64            `json:"ops"`
	Errors   map[string]int64 `json:"errors,omitempty"`
	// Seconds is the wall time of the load phase.
	Seconds    float64 `json:"seconds"`
	Throughput float64 `json:"throughput"`
	// Latency is measured from the intended send time when a rate is set
	// (no coordinated omission), otherwise from the actual send time.
	Latency *Latency `json:"latency,omitempty"`
	// ServiceLatency is measured from the actual send time; it is present
	// when a rate is set and differs from Latency by the queueing delay.
	ServiceLatency *Latency `json:"service_latency,omitempty"`
	// SendLag, with a rate, is how late each request left after its
	// intended send time: the pacer's precision, or a client that could
	// not keep up (every client busy).
	SendLag *Latency `json:"send_lag,omitempty"`
	// SendLagBusy, with a rate, is the mean part of a send's lag during
	// which every client was waiting for etcd, in seconds: the lag etcd
	// caused. The rest of SendLag's mean is the load generator's own
	// delay. Absent from Results of versions that did not measure it.
	SendLagBusy *float64 `json:"send_lag_busy,omitempty"`
	Series      []Sample `json:"series,omitempty"`
	// ClientCPU is the fraction of the client machine's CPUs the tool used.
	ClientCPU float64 `json:"client_cpu,omitempty"`
	BenchDetail
}

// Sample is one interval (usually one second) of a time series.
type Sample struct {
	T   float64 `json:"t"`
	Ops int64   `json:"ops"`
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
	Err int64   `json:"errors,omitempty"`
}

// Server holds what etcd's own metrics said about the run, as deltas
// between a scrape before and one after.
type Server struct {
	// Notes say what of the members and their host could not be measured
	// in a watch without a load of etcdperf's (doctor --node); a load's
	// run keeps them in its Bench notes.
	Notes           []string `json:"notes,omitempty"`
	WALFsync        *Latency `json:"wal_fsync,omitempty"`
	BackendCommit   *Latency `json:"backend_commit,omitempty"`
	LeaderChanges   float64  `json:"leader_changes"`
	ProposalsFailed float64  `json:"proposals_failed"`
	// Members holds the same per member when there are several.
	Members []MemberServer `json:"members,omitempty"`
	// Processes holds what this host's kernel says of the members that
	// run on it.
	Processes []MemberProcess `json:"processes,omitempty"`
	// PeerRTTs are the members' round trips to each other.
	PeerRTTs []PeerRTT `json:"peer_rtts,omitempty"`
	// Demand is the cluster's write demand over the window: the most any
	// member committed and applied (every member commits the same
	// proposals), as rates per second.
	Demand *Demand `json:"demand,omitempty"`
	// Databases are the members' databases at the end of the window, from
	// their own gauges.
	Databases []MemberDatabase `json:"databases,omitempty"`
}

// MemberDatabase is a member's database as its gauges state it: the
// file's size (what the quota is held against), the part in use, and
// the quota (0 when etcd does not export it), in bytes.
type MemberDatabase struct {
	Name  string  `json:"name"`
	Size  float64 `json:"size"`
	InUse float64 `json:"in_use,omitempty"`
	Quota float64 `json:"quota,omitempty"`
}

// Demand is the write load a cluster (or a member) carried over a window,
// from etcd's counters, per second.
type Demand struct {
	Seconds float64 `json:"seconds"`
	// ProposalsCommitted is etcd_server_proposals_committed_total's rate:
	// every write (put, delete, txn, lease, compaction) is one proposal.
	ProposalsCommitted float64 `json:"proposals_committed"`
	Puts               float64 `json:"puts"`
	Deletes            float64 `json:"deletes"`
	Txns               float64 `json:"txns"`
	// WALFsyncs is the member's WAL fsyncs per second.
	WALFsyncs float64 `json:"wal_fsyncs"`
	// WALBytes is the bytes it wrote to its WAL per second
	// (etcd_disk_wal_write_bytes_total, etcd 3.4.13 and later; 0 before).
	WALBytes float64 `json:"wal_bytes,omitempty"`
}

// MemberServer is the server section of one member.
type MemberServer struct {
	Name            string   `json:"name"`
	Endpoint        string   `json:"endpoint,omitempty"`
	WALFsync        *Latency `json:"wal_fsync,omitempty"`
	BackendCommit   *Latency `json:"backend_commit,omitempty"`
	LeaderChanges   float64  `json:"leader_changes"`
	ProposalsFailed float64  `json:"proposals_failed"`
	Demand          *Demand  `json:"demand,omitempty"`
}

// Status is the outcome of one check.
type Status string

// The check statuses.
const (
	StatusPass Status = "pass"
	StatusWarn Status = "warn"
	StatusFail Status = "fail"
)

// Check is one criterion judged against one observed value.
type Check struct {
	Name     string  `json:"name"`
	Title    string  `json:"title,omitempty"`
	Status   Status  `json:"status"`
	Observed float64 `json:"observed"`
	// Limit is the value at which the check fails; Warn the value at which it
	// warns (absent when it never warns).
	Limit float64  `json:"limit"`
	Warn  *float64 `json:"warn,omitempty"`
	// Op tells how observed compares with limit to pass: "<", "<=", ">=".
	Op string `json:"op"`
	// Bound is true when Observed is only an upper bound: a quantile in
	// the lowest bucket of etcd's histogram ("<= 1ms").
	Bound  bool   `json:"bound,omitempty"`
	Unit   string `json:"unit"`
	Source string `json:"source,omitempty"`
}

// Evidence is one fact that supports a Finding.
type Evidence struct {
	What     string  `json:"what"`
	Observed float64 `json:"observed"`
	Limit    float64 `json:"limit,omitempty"`
	Unit     string  `json:"unit,omitempty"`
	Source   string  `json:"source,omitempty"`
}

// Finding is a conclusion drawn from the evidence, with what to do.
type Finding struct {
	ID       string   `json:"id"`
	Severity Severity `json:"severity"`
	Title    string   `json:"title"`
	// Cause is what the finding blames, when it blames something: one of
	// the Cause values. Members are the members it names.
	Cause          Cause      `json:"cause,omitempty"`
	Members        []string   `json:"members,omitempty"`
	Evidence       []Evidence `json:"evidence,omitempty"`
	Recommendation string     `json:"recommendation,omitempty"`
}
