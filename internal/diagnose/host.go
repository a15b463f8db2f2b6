package diagnose

import (
	"fmt"
	"slices"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
)

func init() {
	Register(
		Rule{ID: "host_cpu_saturated", Apply: hostCPUSaturated},
		Rule{ID: "host_cpu_steal", Apply: hostCPUSteal},
	)
}

func hostCPUSaturated(r *result.Result) []result.Finding {
	cpuBusyHigh := LimitOf(r, limits.HostCPUBusy)
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
		if r.Disk != nil && r.Disk.SyncLatency != nil && r.Disk.SyncLatency.P99 > LimitOf(r, limits.DeviceFastFactor)*s.FlushAwait {
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
	stealHigh := LimitOf(r, limits.HostCPUSteal)
	if r.Host == nil || r.Host.Summary.Steal < stealHigh {
		return nil
	}
	s := r.Host.Summary
	host := "the host under test"
	if r.Host.Hostname != "" {
		host = "host " + r.Host.Hostname
	}
	// Steal is a fact of the host, as its busy CPUs are: it adds latency
	// to what etcd measures. When a limit failed or came near, it is a
	// warning: part of the explanation. When etcd held every limit with
	// room to spare, the run shows etcd carried its load at that steal,
	// and the steal is a note: it varies with the neighbours of the VM,
	// so a verdict that followed it would follow them, not etcd.
	sev := result.Info
	title := fmt.Sprintf("The hypervisor took %.0f%% of the CPU time of %s (steal); etcd held every limit at that steal", s.Steal*100, host)
	if slices.ContainsFunc(r.Checks, func(c result.Check) bool { return c.Status != result.StatusPass }) {
		sev = result.Warning
		title = fmt.Sprintf("The hypervisor took %.0f%% of the CPU time of %s (steal): latencies measured there include waiting for the hypervisor", s.Steal*100, host)
	}
	return []result.Finding{{
		ID:       "host_cpu_steal",
		Severity: sev,
		Title:    title,
		Evidence: []result.Evidence{{What: "CPU steal time", Observed: s.Steal, Limit: stealHigh, Unit: "ratio", Source: "/proc/stat"}},
		Recommendation: "Steal over a tenth of the CPU time is an overcommitted hypervisor, and it varies with the other guests: run etcd on VMs with " +
			"dedicated (non-burstable, not overcommitted) vCPUs. Time the hypervisor gives to other guests delays etcd's heartbeats and fsyncs " +
			"as a slow disk does (etcd FAQ: \"failed to send out heartbeat on time\" is often CPU starvation).",
	}}
}
