package render

import (
	"fmt"
	"io"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

func init() {
	RegisterText("check", checkText)
	RegisterText("datascale", datascaleText)
}

// checkText is `etcdperf check`: the profile, what the load generator
// delivered, the latencies etcdctl judges and more, etcd's own metrics, and
// who used the CPU; Judgement adds one PASS/WARN/FAIL line per criterion.
func checkText(w io.Writer, r *result.Result) error {
	b, pf := r.Bench, r.Perf
	if b == nil || pf == nil {
		return nil
	}
	fmt.Fprintf(w, "etcdperf check: profile %s (etcdctl check perf --load=%s): %d clients at %g puts/s", pf.Profile, pf.Profile, pf.Clients, pf.TargetRate)
	p := loadParams(r)
	if p.Duration > 0 {
		fmt.Fprintf(w, " for %s", units.Seconds(p.Duration))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  %s\n", targetLine(r))
	if b.Description != "" {
		fmt.Fprintf(w, "  %s, keys under %s\n", b.Description, p.Prefix)
	}
	loadBlock(w, r)
	serverText(w, r.Server)
	for _, n := range append(append([]string{}, b.Notes...), pf.Notes...) {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if r.Capacity != nil {
		fmt.Fprintln(w)
		capacityText(w, r.Capacity, "")
	}
	if r.Soak != nil {
		fmt.Fprintln(w)
		soakText(w, r.Soak, "")
	}
	ClusterStateText(w, r.Cluster)
	return nil
}

// loadBlock prints what the load generator delivered, the latencies, the
// CPU and the device.
func loadBlock(w io.Writer, r *result.Result) {
	b, pf := r.Bench, r.Perf
	fmt.Fprintf(w, "\nLoad: %d requests in %s: %.0f/s, %.0f%% of %g/s", b.Ops, units.Seconds(b.Seconds), b.Throughput, pf.Reached*100, pf.TargetRate)
	if errs := result.ErrorTotal(b.Errors); errs > 0 {
		fmt.Fprintf(w, ", %d failed", errs)
	}
	fmt.Fprintln(w)
	lag := units.Seconds(pf.ScheduleLag) + " behind its schedule on average"
	if l := b.SendLag; l != nil && l.Count > 0 {
		lag = fmt.Sprintf("%s behind its schedule on average (p99 %s)", units.Seconds(l.Mean), units.Seconds(l.P99))
		if b.SendLagBusy != nil && l.Mean > 0 {
			lag += fmt.Sprintf(", %.0f%% of it with every client waiting for etcd", min(*b.SendLagBusy/l.Mean, 1)*100)
		}
	}
	fmt.Fprintf(w, "  sent %.0f/s; a send was %s; %.1f of %d clients waiting for etcd on average\n",
		pf.SentRate, lag, pf.InFlight, pf.Clients)
	if l := b.Latency; l != nil && l.Count > 0 {
		fmt.Fprintf(w, "  latency from the intended send: p50 %s, p90 %s, p99 %s, p99.9 %s, slowest %s, stddev %s\n",
			units.Seconds(l.P50), units.Seconds(l.P90), units.Seconds(l.P99), units.Seconds(l.P999), units.Seconds(l.Max), units.Seconds(l.Stddev))
	}
	if l := b.ServiceLatency; l != nil && l.Count > 0 {
		fmt.Fprintf(w, "  service time from the actual send: p50 %s, p99 %s, mean %s\n", units.Seconds(l.P50), units.Seconds(l.P99), units.Seconds(l.Mean))
	}
	errorDistribution(w, b.Errors)
	cpuLine(w, pf)
	if r.Host != nil {
		HostLine(w, r.Host)
	}
}

// cpuLine says who used CPU, in CPUs (cores): etcd's members, as their
// metrics say wherever they run, and etcdperf itself, of the CPUs of the
// host it runs on.
func cpuLine(w io.Writer, pf *result.Perf) {
	if pf.CPUs <= 0 {
		return
	}
	fmt.Fprintf(w, "  CPU used:")
	if pf.ServerCPU > 0 {
		fmt.Fprintf(w, " etcd %s CPU (its members' metrics),", units.Cores(pf.ServerCPU))
	}
	who := "etcdperf (the client)"
	if !pf.ClientOnly {
		who = "etcdperf with etcd inside"
	}
	fmt.Fprintf(w, " %s %s of its host's %d CPUs\n", who, units.Cores(pf.ClientCPU), pf.CPUs)
	for _, m := range pf.Members {
		if len(pf.Members) < 2 && m.PeerRTT == 0 {
			break
		}
		fmt.Fprintf(w, "  member %s: CPU %s, RSS %s, db %s", m.Name, units.Cores(m.CPU), units.Bytes(m.RSSAfter), units.Bytes(m.DBSize))
		if m.PeerRTT > 0 {
			fmt.Fprintf(w, ", peer RTT p99 %s", units.Seconds(m.PeerRTT))
		}
		fmt.Fprintln(w)
	}
}

// datascaleText is `etcdperf check datascale`, in etcdctl's words.
func datascaleText(w io.Writer, r *result.Result) error {
	ds := r.Datascale
	if ds == nil {
		return nil
	}
	fmt.Fprintf(w, "etcdperf check datascale: profile %s (etcdctl check datascale --load=%s): %d key-value pairs of %d bytes, %d clients\n",
		ds.Profile, ds.Profile, ds.Keys, ds.KVSize, ds.Clients)
	fmt.Fprintf(w, "  %s\n", targetLine(r))
	if b := r.Bench; b != nil {
		fmt.Fprintf(w, "  %d puts in %s: %.0f/s", b.Ops, units.Seconds(b.Seconds), b.Throughput)
		if b.Latency != nil && b.Latency.Count > 0 {
			fmt.Fprintf(w, ", p99 %s", units.Seconds(b.Latency.P99))
		}
		fmt.Fprintln(w)
		errorDistribution(w, b.Errors)
	}
	fmt.Fprintf(w, "\nMemory (process_resident_memory_bytes): %s before, %s after: %s more, %s per key\n",
		units.Bytes(ds.RSSBefore), units.Bytes(ds.RSSAfter), units.Bytes(ds.Growth), units.Bytes(ds.PerKey))
	if len(ds.Members) > 1 {
		for _, m := range ds.Members {
			fmt.Fprintf(w, "  member %s: %s to %s\n", m.Name, units.Bytes(m.RSSBefore), units.Bytes(m.RSSAfter))
		}
	}
	if len(ds.Members) > 0 {
		fmt.Fprintf(w, "Approximate system memory used: %.2f MB\n", ds.Growth/(1<<20))
	}
	return nil
}
