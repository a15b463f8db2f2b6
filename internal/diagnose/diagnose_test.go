package diagnose

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
)

func diskResult(p99 float64, fs string, volatile bool, sync string) *result.Result {
	r := result.New("disk")
	r.Env = &result.Env{Dir: "/d", FSType: fs, Volatile: volatile}
	r.Disk = &result.Disk{Sync: sync}
	c, _ := limits.Lookup(limits.Table, limits.DiskSyncP99)
	r.Checks = []result.Check{limits.Evaluate(c, p99)}
	return r
}

func ids(fs []result.Finding) map[string]result.Severity {
	m := map[string]result.Severity{}
	for _, f := range fs {
		m[f.ID] = f.Severity
	}
	return m
}

func TestDiskRules(t *testing.T) {
	cases := []struct {
		name    string
		r       *result.Result
		want    map[string]result.Severity
		verdict result.Verdict
	}{
		{"fast ext4", diskResult(0.0004, "ext4", false, "fdatasync"), map[string]result.Severity{}, result.Pass},
		{"slow ext4", diskResult(0.0198, "ext4", false, "fdatasync"), map[string]result.Severity{"disk_too_slow": result.Critical}, result.Fail},
		{"close to limit", diskResult(0.009, "xfs", false, "fdatasync"), map[string]result.Severity{"disk_little_headroom": result.Warning}, result.Warn},
		{"tmpfs", diskResult(0.000002, "tmpfs", true, "fdatasync"), map[string]result.Severity{"volatile_storage": result.Warning}, result.Warn},
		{"no sync", diskResult(0.000002, "ext4", false, "none"), map[string]result.Severity{"no_sync": result.Info}, result.Pass},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := Run(c.r)
			got := ids(fs)
			if len(got) != len(c.want) {
				t.Errorf("findings %v, want %v", got, c.want)
			}
			for id, sev := range c.want {
				if got[id] != sev {
					t.Errorf("finding %s: %q, want %q (all: %v)", id, got[id], sev, got)
				}
			}
			for _, f := range fs {
				if f.Title == "" || (f.Severity != result.Info && f.Recommendation == "") {
					t.Errorf("finding %s lacks a title or recommendation", f.ID)
				}
			}
			if v := Verdict(c.r.Checks, fs); v != c.verdict {
				t.Errorf("verdict %s, want %s", v, c.verdict)
			}
		})
	}
}

func TestFindingsSortedBySeverity(t *testing.T) {
	fs := []result.Finding{{ID: "a", Severity: result.Info}, {ID: "b", Severity: result.Critical}, {ID: "c", Severity: result.Warning}, {ID: "d", Severity: result.Critical}}
	sortBySeverity(fs)
	want := []string{"b", "d", "c", "a"}
	for i, f := range fs {
		if f.ID != want[i] {
			t.Fatalf("order %v, want %v", fs, want)
		}
	}
}

func TestHostRules(t *testing.T) {
	r := diskResult(0.007, "ext4", false, "fdatasync")
	r.Disk.SyncLatency = &result.Latency{P99: 0.007}
	r.Host = &result.Host{Device: "vda", Summary: result.HostSample{CPUBusy: 0.92, FlushAwait: 0.0002, Steal: 0.15}}
	got := ids(Run(r))
	// A busy host is a fact (info); so is steal while etcd held every
	// limit: a verdict that followed it would follow the VM's neighbours.
	if got["host_cpu_saturated"] != result.Info || got["host_cpu_steal"] != result.Info {
		t.Errorf("findings %v, want CPU saturation and steal as facts (info) when every check passed", got)
	}
	// A limit failed or came near: the steal is part of the explanation.
	for _, st := range []result.Status{result.StatusWarn, result.StatusFail} {
		r.Checks = []result.Check{{Name: limits.WALFsyncP99, Status: result.StatusPass}, {Name: limits.BackendCommitP99, Status: st}}
		if got := ids(Run(r)); got["host_cpu_steal"] != result.Warning {
			t.Errorf("a check at %s: findings %v, want the steal as a warning", st, got)
		}
	}
	r.Checks = nil
	r.Host.Summary = result.HostSample{CPUBusy: 0.3, Steal: 0.01}
	got = ids(Run(r))
	if _, ok := got["host_cpu_saturated"]; ok {
		t.Errorf("quiet host flagged: %v", got)
	}
}

