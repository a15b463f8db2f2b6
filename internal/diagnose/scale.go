package diagnose

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// The rules over a scale run (r.Scale): how etcd's figures grow with the
// number of objects, and where the growth stopped.
func init() {
	Register(
		Rule{ID: "scale_stopped", Apply: scaleStopped},
		Rule{ID: "scale_errors", Apply: scaleErrors},
		Rule{ID: "scale_db_quota", Apply: scaleDBQuota},
		Rule{ID: "scale_rss_growth", Apply: scaleRSSGrowth},
		Rule{ID: "scale_list_superlinear", Apply: scaleListSuperlinear},
		Rule{ID: "scale_slow_applies", Apply: scaleSlowApplies},
		Rule{ID: "scale_watch_lag", Apply: scaleWatchLag},
	)
}

// DefaultQuota is etcd's default --quota-backend-bytes, for members that
// do not report theirs.
const DefaultQuota = 2 << 30

const scaleSource = "etcdperf scale steps"

// scaleTestSource is the public scale test of etcd under Kubernetes that
// the scale findings compare with.
const scaleTestSource = "OpenStack performance-docs' etcd health tests (a 430-node Kubernetes cluster grown to about 40,000 pods)"

const (
	quotaAdvice = "Compact etcd's history (kube-apiserver compacts every 5 minutes; etcd's --auto-compaction-retention for other clients), " +
		"defragment each member in turn to give the freed pages back (etcdctl defrag --endpoints one-member), and raise --quota-backend-bytes " +
		"if the data needs it (etcd suggests at most 8 GiB). Fewer or smaller objects (events in their own etcd with --etcd-servers-overrides) shrink it for good."
	largeRangeAdvice = "etcd's own warning is \"avoid queries with large range/delete range!\" (etcd up to 3.3 logs it after a slow apply): list in pages (the API server's limit), " +
		"serve lists from the API server's watch cache (resourceVersion=0, or consistent lists from cache in Kubernetes 1.31+), " +
		"and move high-churn resources such as events to their own etcd (--etcd-servers-overrides)."
)

func lastStep(sc *result.Scale) (result.ScaleStep, bool) {
	if sc == nil || len(sc.Steps) == 0 {
		return result.ScaleStep{}, false
	}
	return sc.Steps[len(sc.Steps)-1], true
}

func quotaSource(sc *result.Scale) string {
	if sc.Quota > 0 {
		return QuotaMetric
	}
	return "etcd's default --quota-backend-bytes (the members do not report theirs)"
}

func quotaOf(sc *result.Scale) float64 {
	if sc.Quota > 0 {
		return sc.Quota
	}
	return DefaultQuota
}

// scaleStopped reports a run that stopped before its last step, with the
// last step's figures.
func scaleStopped(r *result.Result) []result.Finding {
	st, ok := lastStep(r.Scale)
	if !ok || r.Scale.Stopped == "" {
		return nil
	}
	f := result.Finding{ID: "scale_stopped", Severity: result.Critical,
		Title: fmt.Sprintf("etcd stopped keeping up at %d objects (step %d of %d): %s", st.Objects, st.Step, r.Scale.Planned, r.Scale.Stopped),
		Evidence: []result.Evidence{
			{What: "objects when the run stopped", Observed: float64(st.Objects), Unit: "count", Source: scaleSource},
			{What: "database size", Observed: st.DBSize, Unit: "bytes", Source: "etcd_mvcc_db_total_size_in_bytes"},
		},
		Recommendation: "This is the load at which this cluster, on this storage, left its limits; the other findings say which figure grew and why. " +
			"Run again with --objects below it to size the cluster, or with --limit to find how far past it etcd still works."}
	if st.Put != nil && st.Put.Count > 0 {
		f.Evidence = append(f.Evidence, result.Evidence{What: "put p99 of the step", Observed: st.Put.P99, Unit: "s", Source: scaleSource})
	}
	for _, c := range r.Checks {
		if c.Status == result.StatusFail && (c.Name == limits.PutP99 || c.Name == limits.ListAllP99 || c.Name == limits.DBQuotaUsed) {
			f.Evidence = append(f.Evidence, EvidenceOf(c))
		}
	}
	return []result.Finding{f}
}

