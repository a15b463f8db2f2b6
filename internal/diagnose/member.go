package diagnose

import (
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
)

// Member is what a run saw of one etcd member, whichever command saw it
// (bench, check, doctor, metrics, prom check, scale): the rules read every
// Result through it, so that each rule is written once.
type Member struct {
	Name string
	// WALFsync and BackendCommit are etcd's own latencies of the member
	// over the run (a history's p99 alone, for prom check).
	WALFsync, BackendCommit *result.Latency
	// SlowApplies and HeartbeatFailures are etcd's counts of its own loop
	// running late over the run.
	SlowApplies, HeartbeatFailures float64
	// SlowReadIndexes counts linearizable reads that waited too long for
	// the leader's read index.
	SlowReadIndexes float64
	// Process is what this host's kernel says of the member's process: its
	// CPU and its limit, its threads' wait for a CPU, its cgroup's
	// throttling, the device under its WAL; nil when not measured.
	Process *result.MemberProcess
	// PeerRTTs are the round trips from or to the member.
	PeerRTTs []result.PeerRTT
	// DBSize and DBSizeInUse are its database file and the part in use;
	// Quota its --quota-backend-bytes (0: not known). QuotaSource says
	// where the quota comes from.
	DBSize, DBSizeInUse, Quota float64
	QuotaSource                string
	// HostDisk is node-exporter's view of the busiest device of the
	// member's host, from a history (nil: not joined).
	HostDisk *result.PromDisk
	// Demand is the write load the cluster carried over the window (every
	// member commits the same proposals); nil when not measured.
	Demand *result.Demand
	// dbOnly marks a view of the database alone (a scale run's largest
	// member), which the latency rules do not count as a member.
	dbOnly bool
}

// Members reads what r holds of each member, from whichever shape holds
// it: the members of metrics or of a Prometheus history, or the server
// section of bench, check, doctor and scale with the processes beside it,
// the databases of a load check's members, and a scale run's database.
func Members(r *result.Result) []Member {
	var ms []Member
	switch {
	case r.Prom != nil:
		// A history holds each member's p99 over the period, and nothing
		// of its process.
		for _, m := range r.Prom.Members {
			v := Member{Name: m.Instance, SlowApplies: m.Observed["slow_applies"], HeartbeatFailures: m.Observed["heartbeat_failures"],
				SlowReadIndexes: m.Observed["slow_read_indexes"], HostDisk: m.Disk}
			if p99, ok := m.Observed[limits.WALFsyncP99]; ok {
				v.WALFsync = &result.Latency{Count: 1, P99: p99}
			}
			if p99, ok := m.Observed[limits.BackendCommitP99]; ok {
				v.BackendCommit = &result.Latency{Count: 1, P99: p99}
			}
			ms = append(ms, v)
		}
	case r.Metrics != nil:
		for _, m := range r.Metrics.Members {
			o := m.Overall
			if o == nil {
				continue
			}
			ms = append(ms, Member{Name: m.Name, WALFsync: o.WALFsync, BackendCommit: o.BackendCommit,
				SlowApplies: o.SlowApplies, HeartbeatFailures: o.HeartbeatFailures, SlowReadIndexes: o.SlowReadIndexes, Process: m.Process,
				DBSize: o.DBSize, DBSizeInUse: o.DBSizeInUse, Quota: o.Quota, QuotaSource: QuotaMetric})
		}
	case r.Server != nil:
		s := r.Server
		if len(s.Members) == 0 {
			name := ""
			switch {
			case len(s.Processes) == 1:
				name = s.Processes[0].Name
			case r.Target != nil && len(r.Target.Members) == 1:
				name = r.Target.Members[0].Name
			}
			ms = append(ms, Member{Name: name, WALFsync: s.WALFsync, BackendCommit: s.BackendCommit, Process: processOf(s.Processes, name), Demand: s.Demand})
		}
		for _, m := range s.Members {
			ms = append(ms, Member{Name: m.Name, WALFsync: m.WALFsync, BackendCommit: m.BackendCommit, Process: processOf(s.Processes, m.Name), Demand: s.Demand})
		}
		for i := range ms {
			for _, d := range s.Databases {
				if d.Name == ms[i].Name || len(ms) == 1 && len(s.Databases) == 1 {
					ms[i].DBSize, ms[i].DBSizeInUse, ms[i].Quota = d.Size, d.InUse, d.Quota
					if d.Quota > 0 {
						ms[i].QuotaSource = QuotaMetric
					}
				}
			}
		}
	}
	ms = withPerfDatabases(ms, r.Perf)
	for i := range ms {
		for _, p := range peerRTTsOf(r) {
			if p.From == ms[i].Name || p.To == ms[i].Name {
				ms[i].PeerRTTs = append(ms[i].PeerRTTs, p)
			}
		}
	}
	if d := r.DB; d != nil && d.Size > 0 {
		// A database file: etcd holds the quota against its B-tree, and
		// a defragmentation shrinks the file to what is in use.
		ms = append(ms, Member{Name: d.Path, DBSize: d.Size, DBSizeInUse: d.SizeInUse, Quota: d.Quota,
			QuotaSource: d.QuotaSource, dbOnly: true})
	}
	if st, ok := lastStep(r.Scale); ok && st.DBSize > 0 {
		ms = append(ms, Member{Name: "the largest member", DBSize: st.DBSize, DBSizeInUse: st.DBSizeInUse,
			Quota: quotaOf(r.Scale), QuotaSource: quotaSource(r.Scale), dbOnly: true})
	}
	return ms
}

// QuotaMetric is where a member's own quota comes from: its gauge.
const QuotaMetric = "etcd_server_quota_backend_bytes"

// withPerfDatabases adds the databases of a load check's members to the
// members of the same name (the only one, when there is one of each),
// and the members the server section did not name.
func withPerfDatabases(ms []Member, pf *result.Perf) []Member {
	if pf == nil {
		return ms
	}
	for _, pm := range pf.Members {
		i := -1
		for j := range ms {
			if ms[j].Name == pm.Name {
				i = j
			}
		}
		if i < 0 && len(ms) == 1 && len(pf.Members) == 1 {
			i = 0
		}
		if i < 0 {
			ms = append(ms, Member{Name: pm.Name, dbOnly: true})
			i = len(ms) - 1
		}
		ms[i].DBSize, ms[i].DBSizeInUse, ms[i].Quota, ms[i].QuotaSource = pm.DBSize, pm.DBSizeInUse, pm.Quota, QuotaMetric
	}
	return ms
}

// etcdMembers are the members whose etcd metrics or process were read:
// the ones the latency and cause rules judge.
func etcdMembers(r *result.Result) []Member {
	var out []Member
	for _, m := range Members(r) {
		if !m.dbOnly {
			out = append(out, m)
		}
	}
	return out
}

func processOf(procs []result.MemberProcess, name string) *result.MemberProcess {
	for i := range procs {
		if procs[i].Name == name {
			return &procs[i]
		}
	}
	return nil
}

// peerRTTsOf returns the members' round trips to each other.
func peerRTTsOf(r *result.Result) []result.PeerRTT {
	switch {
	case r.Prom != nil:
		return r.Prom.PeerRTTs
	case r.Metrics != nil:
		return r.Metrics.PeerRTTs
	case r.Server != nil:
		return r.Server.PeerRTTs
	}
	return nil
}
