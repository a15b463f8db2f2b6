package memberproc

import (
	"errors"
	"fmt"
	"os"

	"github.com/etcdperf/etcdperf/internal/cgroup"
	"github.com/etcdperf/etcdperf/internal/hoststats"
	"github.com/etcdperf/etcdperf/internal/procstats"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/sysinfo"
)

// Process follows one etcd member process that runs on this host: its
// threads' CPU time and run-queue wait, its CPU cgroup's quota and
// throttling, and the device under its write-ahead log.
type Process struct {
	proc result.MemberProcess
	pid  int
	// group is the cgroup that limits the process, if one does.
	group   cgroup.Group
	limited bool
	device  string
	// ioGroup caps the process's writes on ioDev, when one does.
	ioGroup  cgroup.Group
	ioDev    cgroup.Device
	ioCapped bool
}

// Snapshot is a member process's counters at one instant.
type Snapshot struct {
	Sched   procstats.Sched
	CPU     cgroup.Stat
	Disk    hoststats.DiskCounters
	HasDev  bool
	HostCPU hoststats.CPUCounters
	IO      *cgroup.IOStat
	RSS     float64
	err     error
}

// Open finds out where process pid (the member called name, found
// as found says) keeps its WAL and what limits its CPU. A process that
// holds no etcd files is an error; what cannot be found of the rest is
// said in the member's Error.
func Open(name string, pid int, found string) (*Process, error) {
	host, _ := os.Hostname()
	m := &Process{pid: pid, proc: result.MemberProcess{Name: name, Host: host, PID: pid, Found: found}}
	files, err := procstats.Host.OpenEtcdFiles(pid)
	if err != nil {
		return nil, err
	}
	m.proc.WALDir, m.proc.DataDir = files.WALDir, files.DataDir()
	var problems []error
	where := files.WALDir
	if where == "" {
		where = m.proc.DataDir
	}
	if mt, err := sysinfo.FindMount(where); err == nil {
		m.proc.FSType, m.proc.MountPoint, m.proc.Device, m.proc.Volatile = mt.FSType, mt.MountPoint, mt.Device, mt.Volatile()
		m.proc.RAMDisk = mt.RAMDisk()
		m.device = mt.Device
	} else {
		problems = append(problems, fmt.Errorf("the file system of %s: %w", where, err))
	}
	if g, cores, ok, err := cgroup.Host.Limiting(pid); err == nil && ok {
		m.group, m.limited, m.proc.CPULimit, m.proc.Cgroup = g, true, cores, g.Dir()
	} else if err != nil && !errors.Is(err, cgroup.ErrNoCPUController) {
		problems = append(problems, err)
	}
	if lim, err := cgroup.Host.MemoryLimit(pid); err == nil {
		m.proc.MemoryLimit = float64(lim)
	}
	m.proc.HostMemory = float64(sysinfo.HostMemory())
	// A cap on its writes (cgroup v1 blkio, v2 io.max) on the disk under
	// its data: evidence like its CPU throttling.
	if dev, err := cgroup.Host.DeviceOf(where); err == nil {
		if g, lim, ok, err := cgroup.Host.IOLimiting(pid, dev); err == nil && ok && lim.WriteIOPS > 0 {
			m.ioGroup, m.ioDev, m.ioCapped = g, dev, true
			m.proc.IOPSCap, m.proc.CapDevice = float64(lim.WriteIOPS), dev.Name
			if m.proc.CapDevice == "" {
				m.proc.CapDevice = dev.String()
			}
		}
	}
	if len(problems) > 0 {
		m.proc.Error = errors.Join(problems...).Error()
	}
	return m, nil
}

// Take reads the member's counters now.
func (m *Process) Take() Snapshot {
	var s Snapshot
	if s.Sched, s.err = procstats.Host.ReadSched(m.pid); s.err != nil {
		return s
	}
	if m.limited {
		s.CPU, _ = m.group.Stat()
	}
	s.HostCPU, _ = hoststats.ReadCPU()
	s.RSS, _ = procstats.Host.RSS(m.pid)
	if m.ioCapped {
		if st, err := m.ioGroup.IOStat(m.ioDev); err == nil {
			s.IO = &st
		}
	}
	if m.device != "" {
		if d, err := hoststats.ReadDisk(m.device); err == nil {
			s.Disk, s.HasDev = d, true
		}
	}
	return s
}

// Between returns the member's process figures from a to b.
func (m *Process) Between(a, b Snapshot) result.MemberProcess {
	p := m.proc
	if err := errors.Join(a.err, b.err); err != nil {
		p.Error = err.Error()
		return p
	}
	r := procstats.SchedBetween(a.Sched, b.Sched)
	p.Seconds, p.CPU, p.RunQueueWait, p.SchedWait = r.Seconds, r.CPU, r.Wait, r.WaitPerSlice
	p.RSS = b.RSS
	if m.limited {
		th := cgroup.Between(a.CPU, b.CPU)
		p.Throttled, p.ThrottledTime = th.Share, th.Time
	}
	hs := hoststats.Between(hoststats.Snapshot{At: a.Sched.At, Disk: a.Disk, HasDev: a.HasDev, CPU: a.HostCPU}, hoststats.Snapshot{At: b.Sched.At, Disk: b.Disk, HasDev: b.HasDev, CPU: b.HostCPU})
	p.HostCPUBusy = hs.CPUBusy
	if a.IO != nil && b.IO != nil {
		p.CappedWriteIOPS = cgroup.IOBetween(*a.IO, *b.IO).WriteIOPS
	}
	if a.HasDev && b.HasDev {
		p.DeviceFlushAwait, p.DeviceFlushes, p.DeviceWriteAwait, p.DeviceUtil = hs.FlushAwait, hs.FlushIOPS, hs.WriteAwait, hs.Util
		p.DeviceWriteIOPS, p.DeviceWriteBytes = hs.WriteIOPS, hs.WriteBytes
	}
	return p
}

// Process is what is known of the member before any figure is measured.
func (m *Process) Process() result.MemberProcess { return m.proc }
