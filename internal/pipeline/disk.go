package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/etcdperf/etcdperf/internal/diskprobe"
	"github.com/etcdperf/etcdperf/internal/fio"
	"github.com/etcdperf/etcdperf/internal/hoststats"
	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/sysinfo"
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
	// Criteria are the limits to judge by (limits.Table, maybe overridden).
	Criteria []limits.Criterion
	// Progress, when not nil, is updated by the native engine as it runs.
	Progress *diskprobe.Progress
}

// Disk probes a directory's storage and judges it for etcd. When the run is
// interrupted or fails midway it returns the partial Result together with
// the error; when nothing could be measured the Result is nil.
func Disk(ctx context.Context, o DiskOptions) (*result.Result, error) {
	res, err := probeDisk(ctx, o)
	if res != nil {
		judge.Judge(res, o.Criteria)
		res.Finish()
	}
	return res, err
}

// probeDisk is Disk's measurement, shared with doctor, which judges it as
// a part of its target.
func probeDisk(ctx context.Context, o DiskOptions) (*result.Result, error) {
	res := result.New(result.KindDisk)
	res.Env = sysinfo.DirEnv(o.Probe.Dir)
	res.Params = diskParams(o)
	// The host's view of the device while the probe runs (iostat-like);
	// optional: a machine without /proc/diskstats still gets its probe.
	sampler, hostErr := hoststats.Start(res.Env.Device, time.Second)
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
		res.Host, hostErr = sampler.Stop()
	}
	if res.Disk == nil {
		return nil, err
	}
	if hostErr != nil {
		res.Disk.Notes = append(res.Disk.Notes, fmt.Sprintf("the device %s could not be read while the probe ran (%v): its utilisation and queue are not judged", res.Env.Device, hostErr))
	}
	if err != nil {
		res.Error = errorText(err)
	}
	return res, err
}

func diskParams(o DiskOptions) *result.DiskParams {
	return &result.DiskParams{
		Engine:    o.Engine,
		Dir:       o.Probe.Dir,
		BS:        o.Probe.BlockSize,
		Size:      o.Probe.Size,
		Prealloc:  o.Probe.Prealloc,
		Sync:      string(o.Probe.Sync),
		Direct:    o.Probe.Direct,
		RW:        string(o.Probe.RW),
		Jobs:      o.Probe.Jobs,
		Runtime:   max(o.Probe.Runtime.Seconds(), 0),
		TimeBased: o.Probe.TimeBased,
	}
}

func nativeDisk(out *diskprobe.Outcome, mode diskprobe.SyncMode) *result.Disk {
	d := &result.Disk{
		Engine:    EngineNative,
		Sync:      string(mode),
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
