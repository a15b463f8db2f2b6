package diagnose

import (
	"fmt"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// The rules of etcd's upkeep, whichever command saw it (logs, metrics,
// prom check): defragmentations that stalled a member longer than a
// Kubernetes controller's lease renewal, and latency spikes that recur
// with the scheduled compactions, named as compaction's rather than as a
// slow disk's.
func init() {
	Register(
		Rule{ID: "defrag_stall", Apply: defragStall},
		Rule{ID: "compaction_spikes", Apply: compactionSpikes},
		Rule{ID: "defrag_stall_expected", Apply: expectedDefragStall},
	)
}

// DefragAdvice is etcd's maintenance guide's way to defragment, in its
// terms.
const DefragAdvice = "Defragment one member at a time, followers first (etcdctl defrag --endpoints ONE, never --cluster), " +
	"move leadership off a member before defragmenting it (etcdctl move-leader), and never while a compaction runs " +
	"(not within a minute of the API server's 5-minute compactions); keep the database small, since the stall grows with its size " +
	"(etcd maintenance guide, https://etcd.io/docs/v3.5/op-guide/maintenance/#defragmentation)."

// LeaseWords says a stall of seconds against a Kubernetes controller's
// lease renew deadline (limit, in seconds): under it, or longer and what
// that costs.
func LeaseWords(seconds, limit float64) string {
	if seconds < limit {
		return fmt.Sprintf("under a Kubernetes controller's lease renew deadline (%s; lease 15s)", units.Seconds(limit))
	}
	return fmt.Sprintf("longer than a Kubernetes controller's lease renew deadline (%s; lease 15s): the controllers whose leader election the member serves would lose their leases", units.Seconds(limit))
}

// expectedDefragStall states the stall a defragmentation of the
// database would cause on this storage (doctor), a warning when it is
// longer than a controller's lease renew deadline; or, when it cannot be
// told, what it would need.
func expectedDefragStall(r *result.Result) []result.Finding {
	e := r.ExpectedDefrag
	if e == nil {
		return nil
	}
	who := "this storage"
	if e.Member != "" {
		who = e.Member
	}
	f := result.Finding{ID: "defrag_stall_expected", Severity: result.Info}
	limit := LimitOf(r, limits.DefragStall)
	f.Title = ExpectedDefragTitle(e, who, limit)
	if e.Seconds <= 0 {
		f.Evidence = []result.Evidence{{What: "database size in use", Observed: e.DBSize, Unit: "bytes", Source: e.DBSizeFrom}}
		f.Recommendation = e.Missing + " " + DefragAdvice
		return []result.Finding{f}
	}
	if e.Seconds >= limit {
		f.Severity = result.Warning
	}
	f.Evidence = []result.Evidence{
		{What: "database size in use", Observed: e.DBSize, Unit: "bytes", Source: e.DBSizeFrom},
		{What: "live data a defragmentation copies per second", Observed: e.Rate, Unit: "bytes/s", Source: e.RateFrom},
		{What: "expected stall: database size / copy rate", Observed: e.Seconds, Limit: limit, Unit: "s", Source: limits.DefragStall},
	}
	f.Recommendation = DefragAdvice
	return []result.Finding{f}
}

// ExpectedDefragTitle says the stall e expects on who (a member, a
// storage) against limit, a Kubernetes controller's lease renew deadline
// in seconds; or that it is not known.
func ExpectedDefragTitle(e *result.ExpectedDefrag, who string, limit float64) string {
	if e.Seconds <= 0 {
		return fmt.Sprintf("The stall a defragmentation of %s's %s database would cause is not known", who, units.Bytes(e.DBSize))
	}
	return fmt.Sprintf("A defragmentation of a %s database on %s would stall the member for about %s, %s",
		units.Bytes(e.DBSize), who, units.Seconds(e.Seconds), LeaseWords(e.Seconds, limit))
}

// defragStall names the defragmentations longer than a controller's
// lease renew deadline: the member answered nothing meanwhile.
func defragStall(r *result.Result) []result.Finding {
	limit := LimitOf(r, limits.DefragStall)
	_, ds := r.UpkeepSeen()
	f := result.Finding{ID: "defrag_stall", Severity: result.Warning}
	var names []string
	for _, d := range ds {
		lo, hi := d.LongestBounds()
		if d.Count <= 0 || hi < limit {
			continue
		}
		longest := units.Seconds(hi)
		if lo < hi {
			// what etcd's histogram tells of it
			longest = fmt.Sprintf("between %s and %s", units.Seconds(lo), units.Seconds(hi))
		}
		names = append(names, d.Member)
		f.Evidence = append(f.Evidence, result.Evidence{
			What:     fmt.Sprintf("%s: %s defragmentation(s), %s in all, the longest %s", d.Member, trimFloat(d.Count), units.Seconds(d.Seconds), longest),
			Observed: hi, Limit: limit, Unit: "s", Source: d.Source,
		})
	}
	if len(names) == 0 {
		return nil
	}
	f.Title = fmt.Sprintf("A defragmentation of %s stalled the member longer than a Kubernetes controller's lease renew deadline (%s; lease 15s): "+
		"the controllers whose leader election it served lost their leases", strings.Join(names, ", "), units.Seconds(limit))
	f.Recommendation = DefragAdvice
	return []result.Finding{f}
}

// compactionSpikes names latency spikes that recur with the scheduled
// compactions, and the members they recur on: their period and cost are
// compaction's, not a slow disk's.
func compactionSpikes(r *result.Result) []result.Finding {
	share, need := LimitOf(r, limits.CompactionSpikeShare), LimitOf(r, limits.CompactionsRegular)
	cs, _ := r.UpkeepSeen()
	f := result.Finding{ID: "compaction_spikes", Severity: result.Warning}
	var titles []string
	for _, c := range cs {
		if !c.Regular || float64(c.Count) < need || c.Near < 2 || float64(c.Near) < share*float64(c.Spikes) {
			continue
		}
		period := units.Seconds(c.Period)
		if c.Period >= 60 {
			period = time.Duration(c.Period * float64(time.Second)).Round(time.Second).String()
		}
		cost := ""
		if c.TookMax > 0 {
			cost = fmt.Sprintf(", each taking %s (longest %s)", units.Seconds(c.TookP50), units.Seconds(c.TookMax))
		}
		f.Members = append(f.Members, c.Member)
		titles = append(titles, fmt.Sprintf("%s: %d of its %d latency spikes came within %s of a compaction, every %s%s",
			c.Member, c.Near, c.Spikes, units.Seconds(c.Window), period, cost))
		f.Evidence = append(f.Evidence,
			result.Evidence{What: fmt.Sprintf("%s: %d scheduled compactions, every %s", c.Member, c.Count, period), Observed: float64(c.Count), Limit: need, Unit: "count", Source: c.Source},
			result.Evidence{What: fmt.Sprintf("%s: share of latency spikes within %s of a compaction", c.Member, units.Seconds(c.Window)),
				Observed: float64(c.Near) / float64(c.Spikes), Limit: share, Unit: "ratio", Source: c.Source})
	}
	if len(titles) == 0 {
		return nil
	}
	f.Title = "Latency spikes recur with the scheduled compactions, not with a slow disk: " + strings.Join(titles, "; ")
	f.Recommendation = "These spikes are compaction's cost: each compaction deletes the history of its period in batches and commits them. " +
		"Compact more often so that each compaction is smaller (kube-apiserver --etcd-compaction-interval, etcd --auto-compaction-retention), " +
		"or spread its batches (etcd 3.4+ --experimental-compaction-batch-limit and --experimental-compaction-sleep-interval; 3.6+: --compaction-batch-limit, --compaction-sleep-interval); " +
		"judge the disk by the latency between compactions (etcd-io/etcd#11099, #19406)."
	return []result.Finding{f}
}

func trimFloat(v float64) string { return fmt.Sprintf("%g", v) }
