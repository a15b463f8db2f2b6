package judge

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
)

// The headroom comes from a measured p99: etcd's WAL fsync when its
// histogram resolved it, the probe's fdatasync when etcd's p99 sat in its
// lowest bucket (only a bound), the floor only when nothing else is known.
func TestFsyncHeadroom(t *testing.T) {
	wal, _ := limits.Lookup(limits.Table, limits.WALFsyncP99)
	r := &result.Result{Checks: []result.Check{limits.Evaluate(wal, 0.001)}}
	cases := []struct {
		name string
		row  result.DoctorTarget
		want float64
	}{
		{"etcd's p99 resolved", result.DoctorTarget{WALFsyncP99: 0.004, DiskSyncP99: 0.002}, 2.5},
		{"at etcd's floor, slower probe", result.DoctorTarget{WALFsyncP99: 0.001, WALFsyncBound: true, DiskSyncP99: 0.004}, 2.5},
		{"at etcd's floor, faster probe", result.DoctorTarget{WALFsyncP99: 0.001, WALFsyncBound: true, DiskSyncP99: 0.0005}, 20},
		{"at etcd's floor, no probe", result.DoctorTarget{WALFsyncP99: 0.001, WALFsyncBound: true}, 10},
		{"probe only", result.DoctorTarget{DiskSyncP99: 0.005}, 2},
		{"nothing", result.DoctorTarget{}, 0},
	}
	for _, c := range cases {
		if got := fsyncHeadroom(r, c.row); got < c.want*0.999 || got > c.want*1.001 {
			t.Errorf("%s: headroom %g, want %g", c.name, got, c.want)
		}
	}
	// An overridden limit is the one the headroom is against.
	r.Checks[0].Limit = 0.005
	if got := fsyncHeadroom(r, result.DoctorTarget{WALFsyncP99: 0.0025}); got != 2 {
		t.Errorf("with --limit wal_fsync_p99=5ms: headroom %g, want 2", got)
	}
}

// A node's member (doctor --node) is named in the findings and the
// summary by the judgement itself, so that judging again keeps them.
func TestNodeMemberNamedByTheJudgement(t *testing.T) {
	r := &result.Result{Kind: result.KindDoctor, Name: "member cp-1 (kubeadm, /etc/kubernetes/manifests/etcd.yaml)",
		Disk:   &result.Disk{Sync: "fdatasync", IOPS: 60, SyncLatency: &result.Latency{Count: 100, P99: 0.030}},
		Doctor: &result.Doctor{Targets: []result.DoctorTarget{{Name: "member cp-1", Member: "cp-1"}}}}
	for range 2 {
		Judge(r, limits.Table)
		if !strings.HasPrefix(r.Summary, "member cp-1: ") || strings.Count(r.Summary, "member cp-1: ") != 1 {
			t.Errorf("summary %q", r.Summary)
		}
		if len(r.Findings) == 0 {
			t.Fatal("no finding on a 30ms fdatasync")
		}
		for _, f := range r.Findings {
			if len(f.Members) != 1 || f.Members[0] != "cp-1" {
				t.Errorf("finding %s names %v, want cp-1", f.ID, f.Members)
			}
		}
	}
}

