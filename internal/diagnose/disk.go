package diagnose

import (
	"fmt"

	"github.com/etcdperf/etcdperf/internal/limits"
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
		Recommendation: "A RAM disk is fine for a throw-away etcd (a CI cluster rebuilt for every run), " +
			"never for a cluster whose data must survive a reboot: measure the disk etcd will really use.",
	}}
}

// diskAdvice is what to do about a disk too slow for etcd.
const diskAdvice = result.DiskRemedy

func diskTooSlow(r *result.Result) []result.Finding {
	c, ok := FindCheck(r, limits.DiskSyncP99)
	if !ok || c.Status == result.StatusPass {
		return nil
	}
	f := result.Finding{
		ID:             "disk_too_slow",
		Cause:          result.CauseDisk,
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
	c, ok := FindCheck(r, limits.DiskIOPS)
	if !ok || c.Status != result.StatusFail {
		return nil
	}
	return []result.Finding{{
		ID:             "disk_low_iops",
		Severity:       result.Critical,
		Cause:          result.CauseDisk,
		Title:          fmt.Sprintf("The disk completes only %.0f synced writes per second; etcd needs at least %.0f", c.Observed, c.Limit),
		Evidence:       []result.Evidence{EvidenceOf(c)},
		Recommendation: diskAdvice,
	}}
}

func noSync(r *result.Result) []result.Finding {
	if r.Disk == nil || r.Disk.Sync != "none" {
		return nil
	}
	return []result.Finding{{
		ID:             "no_sync",
		Severity:       result.Info,
		Title:          "--sync none measures the page cache, not the storage: etcd syncs every WAL write",
		Recommendation: "Run with the default --sync fdatasync to judge the storage for etcd.",
	}}
}

// blameCPU turns the disk probe's finding about a slow fdatasync into one
// about the CPU, for a Result where cpuStarved holds (the probe runs in
// etcdperf's own process, on the host whose CPUs and device were read):
// its ID gains "_cpu", its title says how fast the device (or memory)
// was, and its advice is the CPU's.
func blameCPU(f *result.Finding, r *result.Result) {
	f.ID += "_cpu"
	f.Cause = result.CauseCPU
	f.Title += fmt.Sprintf(", yet %s while the CPUs were %.0f%% busy: the time went to waiting for a CPU, not to a disk",
		deviceTime(r), r.Host.Summary.CPUBusy*100)
	f.Evidence = append(f.Evidence, result.Evidence{What: "CPU busy (all CPUs)", Observed: r.Host.Summary.CPUBusy, Limit: LimitOf(r, limits.HostCPUBusy), Unit: "ratio", Source: "/proc/stat"})
	f.Recommendation = cpuAdvice
}

const cpuAdvice = "Give etcd CPUs of its own: do not co-locate it with builds, workers or a load generator, and keep its process above batch work " +
	"(nice, cgroup CPU weight); measure again on a quiet machine to judge the disk alone."

// cpuStarved reports that the probe's slow fdatasync p99 came from waiting
// for a CPU rather than for the device: the storage is in memory, where an
// fsync does no I/O, or the machine's CPUs were saturated while the device
// completed its flushes (or writes) in a tenth of that time.
func cpuStarved(r *result.Result, p99 float64) bool {
	if r.Env != nil && r.Env.Volatile {
		return r.Host != nil
	}
	h := r.Host
	if h == nil || h.Summary.CPUBusy < LimitOf(r, limits.HostCPUBusy) {
		return false
	}
	dev := deviceServiceTime(h)
	return h.Device != "" && dev > 0 && dev*LimitOf(r, limits.DeviceFastFactor) <= p99
}

// deviceServiceTime is the device's mean flush time, or its mean write
// time on kernels that do not count flushes.
func deviceServiceTime(h *result.Host) float64 {
	if h.Summary.FlushIOPS > 0 {
		return h.Summary.FlushAwait
	}
	return h.Summary.WriteAwait
}

// deviceTime says how fast the device itself was.
func deviceTime(r *result.Result) string {
	h := r.Host
	if r.Env != nil && r.Env.Volatile {
		return r.Env.Dir + " is in memory (" + r.Env.FSType + ")"
	}
	what := "flushed its cache"
	if h.Summary.FlushIOPS == 0 {
		what = "completed a write"
	}
	return fmt.Sprintf("the device %s in %s on average", what, units.Seconds(deviceServiceTime(h)))
}