// A slow fdatasync on storage in memory, or on a saturated machine whose
// device flushed far faster, is the CPU's: disk_too_slow must not blame
// the disk next to volatile_storage or host_cpu_saturated.
func TestDiskTooSlowNotTheDiskWhenCPUStarved(t *testing.T) {
	cases := []struct {
		name string
		r    *result.Result
		want string
	}{
		{"tmpfs", diskResult(0.015, "tmpfs", true, "fdatasync"), "disk_too_slow_cpu"},
		{"busy CPUs, fast device", diskResult(0.015, "ext4", false, "fdatasync"), "disk_too_slow_cpu"},
		{"close to the limit, busy CPUs", diskResult(0.009, "ext4", false, "fdatasync"), "disk_little_headroom_cpu"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.r.Host = &result.Host{Device: "vda", Summary: result.HostSample{CPUBusy: 0.95, FlushIOPS: 100, FlushAwait: 0.0002}}
			var got *result.Finding
			fs := Run(c.r)
			for i := range fs {
				if strings.HasPrefix(fs[i].ID, "disk_") {
					got = &fs[i]
				}
			}
			if got == nil || got.ID != c.want {
				t.Fatalf("findings %v, want %s", ids(fs), c.want)
			}
			if strings.Contains(got.Title, "disk is too slow") || strings.Contains(got.Title, "disk has little headroom") ||
				!strings.Contains(got.Title, "not to a disk") || got.Recommendation != cpuAdvice {
				t.Errorf("%s: title %q, advice %q: want the CPU blamed, not the disk", got.ID, got.Title, got.Recommendation)
			}
		})
	}
	// A saturated machine whose device was as slow as the fsync: the disk.
	r := diskResult(0.015, "ext4", false, "fdatasync")
	r.Host = &result.Host{Device: "vda", Summary: result.HostSample{CPUBusy: 0.95, FlushIOPS: 100, FlushAwait: 0.012}}
	if got := ids(Run(r)); got["disk_too_slow"] != result.Critical {
		t.Errorf("slow device on a busy machine: findings %v, want disk_too_slow", got)
	}
}

// The levels of the rules come from limits.Table, or from the limits a
// Result records (set with --limit).
func TestRulesHonourLimits(t *testing.T) {
	r := diskResult(0.007, "ext4", false, "fdatasync")
	r.Host = &result.Host{Device: "vda", Summary: result.HostSample{CPUBusy: 0.3, Steal: 0.15}}
	if got := ids(Run(r)); got["host_cpu_steal"] != result.Info {
		t.Fatalf("findings %v, want steal over limits.Table's 10%%", got)
	}
	r.Limits = []result.Limit{{Name: limits.HostCPUSteal, Limit: 0.2}}
	if got := ids(Run(r)); got["host_cpu_steal"] != "" {
		t.Errorf("findings %v, want no steal under a level set at 20%%", got)
	}
	r.Limits = []result.Limit{{Name: limits.HostCPUBusy, Limit: 0.25}}
	got := Run(r)
	if ids(got)["host_cpu_saturated"] != result.Info {
		t.Fatalf("findings %v, want a busy host at a level set at 25%%", ids(got))
	}
	for _, f := range got {
		if f.ID == "host_cpu_saturated" && f.Evidence[0].Limit != 0.25 {
			t.Errorf("evidence %+v, want the level set as its limit", f.Evidence[0])
		}
	}
}