// scaleErrors reports the failed requests of the steps, first step first.
func scaleErrors(r *result.Result) []result.Finding {
	if r.Scale == nil {
		return nil
	}
	total := map[string]int64{}
	first := 0
	var firstObjects int64
	for _, st := range r.Scale.Steps {
		for k, n := range st.Errors {
			total[k] += n
			if first == 0 {
				first, firstObjects = st.Step, st.Objects
			}
		}
	}
	if len(total) == 0 {
		return nil
	}
	keys := make([]string, 0, len(total))
	var n int64
	for k, v := range total {
		keys = append(keys, k)
		n += v
	}
	sort.Slice(keys, func(i, j int) bool {
		if total[keys[i]] != total[keys[j]] {
			return total[keys[i]] > total[keys[j]]
		}
		return keys[i] < keys[j]
	})
	f := result.Finding{ID: "scale_errors", Severity: result.Critical,
		Title: fmt.Sprintf("%d requests failed, from step %d (%d objects) on, most with %q", n, first, firstObjects, keys[0])}
	for _, k := range keys {
		f.Evidence = append(f.Evidence, result.Evidence{What: k, Observed: float64(total[k]), Unit: "count", Source: scaleSource})
	}
	top := keys[0]
	switch {
	case strings.Contains(top, "database space exceeded") || strings.Contains(top, "NOSPACE"):
		f.Recommendation = "etcd reached its backend quota and refuses writes until space is freed: " + quotaAdvice +
			" Then disarm the alarm (etcdctl alarm disarm)."
	case strings.Contains(top, "DeadlineExceeded") || strings.Contains(top, "request timed out"):
		f.Recommendation = "etcd could not answer within --command-timeout as the data grew: see the WAL fsync and backend commit of the last steps " +
			"(the disk) and the lists' times (large ranges); " + largeRangeAdvice
	case strings.Contains(top, "watch"):
		f.Recommendation = "The watches fell behind the writes or were cancelled: etcd sends events slower than they are written; " +
			"look at the members' CPU and network, and at the size and rate of the writes."
	default:
		f.Recommendation = "See the errors by reason; errors under growth usually come from an overloaded member, its disk or its quota."
	}
	return []result.Finding{f}
}

// scaleDBQuota projects the database size to the quota: how many objects
// fit.
func scaleDBQuota(r *result.Result) []result.Finding {
	st, ok := lastStep(r.Scale)
	if !ok || st.DBSize <= 0 || st.Objects <= 0 {
		return nil
	}
	quota := quotaOf(r.Scale)
	perObject := st.DBSize / float64(st.Objects)
	fit := quota / perObject
	f := result.Finding{ID: "scale_db_quota", Severity: result.Info,
		Title: fmt.Sprintf("the database holds %s at %d objects (%s per object): the %s quota fits about %s objects like these",
			units.Bytes(st.DBSize), st.Objects, units.Bytes(perObject), units.Bytes(quota), roundCount(fit)),
		Evidence: []result.Evidence{
			{What: "database size", Observed: st.DBSize, Unit: "bytes", Source: "etcd_mvcc_db_total_size_in_bytes"},
			{What: "backend quota", Observed: quota, Unit: "bytes", Source: quotaSource(r.Scale)},
			{What: "share of the quota used", Observed: st.DBSize / quota, Unit: "ratio", Source: scaleSource},
		},
		Recommendation: "etcd keeps every revision until it is compacted, so updates grow the database beyond the objects' own size; " + quotaAdvice}
	// How near the quota the database came is db_near_quota's to say.
	if c, ok := FindCheck(r, limits.DBQuotaUsed); ok {
		f.Evidence = append(f.Evidence, EvidenceOf(c))
	}
	return []result.Finding{f}
}

