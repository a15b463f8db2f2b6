package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// processesText prints what the kernel of the host etcdperf ran on said of
// the member processes that run there: one line each.
func processesText(w io.Writer, ps []result.MemberProcess) {
	if len(ps) == 0 {
		return
	}
	fmt.Fprintf(w, "  member processes on host %s:\n", ps[0].Host)
	for _, p := range ps {
		fmt.Fprintf(w, "    %s (pid %d, %s): %s\n", p.Name, p.PID, p.Found, ProcessLine(p))
	}
}

// ProcessLine sums up one member process: its CPU against its limit, its
// threads' wait for a CPU, its cgroup's throttling, and the storage under
// its WAL.
func ProcessLine(p result.MemberProcess) string {
	var parts []string
	if p.Measured() {
		cpu := "CPU " + units.Cores(p.CPU)
		if p.CPULimit > 0 {
			cpu += " of a " + units.Cores(p.CPULimit) + " limit"
		}
		parts = append(parts, cpu, "waited "+units.Seconds(p.SchedWait)+" for a CPU on average")
		if p.CPULimit > 0 {
			parts = append(parts, fmt.Sprintf("throttled in %.0f%% of its periods", p.Throttled*100))
		}
	}
	if p.WALDir != "" {
		s := "WAL on " + p.FSType
		if p.Device != "" {
			s += " (" + p.Device
			if p.DeviceFlushes > 0 {
				s += ", flushes " + units.Seconds(p.DeviceFlushAwait)
			} else if p.DeviceWriteAwait > 0 {
				s += ", writes " + units.Seconds(p.DeviceWriteAwait)
			}
			s += ")"
		}
		parts = append(parts, s)
	}
	if p.IOPSCap > 0 {
		parts = append(parts, fmt.Sprintf("its cgroup caps its writes on %s at %.0f IOPS (it wrote %.0f/s)", p.CapDevice, p.IOPSCap, p.CappedWriteIOPS))
	}
	if p.Error != "" {
		parts = append(parts, p.Error)
	}
	return strings.Join(parts, ", ")
}

// peerRTTsText prints the members' round trips to each other.
func peerRTTsText(w io.Writer, rtts []result.PeerRTT) {
	if len(rtts) == 0 {
		return
	}
	fmt.Fprintf(w, "  peer round trips (etcd records one per peer about every 30s):\n")
	for _, p := range rtts {
		fmt.Fprintf(w, "    %s -> %s: %s mean of %.0f (%s)\n", p.From, p.To, units.Seconds(p.Mean), p.Count, p.Scope)
	}
}
