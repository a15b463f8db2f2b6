package diagnose

import (
	"fmt"

	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

func init() {
	Register(
		Rule{ID: "volatile_storage", Apply: volatileStorage},
		Rule{ID: "disk_too_slow", Apply: diskTooSlow},
		Rule{ID: "disk_low_iops", Apply: diskLowIOPS},
		Rule{ID: "no_sync", Apply: noSync},
	)
}

func volatileStorage(r *result.Result) []result.Finding {
	if r.Env == nil || !r.Env.Volatile {
		return nil
	}
	return []result.Finding{{
		ID:       "volatile_storage",
		Severity: result.Warning,
		Title: fmt.Sprintf("%s is on %s, in memory: fdatasync is a no-op there, so this measured RAM, not a disk, and the data is lost on reboot",
			r.Env.Dir, r.Env.FSType),
		Evidence: []result.Evidence{{What: "file system type of " + r.Env.Dir + " is " + r.Env.FSType, Source: "/proc/self/mountinfo"}},
		Recommendation: "A RAM disk is fine for a throw-away etcd in CI (the CI team of the first field report moved etcd to tmpfs on purpose), " +
			"never for a cluster whose data must survive a reboot: measure the disk etcd will really use.",
	}}
}

const diskAdvice = "Put etcd's data dir (at least its WAL, --wal-dir) on a dedicated SSD/NVMe or provisioned-IOPS volume, " +
	"keep image pulls, builds and logs of neighbouring workloads off that device, and give etcd I/O priority (ionice -c2 -n0)."

func diskTooSlow(r *result.Result) []result.Finding {
	c, ok := FindCheck(r, check.DiskSyncP99)
	if !ok || c.Status == result.StatusPass {
		return nil
	}
	f := result.Finding{
		ID:             "disk_too_slow",
		Evidence:       []result.Evidence{EvidenceOf(c)},
		Recommendation: diskAdvice,
	}
	if c.Status == result.StatusFail {
		f.Severity = result.Critical
		f.Title = fmt.Sprintf("The disk is too slow for etcd: fdatasync p99 is %s, over the %s limit; expect slow applies, missed heartbeats and leader elections under load",
			units.Seconds(c.Observed), units.Seconds(c.Limit))
	} else {
		f.Severity = result.Warning
		f.Title = fmt.Sprintf("The disk has little headroom for etcd: fdatasync p99 is %s, close to the %s limit", units.Seconds(c.Observed), units.Seconds(c.Limit))
		f.ID = "disk_little_headroom"
	}
	// On storage in memory, or with the CPUs saturated while the device
	// answered far faster, the p99 is the CPU's, not the disk's.
	if cpuStarved(r, c.Observed) {
		where := "over"
		if c.Status != result.StatusFail {
			where = "close to"
		}
		f.Title = fmt.Sprintf("fdatasync p99 is %s, %s the %s limit", units.Seconds(c.Observed), where, units.Seconds(c.Limit))
		blameCPU(&f, r)
	}
	return []result.Finding{f}
}

func diskLowIOPS(r *result.Result) []result.Finding {
	c, ok := FindCheck(r, check.DiskIOPS)
	if !ok || c.Status != result.StatusFail {
		return nil
	}
	return []result.Finding{{
		ID:             "disk_low_iops",
		Severity:       result.Critical,
		Title:          fmt.Sprintf("The disk completes only %.0f synced writes per second; etcd needs at least %.0f", c.Observed, c.Limit),
		Evidence:       []result.Evidence{EvidenceOf(c)},
		Recommendation: diskAdvice,
	}}
}

func noSync(r *result.Result) []result.Finding {
	if r.Disk == nil || r.Params["sync"] != "none" {
		return nil
	}
	return []result.Finding{{
		ID:             "no_sync",
		Severity:       result.Info,
		Title:          "--sync none measures the page cache, not the storage: etcd syncs every WAL write",
		Recommendation: "Run with the default --sync fdatasync to judge the storage for etcd.",
	}}
}