// scaleRSSGrowth fits the members' memory against the objects: how much
// each 10,000 objects cost, and a warning when memory grows much faster
// than the data.
func scaleRSSGrowth(r *result.Result) []result.Finding {
	if r.Scale == nil {
		return nil
	}
	var xs, ys []float64
	for _, st := range r.Scale.Steps {
		if st.RSS > 0 {
			xs, ys = append(xs, float64(st.Objects)), append(ys, st.RSS)
		}
	}
	slope, ok := fitSlope(xs, ys)
	if !ok || slope <= 0 {
		return nil
	}
	mean := meanValueSize(r.Scale)
	last := ys[len(ys)-1]
	f := result.Finding{ID: "scale_rss_growth", Severity: result.Info,
		Title: fmt.Sprintf("etcd's memory grew by %s per 10,000 objects between %s and %s objects (%s per object)",
			units.Bytes(slope*1e4), roundCount(xs[0]), roundCount(xs[len(xs)-1]), units.Bytes(slope)),
		Evidence: []result.Evidence{
			{What: "RSS growth per 10,000 objects (least squares over the steps)", Observed: slope * 1e4, Unit: "bytes", Source: "process_resident_memory_bytes"},
			{What: "largest member RSS after the last step", Observed: last, Unit: "bytes", Source: "process_resident_memory_bytes"},
		},
		Recommendation: "Size the members' memory (and any container limit) for the objects you expect: etcd keeps every key in its in-memory index, " +
			"maps the database file (which the kernel keeps resident when it can), and holds the raft entries since its last snapshot in memory " +
			"(--snapshot-count, 10,000 by default), which makes the first 10,000 writes cost more memory each than the later ones: " +
			"grow past that before projecting."}
	if mean > 0 {
		f.Evidence = append(f.Evidence, result.Evidence{What: "mean value size of the objects", Observed: mean, Unit: "bytes", Source: scaleSource})
		if slope > LimitOf(r, limits.RSSPerValue)*mean {
			f.Severity = result.Warning
			f.Title += fmt.Sprintf(", %.0f times the objects' mean size", slope/mean)
			f.Recommendation = "Memory grows much faster than the data, as in " + scaleTestSource + ", where etcd grew from 2 GB to 40 GB: " +
				"look for what holds memory per object (many watchers with large histories, an unusually high --snapshot-count, large transactions). " + f.Recommendation
		}
	}
	return []result.Finding{f}
}

func meanValueSize(sc *result.Scale) float64 {
	var n, sum float64
	for _, k := range sc.Kinds {
		n += float64(k.Target)
		sum += float64(k.Target) * k.MeanValueSize
	}
	if n == 0 {
		return 0
	}
	return sum / n
}

// scaleListSuperlinear finds resources whose whole lists slow down faster
// than their number of objects grows.
func scaleListSuperlinear(r *result.Result) []result.Finding {
	if r.Scale == nil {
		return nil
	}
	var out []result.Finding
	minListSeconds, superlinearExponent := LimitOf(r, limits.ListMinTime), LimitOf(r, limits.ListGrowth)
	for _, k := range r.Scale.Kinds {
		var xs, ys []float64
		for _, st := range r.Scale.Steps {
			n := st.Kinds[k.Name]
			for _, l := range st.Lists {
				if l.Kind == k.Name && l.Latency != nil && l.Latency.P50 >= minListSeconds && n > 0 {
					xs, ys = append(xs, math.Log(float64(n))), append(ys, math.Log(l.Latency.P50))
				}
			}
		}
		if len(xs) < 3 {
			continue
		}
		exp, ok := fitSlope(xs, ys)
		if !ok || exp <= superlinearExponent {
			continue
		}
		first, last := math.Exp(ys[0]), math.Exp(ys[len(ys)-1])
		out = append(out, result.Finding{ID: "scale_list_superlinear", Severity: result.Warning,
			Title: fmt.Sprintf("listing all %s slows down faster than they grow: %s at %s objects, %s at %s (time ~ objects^%.1f)",
				k.Name, units.Seconds(first), roundCount(math.Exp(xs[0])), units.Seconds(last), roundCount(math.Exp(xs[len(xs)-1])), exp),
			Evidence: []result.Evidence{
				{What: "exponent of list time over objects (log-log least squares)", Observed: exp, Limit: superlinearExponent, Source: scaleSource},
				{What: "whole list of " + k.Name + " at the last step (p50)", Observed: last, Unit: "s", Source: scaleSource},
			},
			Recommendation: "A list should cost time in proportion to what it returns; faster growth means etcd spends more per key as the data grows " +
				"(a larger B-tree and index, pages no longer in memory, the apply loop busy with the writes). " + largeRangeAdvice})
	}
	return out
}

