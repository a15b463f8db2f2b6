package judge

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// etcd's space quota flag, and the largest quota etcd's documentation
// suggests.
const (
	FlagQuota   = "quota-backend-bytes"
	maxQuota    = 8 << 30
	quotaStep   = 512 << 20
	quotaSource = "etcd's system limits, https://etcd.io/docs/v3.6/dev-guide/limit/#storage-size-limit (8 GiB is the suggested maximum); " +
		"the maintenance guide's space quota, https://etcd.io/docs/v3.6/op-guide/maintenance/#space-quota"
)

// quotaFigures are what the quota is computed from: the largest database
// of the cluster (the file, which the quota is held against, and the part
// in use, which a defragmentation copies), its growth over a history, and
// how fast a defragmentation copies on the member's storage.
type quotaFigures struct {
	member      string
	size, inUse float64
	// quota is the quota the member reports (its gauge), 0 unknown, and
	// quotaFrom where it comes from.
	quota     float64
	quotaFrom string
	// growth is the file's growth in bytes per second over span seconds
	// of history (span 0: no history, growth unknown).
	growth, span float64
	// rate is the live data a defragmentation copies per second on the
	// member's storage (0: unknown), rateFrom how it was measured, and
	// rateMissing what would measure it.
	rate                  float64
	rateFrom, rateMissing string
}

// tuneQuota suggests --quota-backend-bytes between two bounds: from
// below, room for the database: its file under db_quota_used's limit of
// the quota now and, where a history gives its growth, as far ahead as
// the history reaches back (a prediction no longer than its data, as
// etcd's own growth alert predicts 4 hours from 4 hours); from above, a
// defragmentation of a database as large as the quota stalls the member
// under defrag_stall's limit (a controller's lease renew deadline) on
// its storage, and never over etcd's suggested 8 GiB. When no quota lies
// between them it says so and what to change instead.
func tuneQuota(t *result.Tuning, f quotaFigures, used, stall float64) {
	if f.size <= 0 {
		return
	}
	if _, ok := t.Value(FlagQuota); !ok && f.quota > 0 {
		t.Known = append(t.Known, result.FlagValue{Name: FlagQuota, Value: f.quota, From: f.quotaFrom})
	}
	need, figure := f.size, fmt.Sprintf("%s's database file is %s (%s in use)", f.member, units.Bytes(f.size), units.Bytes(f.inUse))
	if f.span > 0 {
		ahead := f.size + max(f.growth, 0)*f.span
		figure += fmt.Sprintf("; it grew %s a day over the last %s, %s in %s more at that rate",
			units.Bytes(f.growth*86400), spanWords(f.span), units.Bytes(ahead), spanWords(f.span))
		need = max(need, ahead)
	} else {
		figure += "; its growth is not known here (prom check reads it from a Prometheus' history)"
	}
	lo := need / used
	hi := float64(maxQuota)
	bound := "etcd's suggested maximum of 8 GiB"
	if f.rate > 0 {
		byStall := f.rate * stall
		copies := fmt.Sprintf("a defragmentation copies %s/s there (%s)", units.Bytes(f.rate), f.rateFrom)
		if byStall < hi {
			hi = byStall
			bound = fmt.Sprintf("%s: %s, and of a database that large would stall the member %s, %s's limit (a controller's lease renew deadline)",
				units.Bytes(byStall), copies, units.Seconds(stall), limits.DefragStall)
		} else {
			bound += fmt.Sprintf(" (%s: up to %s it stalls the member under %s, %s's limit)", copies, units.Bytes(byStall), units.Seconds(stall), limits.DefragStall)
		}
	}
	why := fmt.Sprintf("%s: the file should stay under %.0f%% of the quota (%s), so at least %s; at most %s",
		figure, used*100, limits.DBQuotaUsed, units.Bytes(lo), bound)
	if f.rate <= 0 {
		why += "; how long a defragmentation stalls at that size is not known"
		if f.rateMissing != "" {
			why += " (" + strings.TrimSuffix(f.rateMissing, ".") + ")"
		}
	}
	q := result.TunedFlag{Name: FlagQuota, Unit: "bytes", Why: why, Source: quotaSource + "; " + limits.DefragStall + ": " + leaseSource}
	// The room needed, in steps of 512 MiB; etcd's default when it fits;
	// under the stall's bound when the step passes it. When no quota
	// fits, the room wins.
	fits := lo <= hi
	suggest := math.Ceil(lo/quotaStep) * quotaStep
	switch {
	case !fits:
	case float64(diagnose.DefaultQuota) >= lo && float64(diagnose.DefaultQuota) <= hi:
		suggest = diagnose.DefaultQuota
	case suggest > hi:
		suggest = math.Floor(hi/(1<<20)) * (1 << 20)
	}
	q.Suggested = suggest
	current(t, &q, func(cur float64) bool { return cur >= lo && (cur <= hi || !fits) })
	t.Flags = append(t.Flags, q)
	if !fits {
		t.Notes = append(t.Notes, fmt.Sprintf("No quota satisfies both bounds of --%s: the database needs at least %s, and %s. "+
			"Keep fewer or smaller objects (a shorter Kubernetes event TTL, events in an etcd of their own with kube-apiserver's --etcd-servers-overrides), "+
			"or move the member to storage that copies faster; until then, defragment only while its clients can wait.",
			FlagQuota, units.Bytes(lo), bound))
	}
}

