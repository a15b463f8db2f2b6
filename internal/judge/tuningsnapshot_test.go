package judge

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/result"
)

// The raft log held between snapshots, with the member's resident
// memory, stays under 80% of its memory: kept when it does, lowered to
// the largest thousand that fits when it does not, a note when none
// fits or when the entries' size or the member's memory is not known;
// the count in force is etcd's default for its version unless stated.
func TestTuneSnapshot(t *testing.T) {
	const mib, gib = 1 << 20, 1 << 30
	f := func(entry, rss, limit float64) snapshotFigures {
		return snapshotFigures{member: "m1", commits: 60000, walBytes: 60000 * entry, seconds: 60, rss: rss, limit: limit, limitFrom: "memory limit of its cgroup"}
	}
	for _, c := range []struct {
		name    string
		f       snapshotFigures
		version string
		stated  float64
		action  string
		value   float64
		inForce float64
		note    string
	}{
		{"small entries, 3.6: its default kept", f(1024, 300*mib, 4*gib), "3.6.5", 0, result.TuneKeep, 10000, 10000, ""},
		{"3.5's default of 100,000 with 16 KiB entries in 2 GiB: lowered", f(16<<10, 500*mib, 2*gib), "3.5.17", 0, result.TuneChange, 67000, 100000, ""},
		{"the same count stated, 3.6: still lowered", f(16<<10, 500*mib, 2*gib), "3.6.5", 100000, result.TuneChange, 67000, 100000, ""},
		{"a member whose memory is nearly full: no count fits", f(16<<10, 1.6*gib, 2*gib), "3.6.5", 0, "", 0, 0, "No --snapshot-count fits"},
		{"no memory known: a note with the figures", f(16<<10, 500*mib, 0), "3.5.17", 0, "", 0, 0, "up to 1.6 GiB of raft entries held in memory"},
		{"an etcd that counts no WAL bytes", snapshotFigures{member: "m1", commits: 100, seconds: 60, limit: 4 * gib}, "3.4.9", 0, "", 0, 0, "etcd_disk_wal_write_bytes_total"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tu := &result.Tuning{}
			if c.stated > 0 {
				tu.Known = []result.FlagValue{{Name: FlagSnapshotCount, Value: c.stated, From: "--current-flag"}}
			}
			tuneSnapshot(tu, c.f, c.version)
			notes := strings.Join(tu.Notes, " | ")
			if c.action == "" {
				if len(tu.Flags) != 0 || !strings.Contains(notes, c.note) {
					t.Errorf("flags %+v, notes %q; want none and a note with %q", tu.Flags, notes, c.note)
				}
				return
			}
			if len(tu.Flags) != 1 {
				t.Fatalf("flags %+v, notes %q", tu.Flags, notes)
			}
			s := tu.Flags[0]
			if s.Action != c.action || s.Suggested != c.value || s.Current != c.inForce || !strings.Contains(s.Why, "memory limit of its cgroup") {
				t.Errorf("got %s %.0f (in force %.0f), why %q; want %s %.0f (in force %.0f)", s.Action, s.Suggested, s.Current, s.Why, c.action, c.value, c.inForce)
			}
		})
	}
}
