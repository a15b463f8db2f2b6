package fio

import (
	"github.com/etcdperf/etcdperf/internal/diskprobe"
	"github.com/etcdperf/etcdperf/internal/result"
)

// Latency converts a fio latency summary (nanoseconds) to a Latency in
// seconds. fio reports no histogram, so the result carries no HDR.
func (l LatNS) Latency() *result.Latency {
	p := func(q float64) float64 {
		v, _ := l.Percentile(q)
		return v / 1e9
	}
	return &result.Latency{
		Count:  l.N,
		Min:    l.Min / 1e9,
		Mean:   l.Mean / 1e9,
		Stddev: l.Stddev / 1e9,
		Max:    l.Max / 1e9,
		P50:    p(50),
		P90:    p(90),
		P99:    p(99),
		P999:   p(99.9),
		P9999:  p(99.99),
	}
}

// Disk turns the first job (the group, with group_reporting) of a report
// into the disk section of a Result. With SyncODsync and SyncNone there is
// no separate sync call and no sync latency.
func (r *Report) Disk(mode diskprobe.SyncMode) *result.Disk {
	j := r.Jobs[0]
	secs := float64(j.Write.Runtime) / 1e3
	d := &result.Disk{
		Engine:        "fio",
		Sync:          string(mode),
		EngineVersion: r.Version,
		Ops:           j.Write.TotalIOs,
		Bytes:         j.Write.IOBytes,
		Seconds:       secs,
		IOPS:          j.Write.IOPS,
		Bandwidth:     j.Write.BWBytes,
		WriteLatency:  j.Write.CompLat.Latency(),
	}
	if mode == diskprobe.SyncFdatasync || mode == diskprobe.SyncFsync {
		d.SyncLatency = j.Sync.Lat.Latency()
	}
	return d
}