// leaseSource is why a defragmentation's stall is bounded.
var leaseSource = func() string { c, _ := limits.Lookup(limits.Table, limits.DefragStall); return c.Source }()

// spanWords is a span for a reader: "7 days", "36 hours", "45 minutes",
// "40s".
func spanWords(s float64) string {
	d := time.Duration(s * float64(time.Second))
	switch {
	case d >= 72*time.Hour:
		return fmt.Sprintf("%.0f days", d.Hours()/24)
	case d >= 2*time.Hour:
		return fmt.Sprintf("%.0f hours", d.Hours())
	case d >= 2*time.Minute:
		return fmt.Sprintf("%.0f minutes", d.Minutes())
	default:
		return units.Seconds(s)
	}
}

// largestDatabase is quotaFigures from the members' databases (metrics,
// doctor --node): the largest file, with the quota it reports and the
// stall a defragmentation would cause on its storage, where the Result
// predicts one.
func largestDatabase(r *result.Result) (quotaFigures, bool) {
	var f quotaFigures
	for _, m := range diagnose.Members(r) {
		if m.DBSize > f.size {
			f = quotaFigures{member: m.Name, size: m.DBSize, inUse: m.DBSizeInUse, quota: m.Quota}
			if m.Quota > 0 {
				f.quotaFrom = m.QuotaSource + " of " + m.Name
			}
		}
	}
	if f.size <= 0 {
		return f, false
	}
	if e := r.ExpectedDefrag; e != nil {
		f.rate, f.rateFrom, f.rateMissing = e.Rate, e.RateFrom, e.Missing
		if e.Member != "" && e.Member != f.member {
			f.rateFrom += " on " + e.Member
		}
	} else if r.Metrics != nil {
		f.rate, f.rateFrom = pastDefragRate(r.Metrics.Defrags, f.member, f.inUse)
	}
	if f.rate <= 0 && f.rateMissing == "" {
		f.rateMissing = "etcdperf doctor --data-dir DIR --db-size " + units.Size(int64(f.inUse)) +
			", with DIR on the member's storage, rehearses a defragmentation there"
	}
	return f, true
}

// pastDefragRate is how fast member's own defragmentations in what the
// run read (its window, or a history) copied its database (inUse bytes
// over their mean duration); 0 when it made none.
func pastDefragRate(ds []result.Defrags, member string, inUse float64) (float64, string) {
	for _, d := range ds {
		if d.Member != member || d.Count <= 0 || d.Seconds <= 0 || inUse <= 0 {
			continue
		}
		mean := d.Seconds / d.Count
		return inUse / mean, fmt.Sprintf("its own %s (%s), %s on average, %s in use", units.Count(int64(d.Count), "defragmentation"), d.Source, units.Seconds(mean), units.Bytes(inUse))
	}
	return 0, ""
}

// quotaTuning adds the quota to r's tuning from its members' databases.
func quotaTuning(r *result.Result) {
	if f, ok := largestDatabase(r); ok {
		tuneQuota(r.Tuning, f, diagnose.LimitOf(r, limits.DBQuotaUsed), diagnose.LimitOf(r, limits.DefragStall))
	}
}

// promQuota adds the quota to a prom check's tuning from its members'
// databases over the history: the largest file, its growth, and how fast
// its member's own defragmentations in the history copied it.
func promQuota(r *result.Result) {
	p := r.Prom
	var f quotaFigures
	for _, d := range p.Databases {
		if d.Size > f.size {
			f = quotaFigures{member: d.Instance, size: d.Size, inUse: d.InUse, quota: d.Quota, growth: d.Growth, span: p.End.Sub(p.Start).Seconds()}
			if d.Quota > 0 {
				f.quotaFrom = diagnose.QuotaMetric + " of " + d.Instance
			}
		}
	}
	if f.size <= 0 {
		return
	}
	f.rate, f.rateFrom = pastDefragRate(p.Defrags, f.member, f.inUse)
	if f.rate <= 0 {
		f.rateMissing = "the member did not defragment in the history; etcdperf doctor --data-dir DIR --db-size " + units.Size(int64(f.inUse)) +
			", with DIR on the member's storage, rehearses a defragmentation there"
	}
	tuneQuota(r.Tuning, f, diagnose.LimitOf(r, limits.DBQuotaUsed), diagnose.LimitOf(r, limits.DefragStall))
}