// One cause per run: where the probe's fdatasync p99 names the disk and
// the capacity sweep's steps show a cap (fast below a ceiling, queued at
// it), the head names the cap and says why; a soak's sustained figure is
// in the summary, and a soak that broke at --soak-rate fails the verdict.
func TestDoctorOneCause(t *testing.T) {
	step := func(offered, wal, fsyncs, iops, util float64, broke ...string) result.CapacityStep {
		st := result.CapacityStep{Offered: offered, Achieved: offered, Seconds: 2, WALFsyncP99: wal, WALFsyncs: fsyncs, DeviceIOPS: iops, DeviceUtil: util, DeviceAwait: 0.004, Broke: broke}
		if len(broke) > 0 {
			st.Cause = result.CauseDisk
		}
		return st
	}
	// A volume capped at 400 IOPS below it, as measured: the probe's
	// fdatasync p50 0.85ms, p99 83.4ms (a throttle's two speeds).
	target := func() *result.Result {
		return &result.Result{Kind: result.KindDoctor, Name: "/mnt/capped",
			Disk: &result.Disk{Sync: "fdatasync", IOPS: 258, SyncLatency: &result.Latency{Count: 600, P50: 0.00085, P99: 0.0834}},
			Capacity: &result.Capacity{ValueSize: 1024, Steps: []result.CapacityStep{step(150, 0.0009, 150, 390, 0.6), step(390, 0.004, 380, 420, 0.97),
				step(1000, 0.03, 410, 425, 0.98, limits.WALFsyncP99), step(620, 0.02, 400, 421, 0.98, limits.WALFsyncP99)}},
			Doctor: &result.Doctor{Targets: []result.DoctorTarget{{Name: "/mnt/capped", Dir: "/mnt/capped"}}}}
	}
	r := target()
	Judge(r, limits.Table)
	if r.Capacity.Cause != result.CauseIOPSCap {
		t.Fatalf("the sweep names %q: %s", r.Capacity.Cause, r.Capacity.Answer)
	}
	if got := r.Doctor.Targets[0].LimitedBy; got != result.CauseIOPSCap || !strings.Contains(r.Summary, "the capacity sweep's steps, fast below a ceiling and queued at it, show") {
		t.Errorf("head %q, summary %q; want the cap and why", got, r.Summary)
	}
	r = target()
	r.Capacity = nil
	Judge(r, limits.Table)
	if got := r.Doctor.Targets[0].LimitedBy; got != result.CauseDisk {
		t.Errorf("without a sweep the head names %q, want the disk its probe measured", got)
	}
	r = target()
	r.Soak = &result.Soak{Rate: 800, RateFrom: "--soak-rate", IntervalSeconds: 5, Seconds: 60}
	for i := range 12 {
		wal := 0.002
		if i >= 8 {
			wal = 0.03
		}
		r.Soak.Series = append(r.Soak.Series, result.SoakSample{T: float64(5 * (i + 1)), Seconds: 5, Achieved: 800, WALFsyncP99: wal, BackendCommitP99: 0.005, WALFsyncs: 800})
	}
	Judge(r, limits.Table)
	if r.Verdict != result.Fail || !strings.Contains(r.Summary, "offered 800 puts/s for 60s, it sustains under 800 puts/s") {
		t.Errorf("a soak that broke at --soak-rate: verdict %s, summary %q", r.Verdict, r.Summary)
	}
	if strings.Contains(r.Summary, "the verdict follows the soak") {
		t.Errorf("the probe failed, yet the summary says the figures before the soak held: %q", r.Summary)
	}
	// A fast disk whose soak broke (burst credits that ran out): the head's
	// figures held, and the summary says the verdict follows the soak.
	soak := r.Soak
	r = target()
	r.Capacity, r.Soak = nil, soak
	r.Disk = &result.Disk{Sync: "fdatasync", IOPS: 5467, SyncLatency: &result.Latency{Count: 10000, P50: 0.00017, P99: 0.00035}}
	Judge(r, limits.Table)
	if r.Verdict != result.Fail || !strings.Contains(r.Summary, "sustains under 800 puts/s (the figures before are the disk probe's, which held their limits: the verdict follows the soak)") {
		t.Errorf("a soak that broke on a fast disk: verdict %s, summary %q", r.Verdict, r.Summary)
	}
}

// When the sweep's writes (the same keys, compacted) carry less than the
// verdict's load held (new keys), the summary says which the storage
// carries; not when the sweep carries more, nor on a cluster, whose
// history is its own.
func TestSweepWordsBelowVerdict(t *testing.T) {
	for _, c := range []struct {
		name      string
		puts, cmp float64
		want      bool
	}{
		{"under the verdict's rate", 38, 1, true},
		{"over it", 2800, 1, false},
		{"a cluster", 38, 0, false},
	} {
		r := &result.Result{Bench: &result.Bench{}, Capacity: &result.Capacity{PutsPerS: c.puts, CompactionSeconds: c.cmp, Steps: []result.CapacityStep{{Offered: 150}}}}
		got := sweepWords(r, result.DoctorTarget{})
		if said := strings.Contains(got, "held 150 puts/s writing new keys") && strings.Contains(got, "the capacity sweep held 38: the storage carries the second"); said != c.want {
			t.Errorf("%s: %q", c.name, got)
		}
	}
}

// A warning that no limit of etcd's writes explains (every check passed,
// no cause named) is not "little headroom": the head says the writes
// passed and which finding warns; a check that warned keeps the cause's
// head.
func TestWarnedByAFinding(t *testing.T) {
	target := func(syncP99 float64) *result.Result {
		return &result.Result{Kind: result.KindDoctor, Name: "/data",
			Disk:           &result.Disk{Sync: "fdatasync", IOPS: 5000, SyncLatency: &result.Latency{Count: 10000, P99: syncP99}},
			ExpectedDefrag: &result.ExpectedDefrag{DBSize: 2 << 30, DBSizeFrom: "etcd's default quota", Rate: 187.5 * (1 << 20), Seconds: 10.9},
			Doctor:         &result.Doctor{Targets: []result.DoctorTarget{{Name: "/data", Dir: "/data"}}}}
	}
	r := target(0.0003)
	Judge(r, limits.Table)
	if r.Verdict != result.Warn || !strings.HasPrefix(r.Summary, "this storage is fast enough for etcd's writes (") ||
		!strings.Contains(r.Summary, "; but a defragmentation of a 2.0 GiB database") || strings.Contains(r.Summary, "little headroom") {
		t.Errorf("a defragmentation's stall alone: verdict %s, summary %q", r.Verdict, r.Summary)
	}
	// The disk near its limit: its own head, whatever else warns.
	r = target(0.009)
	Judge(r, limits.Table)
	if r.Verdict != result.Warn || strings.Contains(r.Summary, "fast enough for etcd's writes") || !strings.Contains(r.Summary, "little headroom") {
		t.Errorf("a disk near its limit: verdict %s, summary %q", r.Verdict, r.Summary)
	}
}
