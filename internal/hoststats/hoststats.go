// Package hoststats reads the host's USE signals for the storage under
// test, as iostat and node-exporter do: per-device I/O counters from
// /proc/diskstats and CPU time (iowait, steal) from /proc/stat.
package hoststats

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// DiskCounters are one device's cumulative counters from /proc/diskstats.
// Times are milliseconds, as the kernel counts them.
type DiskCounters struct {
	ReadIOs, ReadSectors, ReadMs                 uint64
	WriteIOs, WriteMerges, WriteSectors, WriteMs uint64
	InFlight, IOMs, WeightedMs                   uint64
	FlushIOs, FlushMs                            uint64
	HasFlush                                     bool // kernel >= 5.5
}

// CPUCounters are the machine's cumulative CPU times from /proc/stat, in
// clock ticks.
type CPUCounters struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal uint64
}

// Total returns the sum of all CPU times.
func (c CPUCounters) Total() uint64 {
	return c.User + c.Nice + c.System + c.Idle + c.IOWait + c.IRQ + c.SoftIRQ + c.Steal
}

// ParseDiskStats finds device in /proc/diskstats text.
func ParseDiskStats(r io.Reader, device string) (DiskCounters, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 14 || f[2] != device {
			continue
		}
		v := make([]uint64, len(f)-3)
		for i := range v {
			n, err := strconv.ParseUint(f[i+3], 10, 64)
			if err != nil {
				return DiskCounters{}, fmt.Errorf("diskstats: bad field %d for %s: %q", i+4, device, f[i+3])
			}
			v[i] = n
		}
		c := DiskCounters{
			ReadIOs: v[0], ReadSectors: v[2], ReadMs: v[3],
			WriteIOs: v[4], WriteMerges: v[5], WriteSectors: v[6], WriteMs: v[7],
			InFlight: v[8], IOMs: v[9], WeightedMs: v[10],
		}
		if len(v) >= 17 {
			c.FlushIOs, c.FlushMs, c.HasFlush = v[15], v[16], true
		}
		return c, nil
	}
	if err := sc.Err(); err != nil {
		return DiskCounters{}, err
	}
	return DiskCounters{}, fmt.Errorf("device %s is not in /proc/diskstats", device)
}

// ParseCPU reads the aggregate "cpu" line of /proc/stat text.
func ParseCPU(r io.Reader) (CPUCounters, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 9 || f[0] != "cpu" {
			continue
		}
		v := make([]uint64, 8)
		for i := range v {
			n, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return CPUCounters{}, fmt.Errorf("/proc/stat: bad cpu field %q", f[i+1])
			}
			v[i] = n
		}
		return CPUCounters{User: v[0], Nice: v[1], System: v[2], Idle: v[3], IOWait: v[4], IRQ: v[5], SoftIRQ: v[6], Steal: v[7]}, nil
	}
	if err := sc.Err(); err != nil {
		return CPUCounters{}, err
	}
	return CPUCounters{}, fmt.Errorf("no cpu line in /proc/stat")
}

// ReadDisk reads device's counters from /proc/diskstats.
func ReadDisk(device string) (DiskCounters, error) {
	f, err := os.Open("/proc/diskstats")
	if err != nil {
		return DiskCounters{}, err
	}
	defer f.Close()
	return ParseDiskStats(f, device)
}

// ReadCPU reads the machine's CPU counters from /proc/stat.
func ReadCPU() (CPUCounters, error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return CPUCounters{}, err
	}
	defer f.Close()
	return ParseCPU(f)
}
