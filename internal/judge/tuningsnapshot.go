package judge

import (
	"fmt"
	"math"
	"strings"

	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// etcd's --snapshot-count, and what it keeps in memory.
const (
	FlagSnapshotCount = "snapshot-count"
	// catchUpEntries are the entries etcd keeps after a snapshot for slow
	// followers (etcdserver's SnapshotCatchUpEntries).
	catchUpEntries = 5000
	// memoryShare is the share of the member's memory (its cgroup's
	// limit, else its host's) that its resident memory and the raft log
	// held at its peak may take: the rest is the page cache of its
	// database and the other processes.
	memoryShare    = 0.8
	snapshotSource = "etcd maintenance guide, https://etcd.io/docs/v3.6/op-guide/maintenance/#raft-log-retention (a higher --snapshot-count holds more raft entries in memory until the snapshot); " +
		"etcd 3.6 lowered its default from 100,000 to 10,000 (CHANGELOG-3.6)"
)

// snapshotFigures are what --snapshot-count is computed from: one
// member's writes (committed proposals and the WAL bytes they made over
// seconds), its resident memory, and the memory it may use.
type snapshotFigures struct {
	member                     string
	commits, walBytes, seconds float64
	rss                        float64
	// limit is the memory the member may use and limitFrom what sets it
	// (its cgroup, or its host); 0 when its process is not on this host.
	limit     float64
	limitFrom string
}

// snapshotDefault is etcd's default --snapshot-count for its version.
func snapshotDefault(version string) float64 {
	var major, minor int
	if _, err := fmt.Sscanf(version, "%d.%d", &major, &minor); err == nil && (major > 3 || major == 3 && minor >= 6) {
		return 10000
	}
	return 100000
}

// tuneSnapshot suggests --snapshot-count where the member's memory calls
// for it: between two snapshots etcd keeps every raft entry in memory
// (the count in force, plus 5,000 for slow followers), each about the
// WAL bytes per committed proposal; with the member's resident memory,
// that peak must stay under memoryShare of its memory limit. A count
// that fits is kept; one that does not is lowered to the largest
// thousand that fits; when none above 1,000 fits, a note says to give the
// member more memory.
func tuneSnapshot(t *result.Tuning, f snapshotFigures, version string) {
	inForce, known := t.Value(FlagSnapshotCount)
	if !known {
		inForce = result.FlagValue{Name: FlagSnapshotCount, Value: snapshotDefault(version), From: "etcd " + version + "'s default"}
		if version == "" {
			inForce.From = "etcd's default before 3.6"
		}
		t.Known = append(t.Known, inForce)
	}
	if f.commits <= 0 || f.walBytes <= 0 || f.seconds <= 0 {
		t.Notes = append(t.Notes, "--snapshot-count is not computed: it needs the size of the raft entries, which etcd counts from 3.4.13 on (etcd_disk_wal_write_bytes_total), and writes during the run.")
		return
	}
	entry := f.walBytes / f.commits
	rate := f.commits / f.seconds
	held := (inForce.Value + catchUpEntries) * entry
	figure := fmt.Sprintf("%s wrote %s entries/s of %s on average: at %.0f, a snapshot every %s at that rate, and up to %s of raft entries held in memory between two (%.0f + %d for slow followers)",
		f.member, rateWords(rate), units.Bytes(entry), inForce.Value, spanWords(inForce.Value/rate), units.Bytes(held), inForce.Value, catchUpEntries)
	if f.limit <= 0 {
		t.Notes = append(t.Notes, "--snapshot-count is not computed: "+figure+"; the member's memory is not known here (its process is not on this host: etcdperf doctor --node on its node reads it).")
		return
	}
	budget := memoryShare * f.limit
	why := fmt.Sprintf("%s; with its resident memory of %s that peak is %s of the %s %s (%.0f%% at most, the rest for its database's page cache)",
		figure, units.Bytes(f.rss), units.Bytes(f.rss+held), units.Bytes(f.limit), f.limitFrom, memoryShare*100)
	fl := result.TunedFlag{Name: FlagSnapshotCount, Unit: "entries", Current: inForce.Value, CurrentFrom: inForce.From, Source: snapshotSource, Why: why}
	if f.rss+held <= budget {
		fl.Suggested, fl.Action = inForce.Value, result.TuneKeep
		t.Flags = append(t.Flags, fl)
		return
	}
	fits := math.Floor(((budget-f.rss)/entry-catchUpEntries)/1000) * 1000
	if fits < 1000 {
		t.Notes = append(t.Notes, fmt.Sprintf("No --snapshot-count fits the member's memory: %s; give the member more memory.", why))
		return
	}
	fl.Suggested, fl.Action = fits, result.TuneChange
	t.Flags = append(t.Flags, fl)
}

// snapshotTuning adds --snapshot-count to r's tuning, from the member
// that wrote the most to its WAL (metrics), or the node's (doctor
// --node), with its memory where its process is on this host.
func snapshotTuning(r *result.Result) {
	version := ""
	if r.Env != nil {
		version = strings.TrimPrefix(r.Env.EtcdVersion, "v")
	}
	var f snapshotFigures
	if r.Metrics != nil {
		for _, m := range r.Metrics.Members {
			if o := m.Overall; o != nil && (o.WALBytes > f.walBytes || f.member == "") {
				f = snapshotFigures{member: m.Name, commits: o.ProposalsCommitted, walBytes: o.WALBytes, seconds: o.Seconds, rss: o.RSS}
				f.limit, f.limitFrom = memoryOf(m.Process)
			}
		}
	} else {
		for _, m := range diagnose.Members(r) {
			if m.Demand == nil || m.Process == nil {
				continue
			}
			f = snapshotFigures{member: m.Name, commits: m.Demand.ProposalsCommitted * m.Demand.Seconds, walBytes: m.Demand.WALBytes * m.Demand.Seconds,
				seconds: m.Demand.Seconds, rss: m.Process.RSS}
			f.limit, f.limitFrom = memoryOf(m.Process)
		}
	}
	if f.member == "" {
		return
	}
	tuneSnapshot(r.Tuning, f, version)
}

// memoryOf is the memory a member's process may use: its cgroup's limit,
// else its host's.
func memoryOf(p *result.MemberProcess) (float64, string) {
	switch {
	case p == nil:
		return 0, ""
	case p.MemoryLimit > 0 && (p.HostMemory <= 0 || p.MemoryLimit < p.HostMemory):
		return p.MemoryLimit, "memory limit of its cgroup"
	case p.HostMemory > 0:
		return p.HostMemory, "memory of its host " + p.Host
	}
	return 0, ""
}

// rateWords is a rate with three significant digits, never in
// exponent form: "1250", "12.5", "0.025".
func rateWords(r float64) string {
	if r >= 100 {
		return fmt.Sprintf("%.0f", r)
	}
	return fmt.Sprintf("%.3g", r)
}
