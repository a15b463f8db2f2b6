package diskprobe

import "github.com/etcdperf/etcdperf/internal/result"

// Params are the probe's options in a Result's params; engine names what
// ran them (Engine, or fio).
func (o Options) Params(engine string) *result.DiskParams {
	return &result.DiskParams{
		Engine:    engine,
		Dir:       o.Dir,
		BS:        o.BlockSize,
		Size:      o.Size,
		Prealloc:  o.Prealloc,
		Sync:      string(o.Sync),
		Direct:    o.Direct,
		RW:        string(o.RW),
		Jobs:      o.Jobs,
		Runtime:   max(o.Runtime.Seconds(), 0),
		TimeBased: o.TimeBased,
	}
}

// Engine is the built-in probe's name in a Result.
const Engine = "native"

// Disk is what the probe measured, as a Result's disk section (mode: the
// sync it ran with).
func (out *Outcome) Disk(mode SyncMode) *result.Disk {
	d := &result.Disk{
		Engine:    Engine,
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
	if mode == SyncFdatasync || mode == SyncFsync {
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
