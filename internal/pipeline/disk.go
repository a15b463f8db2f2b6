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
	EngineNative = diskprobe.Engine
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
	res.Params = o.Probe.Params(o.Engine)
	// The host's view of the device while the probe runs (iostat-like);
	// optional: a machine without /proc/diskstats still gets its probe.
	sampler, hostErr := hoststats.Start(res.Env.Device, time.Second)
	var err error
	switch o.Engine {
	case EngineNative, "":
		var out *diskprobe.Outcome
		out, err = diskprobe.Run(ctx, o.Probe, o.Progress)
		if out != nil {
			res.Disk = out.Disk(o.Probe.Sync)
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