// scaleSlowApplies reports the slow applies etcd counted or logged during
// the steps, with the step where they began, and whether the logs blame
// writes or read-only ranges (the lists).
func scaleSlowApplies(r *result.Result) []result.Finding {
	if r.Scale == nil {
		return nil
	}
	var counted float64
	var writes, reads int64
	first := 0
	var firstObjects int64
	for _, st := range r.Scale.Steps {
		w := st.LogWarnings["slow_apply"]
		rd := st.LogWarnings["slow_read_only_range"] + st.LogWarnings["slow_read_only_txn"]
		if (st.SlowApplies > 0 || w+rd > 0) && first == 0 {
			first, firstObjects = st.Step, st.Objects
		}
		counted += st.SlowApplies
		writes += w
		reads += rd
	}
	if first == 0 {
		return nil
	}
	f := result.Finding{ID: "scale_slow_applies", Severity: result.Warning,
		Title: fmt.Sprintf("etcd took too long to apply requests from step %d (%d objects) on", first, firstObjects),
		Evidence: []result.Evidence{
			{What: "slow applies counted by etcd", Observed: counted, Unit: "count", Source: "etcd_server_slow_apply_total"},
			{What: "\"apply request took too long\" lines for writes", Observed: float64(writes), Unit: "count", Source: "etcd logs"},
			{What: "\"apply request took too long\" lines for read-only ranges and txns", Observed: float64(reads), Unit: "count", Source: "etcd logs"},
		},
		Recommendation: "Applies over --warning-apply-duration (100ms) are the first sign as the objects grow (\"apply entries took too long\" in " + scaleTestSource + "). " +
			"They come from large ranges and deletes, large transactions, or a slow backend commit (the disk): " + largeRangeAdvice}
	if reads > writes {
		f.Title += ", mostly read-only ranges: the lists' pages"
	}
	return []result.Finding{f}
}

// scaleWatchLag warns when watch events arrive a second or more after
// their puts.
func scaleWatchLag(r *result.Result) []result.Finding {
	if r.Scale == nil {
		return nil
	}
	watchLagWarn := LimitOf(r, limits.WatchLag)
	for _, st := range r.Scale.Steps {
		if st.WatchLag == nil || st.WatchLag.P99 < watchLagWarn {
			continue
		}
		return []result.Finding{{ID: "scale_watch_lag", Severity: result.Warning,
			Title: fmt.Sprintf("watch events arrived %s after their puts (p99) at %d objects (step %d)", units.Seconds(st.WatchLag.P99), st.Objects, st.Step),
			Evidence: []result.Evidence{
				{What: "watch event lag p99", Observed: st.WatchLag.P99, Limit: watchLagWarn, Unit: "s", Source: scaleSource},
			},
			Recommendation: "The API server's watch cache, and every controller behind it, sees changes that late: etcd sends events slower than they are written. " +
				"Look at the members' CPU and network, the write rate, and the size of the objects."}}
	}
	return nil
}

// fitSlope is the least-squares slope of ys over xs; false with fewer than
// two distinct xs.
func fitSlope(xs, ys []float64) (float64, bool) {
	n := float64(len(xs))
	if len(xs) < 2 {
		return 0, false
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx == 0 {
		return 0, false
	}
	return sxy / sxx, true
}

// roundCount prints a count with three significant digits: 12300, 1.5 million.
func roundCount(v float64) string {
	if v >= 1e6 {
		return fmt.Sprintf("%.3g million", v/1e6)
	}
	p := math.Pow(10, math.Max(0, math.Floor(math.Log10(math.Max(v, 1)))-2))
	return fmt.Sprintf("%.0f", math.Round(v/p)*p)
}
