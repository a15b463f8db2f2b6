package diagnose

import (
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

func init() {
	Register(Rule{ID: "soak_broke", Apply: soakBroke})
}

// soakBroke: a rate held for a while (--soak) whose last part broke one
// of etcd's limits did not hold: critical at a rate the user asked for
// (--soak-rate), a warning at the capacity sweep's own answer (the sweep's
// figure did not hold that long; the sustained one is said). When the
// device's writes fell during it (a drop), the storage gave less after a
// while: a volume's burst credits or a disk's write cache, which the
// figures cannot tell apart.
func soakBroke(r *result.Result) []result.Finding {
	s := r.Soak
	if s == nil || len(s.Broke) == 0 {
		return nil
	}
	f := result.Finding{ID: "soak_broke", Severity: result.Critical}
	if s.RateFrom == result.SoakRateCapacity {
		f.Severity = result.Warning
	}
	var broke []string
	src := metricsSrc + ", the median of the last part's intervals"
	for _, id := range s.Broke {
		switch id {
		case limits.WALFsyncP99:
			broke = append(broke, "the WAL fsync p99 ("+units.P99(s.LastWALFsyncP99, s.LastWALFsyncBound)+")")
			f.Evidence = append(f.Evidence, result.Evidence{What: "WAL fsync p99 over the soak's last part", Observed: s.LastWALFsyncP99, Limit: LimitOf(r, limits.WALFsyncP99), Unit: "s", Source: src})
		case limits.BackendCommitP99:
			broke = append(broke, "the backend commit p99 ("+units.Seconds(s.LastBackendCommitP99)+")")
			f.Evidence = append(f.Evidence, result.Evidence{What: "backend commit p99 over the soak's last part", Observed: s.LastBackendCommitP99, Limit: LimitOf(r, limits.BackendCommitP99), Unit: "s", Source: src})
		case limits.RequestP99:
			broke = append(broke, "the request p99 ("+units.Seconds(s.LastRequestP99)+")")
			f.Evidence = append(f.Evidence, result.Evidence{What: "request p99 over the soak's last part", Observed: s.LastRequestP99, Limit: LimitOf(r, limits.RequestP99), Unit: "s",
				Source: "etcdperf load, from each put's intended send, the median of the last part's intervals"})
		case limits.Throughput:
			broke = append(broke, fmt.Sprintf("the throughput (%s of %s puts/s)", units.Thousands(s.LastAchieved), units.Thousands(s.Rate)))
			f.Evidence = append(f.Evidence, result.Evidence{What: "puts/s served over the soak's last part", Observed: s.LastAchieved, Unit: "1/s", Source: "etcdperf load"})
		}
	}
	last := units.Seconds(s.Seconds - s.LastFrom)
	f.Title = fmt.Sprintf("Offered %s puts/s for %s, etcd broke %s over the last %s: it sustains %s",
		units.Thousands(s.Rate), units.Seconds(s.Seconds), strings.Join(broke, " and "), last, s.SustainedWords())
	f.Recommendation = "Size the cluster's writes for the sustained figure, not for a short test's: etcdperf doctor --soak 10m --soak-rate N holds a rate long enough to show it."
	if d := s.Drop; d != nil && d.IOPSBefore > 0 && d.IOPSAfter < d.IOPSBefore {
		f.Cause = result.CauseDiskOrIOPSCap
		f.Title += fmt.Sprintf(" (after %s the device's writes fell from %s to %s IOPS)", units.Seconds(d.After), units.Thousands(d.IOPSBefore), units.Thousands(d.IOPSAfter))
		f.Evidence = append(f.Evidence, result.Evidence{What: fmt.Sprintf("device write IOPS after %s, against %s before", units.Seconds(d.After), units.Thousands(d.IOPSBefore)),
			Observed: d.IOPSAfter, Unit: "ops/s", Source: "/proc/diskstats"})
		f.Recommendation = "The storage gave fewer writes after a while: a volume whose burst credits ran out (AWS gp2, Azure disks with bursting) writes at its baseline " +
			"after them, a disk whose write cache filled at its own speed. The volume's burst balance metric (CloudWatch BurstBalance) tells the two apart; " +
			"size for the sustained figure, or provision IOPS that do not burst (gp3, io2, a Premium SSD tier without bursting)."
	}
	return []result.Finding{f}
}
