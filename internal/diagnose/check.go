package diagnose

import (
	"fmt"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// The rules over load checks (`etcdperf check` and each target of
// `etcdperf doctor`). They read Results with a perf section only, so that
// bench's findings stay its own.
func init() {
	Register(
		Rule{ID: "client_saturated", Apply: clientSaturated},
		Rule{ID: "etcd_too_slow_for_profile", Apply: etcdTooSlowForProfile},
		Rule{ID: "device_busy", Apply: deviceBusy},
		Rule{ID: "leader_changes_under_load", Apply: leaderChangesUnderLoad},
	)
}

const metricsSrc = "etcd /metrics"

// LoadLimitedBy says what kept a load check's throughput under its
// target: result.CauseClient when the load generator could not send on
// time (its own CPU near the machine's, or the pacer behind its schedule
// while clients were free, or a saturated machine whose CPU went to the
// client more than to etcd), result.CauseServer when every client was
// waiting for etcd, "" when the target was reached.
func LoadLimitedBy(r *result.Result) result.Cause {
	pf := r.Perf
	if pf == nil || r.Bench == nil || pf.TargetRate <= 0 {
		return ""
	}
	if c, ok := FindCheck(r, limits.Throughput); ok {
		if c.Status != result.StatusFail {
			return ""
		}
	} else if pf.Reached >= LimitOf(r, limits.Throughput) {
		return ""
	}
	if clientReasons(r) != nil {
		return result.CauseClient
	}
	return result.CauseServer
}

// clientReasons returns the evidence that the client machine, not etcd,
// limited the load; nil when there is none.
func clientReasons(r *result.Result) []result.Evidence {
	pf := r.Perf
	cpus := float64(max(pf.CPUs, 1))
	var ev []result.Evidence
	clientCPUHigh, cpuBusyHigh := LimitOf(r, limits.ClientCPU), LimitOf(r, limits.HostCPUBusy)
	if pf.ClientOnly && pf.ClientCPU >= clientCPUHigh*cpus {
		ev = append(ev, result.Evidence{What: fmt.Sprintf("etcdperf's own CPU use (share of the machine's %d CPUs)", pf.CPUs),
			Observed: pf.ClientCPU / cpus, Limit: clientCPUHigh, Unit: "ratio", Source: "getrusage"})
	}
	if behind, measured := pacerBehind(r); behind {
		ev = append(ev,
			result.Evidence{What: "requests sent per second (the profile's rate is the limit)", Observed: pf.SentRate, Limit: pf.TargetRate, Unit: "ops/s", Source: "etcdperf pacer"},
			result.Evidence{What: "mean delay of a send behind its schedule", Observed: pf.ScheduleLag, Unit: "s", Source: "etcdperf pacer"})
		if measured {
			ev = append(ev, result.Evidence{What: "of it, the mean time every client was waiting for etcd", Observed: *pf.BusyLag, Unit: "s", Source: "etcdperf pacer"})
		} else {
			ev = append(ev, result.Evidence{What: fmt.Sprintf("requests waiting for etcd on average, of %d clients", pf.Clients), Observed: pf.InFlight, Unit: "count", Source: "throughput x mean service time"})
		}
	}
	if h := r.Host; h != nil && h.Summary.CPUBusy >= cpuBusyHigh && pf.ServerCPU > 0 && pf.ClientCPU >= pf.ServerCPU {
		ev = append(ev,
			result.Evidence{What: "CPU busy (all CPUs)", Observed: h.Summary.CPUBusy, Limit: cpuBusyHigh, Unit: "ratio", Source: "/proc/stat"},
			result.Evidence{What: "etcdperf's share of the CPUs (etcd's: " + fmt.Sprintf("%.0f%%", pf.ServerCPU/cpus*100) + ")", Observed: pf.ClientCPU / cpus, Unit: "ratio", Source: "getrusage, process_cpu_seconds_total"})
	}
	return ev
}

// pacerBehind says whether the load generator sent under the throughput
// criterion's share of the rate (90%) while its clients were free: most
// of the sends' lag its own, not time with every client waiting for
// etcd. measured is true when the Result split the lag that way; older
// Results fall back on the mean number of requests in flight, which a
// cluster that stalls now and then (all clients waiting for seconds, then
// all free) keeps under the clients.
func pacerBehind(r *result.Result) (behind, measured bool) {
	pf := r.Perf
	if pf.SentRate >= LimitOf(r, limits.Throughput)*pf.TargetRate || pf.Clients <= 0 {
		return false, pf.BusyLag != nil
	}
	if pf.BusyLag != nil {
		return pf.ScheduleLag-*pf.BusyLag >= LimitOf(r, limits.PacerOwnLag)*pf.ScheduleLag, true
	}
	return pf.InFlight < LimitOf(r, limits.ClientsBusy)*float64(pf.Clients), false
}

func clientSaturated(r *result.Result) []result.Finding {
	if LoadLimitedBy(r) != result.CauseClient {
		return nil
	}
	pf, b := r.Perf, r.Bench
	return []result.Finding{{
		ID:       "client_saturated",
		Severity: result.Warning,
		Cause:    result.CauseClient,
		Title: fmt.Sprintf("The load generator's machine, not etcd, kept the throughput at %.0f of %.0f puts/s: it could not send the requests on time, so this run says nothing against etcd",
			b.Throughput, pf.TargetRate),
		Evidence: clientReasons(r),
		Recommendation: "Run the check from a machine with free CPUs (etcdperf check --endpoints ... from another host than etcd's); " +
			"a smaller --load fits one client machine.",
	}}
}

func etcdTooSlowForProfile(r *result.Result) []result.Finding {
	if LoadLimitedBy(r) != result.CauseServer {
		return nil
	}
	pf, b := r.Perf, r.Bench
	f := result.Finding{
		ID:       "etcd_too_slow_for_profile",
		Severity: result.Critical,
		Title:    fmt.Sprintf("etcd could not sustain %.0f puts/s: it answered %.0f/s", pf.TargetRate, b.Throughput),
		Evidence: []result.Evidence{{What: "throughput, as a share of the profile's rate", Observed: pf.Reached, Limit: LimitOf(r, limits.Throughput), Unit: "ratio", Source: "etcdctl check perf"}},
		Recommendation: "Find the resource that slows etcd down in the other findings (WAL fsync: the disk; etcd's CPU); " +
			"give etcd a faster disk (SSD/NVMe, provisioned IOPS) and dedicated CPUs, or plan for a smaller load.",
	}
	if b.ServiceLatency != nil && b.ServiceLatency.Mean > 0 && pf.Clients > 0 {
		f.Title += fmt.Sprintf("; all %d clients were waiting for it (a mean service time of %s allows at most %.0f/s)",
			pf.Clients, units.Seconds(b.ServiceLatency.Mean), float64(pf.Clients)/b.ServiceLatency.Mean)
		f.Evidence = append(f.Evidence, result.Evidence{What: fmt.Sprintf("requests waiting for etcd on average, of %d clients", pf.Clients),
			Observed: pf.InFlight, Limit: float64(pf.Clients), Unit: "count", Source: "throughput x mean service time"})
	}
	if c, ok := FindCheck(r, limits.WALFsyncP99); ok && c.Status != result.StatusPass {
		f.Evidence = append(f.Evidence, EvidenceOf(c))
		f.Recommendation = "etcd waits for its disk (WAL fsync over its limit): " + diskAdvice
	}
	return []result.Finding{f}
}

// diskEvidence is what the host saw of the device during the load.
func diskEvidence(r *result.Result) []result.Evidence {
	h := r.Host
	if h == nil || h.Device == "" {
		return nil
	}
	s := h.Summary
	ev := []result.Evidence{{What: "device " + h.Device + " busy (iostat %util)", Observed: s.Util, Unit: "ratio", Source: "/proc/diskstats"}}
	if s.WriteIOPS > 0 {
		ev = append(ev,
			result.Evidence{What: "mean write time on the device (w_await)", Observed: s.WriteAwait, Unit: "s", Source: "/proc/diskstats"},
			result.Evidence{What: "mean write size", Observed: s.AvgWriteSize, Unit: "bytes", Source: "/proc/diskstats"})
	}
	if s.FlushIOPS > 0 {
		ev = append(ev, result.Evidence{What: "mean cache flush time of the device", Observed: s.FlushAwait, Unit: "s", Source: "/proc/diskstats"})
	}
	return ev
}

func deviceBusy(r *result.Result) []result.Finding {
	deviceBusyHigh := LimitOf(r, limits.DeviceBusy)
	if r.Perf == nil || r.Host == nil || r.Host.Device == "" || r.Host.Summary.Util < deviceBusyHigh {
		return nil
	}
	s := r.Host.Summary
	return []result.Finding{{
		ID:       "device_busy",
		Severity: result.Warning,
		Cause:    result.CauseDisk,
		Title: fmt.Sprintf("The device %s was busy %.0f%% of the load's time: etcd's writes queue behind each other, or behind another workload's",
			r.Host.Device, s.Util*100),
		Evidence: append([]result.Evidence{{What: "device busy (iostat %util)", Observed: s.Util, Limit: deviceBusyHigh, Unit: "ratio", Source: "/proc/diskstats"}},
			diskEvidence(r)[1:]...),
		Recommendation: "Give etcd a device of its own (at least for the WAL, etcd --wal-dir) with more IOPS, and move other writers off it; " +
			"a device busy most of the time leaves no headroom for a burst.",
	}}
}

func leaderChangesUnderLoad(r *result.Result) []result.Finding {
	if r.Perf == nil {
		return nil
	}
	c, ok := FindCheck(r, limits.LeaderChanges)
	if !ok || c.Status != result.StatusFail {
		return nil
	}
	return []result.Finding{{
		ID:       "leader_changes_under_load",
		Severity: result.Critical,
		Title:    fmt.Sprintf("The leader changed %.0f times during the load: followers missed its heartbeats, and writes stalled during each election", c.Observed),
		Evidence: []result.Evidence{EvidenceOf(c)},
		Recommendation: "A leader misses heartbeats when its raft loop waits for the disk (WAL fsync) or the CPU, or when the network drops them; " +
			"if the members are far apart, raise --heartbeat-interval to about the round-trip time and --election-timeout to 10x it (etcd tuning guide).",
	}}
}
