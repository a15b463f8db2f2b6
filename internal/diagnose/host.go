package diagnose

import (
	"fmt"

	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/result"
)

func init() {
	Register(
		Rule{ID: "host_cpu_saturated", Apply: hostCPUSaturated},
		Rule{ID: "host_cpu_steal", Apply: hostCPUSteal},
	)
}

func hostCPUSaturated(r *result.Result) []result.Finding {
	cpuBusyHigh := LimitOf(r, check.HostCPUBusy)
	if r.Host == nil || r.Host.Summary.CPUBusy < cpuBusyHigh {
		return nil
	}
	s := r.Host.Summary
	host := "this host"
	if r.Host.Hostname != "" {
		host = "host " + r.Host.Hostname
	}
	ev := []result.Evidence{{What: "CPU busy (user+system+irq, all CPUs of " + host + ")", Observed: s.CPUBusy, Limit: cpuBusyHigh, Unit: "ratio", Source: "/proc/stat"}}
	title := fmt.Sprintf("The CPUs of %s, where etcdperf ran, were %.0f%% busy during the run: latencies measured there include waiting for a CPU", host, s.CPUBusy*100)
	if r.Host.Device != "" && s.FlushAwait > 0 {
		ev = append(ev, result.Evidence{What: "device flush service time (mean)", Observed: s.FlushAwait, Unit: "s", Source: "/proc/diskstats"})
		if r.Disk != nil && r.Disk.SyncLatency != nil && r.Disk.SyncLatency.P99 > LimitOf(r, check.DeviceFastFactor)*s.FlushAwait {
			title += fmt.Sprintf(" (the device flushed in %.2fms on average, far below the %.2fms fdatasync p99)", s.FlushAwait*1e3, r.Disk.SyncLatency.P99*1e3)
		}
	}
	// A fact of the host, not a verdict: whether etcd itself waited for a
	// CPU is its process's to say (the cause rules), and a busy machine
	// only adds latency to a run that passes anyway.
	return []result.Finding{{
		ID:       "host_cpu_saturated",
		Severity: result.Info,
		Title:    title,
		Evidence: ev,
		Recommendation: "If a limit failed, the findings on the members say whether etcd waited for a CPU; to judge the storage alone, " +
			"measure again on a quiet machine. In production give etcd dedicated CPUs and keep its process above batch work (nice, cgroup CPU weight).",
	}}
}

func hostCPUSteal(r *result.Result) []result.Finding {
	stealHigh := LimitOf(r, check.HostCPUSteal)
	if r.Host == nil || r.Host.Summary.Steal < stealHigh {
		return nil
	}
	s := r.Host.Summary
	return []result.Finding{{
		ID:       "host_cpu_steal",
		Severity: result.Warning,
		Title:    fmt.Sprintf("The hypervisor took %.0f%% of the CPU time of the host under test (steal): its hypervisor is overcommitted", s.Steal*100),
		Evidence: []result.Evidence{{What: "CPU steal time", Observed: s.Steal, Limit: stealHigh, Unit: "ratio", Source: "/proc/stat"}},
		Recommendation: "Run etcd on VMs with dedicated (non-burstable, not overcommitted) vCPUs: time the hypervisor gives to other guests " +
			"delays etcd's heartbeats and fsyncs as a slow disk does (etcd FAQ: \"failed to send out heartbeat on time\" is often CPU starvation).",
	}}
}
