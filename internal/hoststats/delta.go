package hoststats

import (
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
)

// Snapshot is the device and CPU counters at one instant.
type Snapshot struct {
	At     time.Time
	Disk   DiskCounters
	HasDev bool
	CPU    CPUCounters
}

// Take reads the counters now. device may be "" (no block device, e.g.
// tmpfs): then only the CPU is read.
func Take(device string) (Snapshot, error) {
	s := Snapshot{At: time.Now()}
	var err error
	if s.CPU, err = ReadCPU(); err != nil {
		return s, err
	}
	if device != "" {
		if s.Disk, err = ReadDisk(device); err != nil {
			return s, err
		}
		s.HasDev = true
	}
	return s, nil
}

// Between returns the USE metrics of the interval from a to b.
func Between(a, b Snapshot) result.HostSample {
	secs := b.At.Sub(a.At).Seconds()
	hs := result.HostSample{Seconds: secs}
	if ct := float64(b.CPU.Total() - a.CPU.Total()); ct > 0 {
		hs.IOWait = float64(b.CPU.IOWait-a.CPU.IOWait) / ct
		hs.Steal = float64(b.CPU.Steal-a.CPU.Steal) / ct
		busy := ct - float64(b.CPU.Idle-a.CPU.Idle) - float64(b.CPU.IOWait-a.CPU.IOWait)
		hs.CPUBusy = busy / ct
	}
	if a.HasDev && b.HasDev && secs > 0 {
		d := func(x, y uint64) float64 {
			if y < x { // counter wrapped or device re-created
				return 0
			}
			return float64(y - x)
		}
		wios := d(a.Disk.WriteIOs, b.Disk.WriteIOs)
		hs.Util = min(1, d(a.Disk.IOMs, b.Disk.IOMs)/1e3/secs)
		hs.WriteIOPS = wios / secs
		hs.WriteBytes = d(a.Disk.WriteSectors, b.Disk.WriteSectors) * 512 / secs
		hs.ReadIOPS = d(a.Disk.ReadIOs, b.Disk.ReadIOs) / secs
		if wios > 0 {
			hs.WriteAwait = d(a.Disk.WriteMs, b.Disk.WriteMs) / 1e3 / wios
			hs.AvgWriteSize = d(a.Disk.WriteSectors, b.Disk.WriteSectors) * 512 / wios
		}
		hs.QueueDepth = d(a.Disk.WeightedMs, b.Disk.WeightedMs) / 1e3 / secs
		if a.Disk.HasFlush && b.Disk.HasFlush {
			f := d(a.Disk.FlushIOs, b.Disk.FlushIOs)
			hs.FlushIOPS = f / secs
			if f > 0 {
				hs.FlushAwait = d(a.Disk.FlushMs, b.Disk.FlushMs) / 1e3 / f
			}
		}
	}
	return hs
}
