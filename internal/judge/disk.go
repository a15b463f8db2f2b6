package judge

import (
	"fmt"
	"math"

	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// Disk judges a disk probe: the durable write's p99 and the IOPS.
func Disk(r *result.Result, criteria []limits.Criterion) {
	r.Checks = nil
	diskChecks(r, criteria)
	conclude(r)
	r.Summary = diskSummary(r)
}

// diskChecks adds the checks of a disk section, when it synced anything.
func diskChecks(r *result.Result, criteria []limits.Criterion) {
	if r.Disk == nil {
		return
	}
	if lat := r.Disk.Durable(); lat != nil && lat.Count > 0 {
		limits.Apply(&r.Checks, criteria, limits.DiskSyncP99, lat.P99, false)
		if r.Disk.Rate == 0 {
			// A paced probe (beside a live member) measures the latency
			// of a sync at its pace; its IOPS is that pace.
			limits.Apply(&r.Checks, criteria, limits.DiskIOPS, r.Disk.IOPS, false)
		}
	}
}

func diskSummary(r *result.Result) string {
	var lat *result.Latency
	if r.Disk != nil {
		lat = r.Disk.Durable()
	}
	if lat == nil || lat.Count == 0 {
		return "Nothing was synced, so nothing can be said about the storage for etcd (run with --sync fdatasync)."
	}
	p99 := lat.P99
	limit := diagnose.LimitOf(r, limits.DiskSyncP99)
	what := "fdatasync"
	switch r.Disk.Sync {
	case "fsync":
		what = "fsync"
	case "odsync":
		what = "O_DSYNC write"
	}
	if r.Env != nil && r.Env.Volatile {
		return fmt.Sprintf("%s p99 is %s, but %s is %s: fast because nothing reaches a disk, and not durable.",
			what, units.Seconds(p99), r.Env.Dir, r.Env.FSType)
	}
	switch r.Verdict {
	case result.Fail:
		return fmt.Sprintf("%s p99 is %s, over the %s limit: this storage is too slow for etcd's WAL.", what, units.Seconds(p99), units.Seconds(limit))
	case result.Warn:
		return fmt.Sprintf("%s p99 is %s, under the %s limit but close to it: etcd will run here with little headroom.", what, units.Seconds(p99), units.Seconds(limit))
	}
	h := math.Inf(1)
	if p99 > 0 {
		h = limit / p99
	}
	return fmt.Sprintf("%s p99 is %s, %s: this storage is fast enough for etcd's WAL.",
		what, units.Seconds(p99), units.Headroom(h, "the "+units.Seconds(limit)+" limit"))
}
