package judge

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/result"
)

// The headroom comes from a measured p99: etcd's WAL fsync when its
// histogram resolved it, the probe's fdatasync when etcd's p99 sat in its
// lowest bucket (only a bound), the floor only when nothing else is known.
func TestFsyncHeadroom(t *testing.T) {
	wal, _ := check.Lookup(check.Table, check.WALFsyncP99)
	r := &result.Result{Checks: []result.Check{check.Evaluate(wal, 0.001)}}
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
		Judge(r, check.Table)
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
