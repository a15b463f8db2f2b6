// Package pipeline runs the commands' data flow: measure, fold into stats,
// check and diagnose, and assemble the Result. It prints nothing.
package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/diskprobe"
	"github.com/etcdperf/etcdperf/internal/fio"
	"github.com/etcdperf/etcdperf/internal/hoststats"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/sysinfo"
	"github.com/etcdperf/etcdperf/internal/units"
)

// Engines of the disk probe.
const (
	EngineNative = "native"
	EngineFio    = "fio"
)

// DiskOptions configure `etcdperf disk`.
type DiskOptions struct {
	Probe  diskprobe.Options
	Engine string
	// Criteria are the limits to judge by (check.Table, maybe overridden).
	Criteria []check.Criterion
	// Progress, when not nil, is updated by the native engine as it runs.
	Progress *diskprobe.Progress
}

// Disk probes a directory's storage and judges it for etcd. When the run is
// interrupted or fails midway it returns the partial Result together with
// the error; when nothing could be measured the Result is nil.
func Disk(ctx context.Context, o DiskOptions) (*result.Result, error) {
	res := result.New("disk")
	res.Env = sysinfo.DirEnv(o.Probe.Dir)
	res.Params = diskParams(o)
	// The host's view of the device while the probe runs (iostat-like);
	// optional: a machine without /proc/diskstats still gets its probe.
	sampler, _ := hoststats.Start(res.Env.Device, time.Second)
	var err error
	switch o.Engine {
	case EngineNative, "":
		var out *diskprobe.Outcome
		out, err = diskprobe.Run(ctx, o.Probe, o.Progress)
		if out != nil {
			res.Disk = nativeDisk(out, o.Probe.Sync)
		}
	case EngineFio:
		var rep *fio.Report
		rep, err = fio.Run(ctx, o.Probe)
		if rep != nil {
			res.Disk = rep.Disk(o.Probe.Sync)
		}
	default:
		err = fmt.Errorf("unknown engine %q (use native or fio)", o.Engine)
	}
	if sampler != nil {
		res.Host, _ = sampler.Stop()
	}
	if res.Disk == nil {
		return nil, err
	}
	if err != nil {
		res.Error = err.Error()
	}
	JudgeDisk(res, o.Criteria, o.Probe.Sync)
	res.Finish()
	return res, err
}

func diskParams(o DiskOptions) map[string]any {
	p := map[string]any{
		"engine":   o.Engine,
		"dir":      o.Probe.Dir,
		"bs":       o.Probe.BlockSize,
		"size":     o.Probe.Size,
		"prealloc": o.Probe.Prealloc,
		"sync":     string(o.Probe.Sync),
		"direct":   o.Probe.Direct,
		"rw":       string(o.Probe.RW),
		"jobs":     o.Probe.Jobs,
	}
	if o.Probe.Runtime > 0 {
		p["runtime"] = o.Probe.Runtime.Seconds()
	}
	if o.Probe.TimeBased {
		p["time_based"] = true
	}
	return p
}

func nativeDisk(out *diskprobe.Outcome, mode diskprobe.SyncMode) *result.Disk {
	d := &result.Disk{
		Engine:    EngineNative,
		Ops:       out.Ops,
		Bytes:     out.Bytes,
		Seconds:   out.Elapsed.Seconds(),
		IOPS:      out.IOPS(),
		Bandwidth: out.Bandwidth(),
		Notes:     out.Notes,
	}
	w := out.Write.Latency(true)
	d.WriteLatency = &w
	if mode == diskprobe.SyncFdatasync || mode == diskprobe.SyncFsync {
		s := out.Sync.Latency(true)
		d.SyncLatency = &s
	}
	if len(out.Jobs) > 1 {
		for _, j := range out.Jobs {
			dj := result.DiskJob{File: j.File, Ops: j.Ops, Bytes: j.Bytes}
			if d.SyncLatency != nil {
				s := j.Sync.Latency(false)
				dj.SyncLatency = &s
			}
			d.Jobs = append(d.Jobs, dj)
		}
	}
	return d
}

// DurableLatency returns the latency that stands for "making a write
// durable" in a disk section: the sync call's, or with O_DSYNC the write's.
// It returns nil when nothing was synced.
func DurableLatency(d *result.Disk, mode diskprobe.SyncMode) *result.Latency {
	switch mode {
	case diskprobe.SyncFdatasync, diskprobe.SyncFsync:
		return d.SyncLatency
	case diskprobe.SyncODsync:
		return d.WriteLatency
	}
	return nil
}

// JudgeDisk adds the disk checks, findings, verdict and summary to res.
func JudgeDisk(res *result.Result, criteria []check.Criterion, mode diskprobe.SyncMode) {
	if lat := DurableLatency(res.Disk, mode); lat != nil && lat.Count > 0 {
		if c, ok := check.Lookup(criteria, check.DiskSyncP99); ok {
			res.Checks = append(res.Checks, check.Evaluate(c, lat.P99))
		}
		if c, ok := check.Lookup(criteria, check.DiskIOPS); ok {
			res.Checks = append(res.Checks, check.Evaluate(c, res.Disk.IOPS))
		}
	}
	res.Findings = diagnose.Run(res)
	res.Verdict = diagnose.Verdict(res.Checks, res.Findings)
	res.Summary = diskSummary(res, mode)
}

func diskSummary(res *result.Result, mode diskprobe.SyncMode) string {
	lat := DurableLatency(res.Disk, mode)
	if lat == nil || lat.Count == 0 {
		return "Nothing was synced, so nothing can be said about the storage for etcd (run with --sync fdatasync)."
	}
	p99 := lat.P99
	limit := 0.010
	for _, c := range res.Checks {
		if c.Name == check.DiskSyncP99 {
			limit = c.Limit
		}
	}
	what := "fdatasync"
	switch mode {
	case diskprobe.SyncFsync:
		what = "fsync"
	case diskprobe.SyncODsync:
		what = "O_DSYNC write"
	}
	if res.Env != nil && res.Env.Volatile {
		return fmt.Sprintf("%s p99 is %s, but %s is %s: fast because nothing reaches a disk, and not durable.",
			what, units.Seconds(p99), res.Env.Dir, res.Env.FSType)
	}
	switch res.Verdict {
	case result.Fail:
		return fmt.Sprintf("%s p99 is %s, over the %s limit: this storage is too slow for etcd's WAL.", what, units.Seconds(p99), units.Seconds(limit))
	case result.Warn:
		return fmt.Sprintf("%s p99 is %s, under the %s limit but close to it: etcd will run here with little headroom.", what, units.Seconds(p99), units.Seconds(limit))
	}
	return fmt.Sprintf("%s p99 is %s, %s under the %s limit: this storage is fast enough for etcd's WAL.",
		what, units.Seconds(p99), headroom(p99, limit), units.Seconds(limit))
}

func headroom(v, limit float64) string {
	if v <= 0 {
		return "far"
	}
	r := limit / v
	if r >= 2 {
		return fmt.Sprintf("%.0fx", r)
	}
	return fmt.Sprintf("%.0f%%", (1-v/limit)*100)
}
