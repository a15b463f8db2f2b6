package diagnose

import (
	"fmt"

	"github.com/etcdperf/etcdperf/internal/limits"
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

// DoctorLimitedBy names what limits etcd on a doctor target, from its
// findings (which must be in r): the cause of the most severe finding
// that names one (the disk, the CPU, the disk or the CPU of a member
// etcdperf could not see, the network, the load generator); else etcd
// itself when every client waited for it without another sign, the
// network when the leader changed; "none" when nothing is near its limit.
// How busy this host's CPUs were is not a cause by itself: only a
// member's own process tells whether etcd waited for a CPU.
func DoctorLimitedBy(r *result.Result) result.Cause {
	l, _ := DoctorLimit(r)
	return l
}

// DoctorLimit is DoctorLimitedBy with the members the finding names (none
// when it names none).
func DoctorLimit(r *result.Result) (result.Cause, []string) {
	for _, f := range r.Findings {
		if f.Severity == result.Info {
			continue
		}
		if f.Cause != "" {
			if len(etcdMembers(r)) < 2 {
				return f.Cause, nil // one member: naming it says nothing
			}
			return f.Cause, f.Members
		}
	}
	if c, ok := FindCheck(r, limits.LeaderChanges); ok && c.Status == result.StatusFail {
		return result.CauseNetwork, nil
	}
	if LoadLimitedBy(r) == result.CauseServer {
		return result.CauseEtcd, nil
	}
	return result.CauseNone, nil
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
	walLimit := LimitOf(r, limits.WALFsyncP99)
	overLimit := n.WALFsyncP99 >= walLimit
	if n.WALFsyncRatio < LimitOf(r, limits.NoiseSlower) && !overLimit {
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
			"etcd started with I/O priority (ionice -c2 -n0, as etcd's tuning guide advises when other processes share its disk), and a device with IOPS to spare.",
	}
	if n.DeviceUtil > 0 {
		f.Evidence = append(f.Evidence, result.Evidence{What: "device busy with the neighbour writing", Observed: n.DeviceUtil, Unit: "ratio", Source: "/proc/diskstats"})
	}
	if overLimit {
		// Only then does the disk limit etcd: under contention.
		f.Severity, f.Cause = result.Critical, result.CauseDisk
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
