package diagnose

import (
	"fmt"

	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// The rules of `etcdperf doctor`'s targets: they read the target's own row
// of the doctor section (a Result with exactly one).
func init() {
	Register(
		Rule{ID: "noise_degrades", Apply: noiseDegrades},
		Rule{ID: "simulated_slow_disk", Apply: simulatedSlowDisk},
	)
}

// What limits etcd on a doctor target, besides LimitClient.
const (
	LimitDisk    = "disk"
	LimitCPU     = "cpu"
	LimitNetwork = "network"
	// LimitEtcd: etcd could not keep up, and neither its disk nor its
	// CPU stood out.
	LimitEtcd = "etcd"
	LimitNone = "none"
)

// noiseSlower is how many times slower etcd's WAL fsync p99 must get under
// a neighbour's bulk writes to be worth a finding.
const noiseSlower = 2.0

// DoctorLimitedBy names the resource that is at or over its limit on a
// doctor target, the first of: the disk (the probe's fdatasync, etcd's
// WAL fsync or backend commit near or over their limits, or the device
// busy most of the time), unless the CPUs were saturated while the device
// itself answered ten times faster (then the CPU: the host's view during
// the load stands for the probe's too), or the same load failing with a
// neighbour writing on the device (--noise), the client (the load generator could not send on
// time), the CPU (etcd's, or the machine's), the network (peers' round
// trips, leader changes with a fine disk), etcd itself (it could not keep
// up without another sign); "none" when nothing is near its limit.
func DoctorLimitedBy(r *result.Result) string {
	for _, id := range []string{check.DiskSyncP99, check.WALFsyncP99, check.BackendCommitP99} {
		if c, ok := FindCheck(r, id); ok && c.Status != result.StatusPass {
			if cpuStarved(r, c.Observed) {
				return LimitCPU
			}
			return LimitDisk
		}
	}
	if r.Perf != nil && r.Host != nil && r.Host.Device != "" && r.Host.Summary.Util >= deviceBusyHigh {
		return LimitDisk
	}
	if t, ok := target(r); ok && t.Noise != nil && t.Noise.Verdict == result.Fail {
		return LimitDisk
	}
	load := LoadLimitedBy(r)
	if load == LimitClient {
		return LimitClient
	}
	if pf := r.Perf; pf != nil && pf.CPUs > 0 && pf.ServerCPU/float64(pf.CPUs) >= etcdCPUHigh {
		return LimitCPU
	}
	if r.Host != nil && r.Host.Summary.CPUBusy >= cpuBusyHigh {
		return LimitCPU
	}
	if pf := r.Perf; pf != nil {
		for _, m := range pf.Members {
			if m.PeerRTT >= peerRTTHigh {
				return LimitNetwork
			}
		}
		if c, ok := FindCheck(r, check.LeaderChanges); ok && c.Status == result.StatusFail {
			return LimitNetwork
		}
	}
	if load == LimitServer {
		return LimitEtcd
	}
	return LimitNone
}

// target returns the doctor row of a target's Result.
func target(r *result.Result) (result.DoctorTarget, bool) {
	if r.Doctor == nil || len(r.Doctor.Targets) != 1 {
		return result.DoctorTarget{}, false
	}
	return r.Doctor.Targets[0], true
}

func noiseDegrades(r *result.Result) []result.Finding {
	t, ok := target(r)
	if !ok || t.Noise == nil || t.WALFsyncP99 <= 0 {
		return nil
	}
	n := t.Noise
	walLimit := LimitOf(r, check.WALFsyncP99)
	overLimit := n.WALFsyncP99 >= walLimit
	if n.WALFsyncRatio < noiseSlower && !overLimit {
		return nil
	}
	// A quiet p99 in etcd's lowest bucket is only a bound: the ratio is
	// then at least what it says.
	slower, quiet := fmt.Sprintf("%.1fx", n.WALFsyncRatio), units.Seconds(t.WALFsyncP99)
	if t.WALFsyncBound {
		slower, quiet = "at least "+slower, "<= "+quiet
	}
	f := result.Finding{
		ID:       "noise_degrades",
		Severity: result.Warning,
		Title: fmt.Sprintf("A neighbour's bulk writes on the same device (%s during the load) made etcd's WAL fsync p99 %s slower (%s to %s) and its request p99 %.1fx (%s to %s)",
			units.Bytes(float64(n.BytesWritten)), slower, quiet, units.Seconds(n.WALFsyncP99),
			n.RequestRatio, units.Seconds(t.RequestP99), units.Seconds(n.RequestP99)),
		Evidence: []result.Evidence{
			{What: "etcd's WAL fsync p99 with the neighbour writing", Observed: n.WALFsyncP99, Limit: walLimit, Unit: "s", Source: metricsSrc},
			{What: "etcd's WAL fsync p99 alone", Observed: t.WALFsyncP99, Unit: "s", Source: metricsSrc},
			{What: "request p99 with the neighbour writing", Observed: n.RequestP99, Unit: "s", Source: "etcdperf load"},
		},
		Recommendation: "Keep image pulls, builds and logs of other workloads off etcd's device: a dedicated volume for etcd (at least its WAL, --wal-dir), " +
			"etcd started with I/O priority (ionice -c2 -n0), and a device with IOPS to spare; the first field report's CI etcd timed out exactly when neighbours pulled images.",
	}
	if n.DeviceUtil > 0 {
		f.Evidence = append(f.Evidence, result.Evidence{What: "device busy with the neighbour writing", Observed: n.DeviceUtil, Unit: "ratio", Source: "/proc/diskstats"})
	}
	if overLimit {
		f.Severity = result.Critical
		f.Title += ": over the limit, etcd fails under such contention"
	}
	return []result.Finding{f}
}

func simulatedSlowDisk(r *result.Result) []result.Finding {
	t, ok := target(r)
	if !ok || t.SimulatedFsyncDelay <= 0 {
		return nil
	}
	return []result.Finding{{
		ID:       "simulated_slow_disk",
		Severity: result.Info,
		Title: fmt.Sprintf("This was a simulated slow disk: every fsync on %s waited %s more than the real one (--simulate-fsync-delay)",
			t.Dir, units.Seconds(t.SimulatedFsyncDelay)),
		Evidence:       []result.Evidence{{What: "delay added to every fsync and fdatasync", Observed: t.SimulatedFsyncDelay, Unit: "s", Source: "etcdperf slowdisk"}},
		Recommendation: "The findings above are what etcd does on a disk this slow; run etcdperf doctor without --simulate-fsync-delay to judge the real one.",
	}}
}
