package limits

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// Op says which side of the limit passes.
type Op string

// The comparison operators of criteria.
const (
	Below   Op = "<"  // observed must stay below the limit
	AtMost  Op = "<=" // observed may reach the limit
	AtLeast Op = ">=" // observed must reach the limit
)

// Unit names the unit of a criterion's values.
type Unit string

// The units of criteria.
const (
	Seconds  Unit = "s"
	PerSec   Unit = "ops/s"
	Count    Unit = "count"
	Fraction Unit = "ratio"
	Times    Unit = "x"
	Bytes    Unit = "bytes"
)

// Criterion is one limit with its source. Warn, when set, is where a
// passing value is close enough to the limit to deserve a warning.
type Criterion struct {
	ID     string
	Title  string
	Unit   Unit
	Op     Op
	Limit  float64
	Warn   *float64
	Source string
	// Findings names the findings that read a level of this table (none
	// for a criterion judged as a check of its own).
	Findings string
}

func f(v float64) *float64 { return &v }

// Criterion IDs used by the commands.
const (
	DiskSyncP99      = "disk_sync_p99"
	DiskIOPS         = "disk_iops"
	Throughput       = "throughput"
	SlowestRequest   = "slowest_request"
	LatencyStddev    = "latency_stddev"
	RequestP99       = "request_p99"
	WALFsyncP99      = "wal_fsync_p99"
	BackendCommitP99 = "backend_commit_p99"
	LeaderChanges    = "leader_changes"
	ProposalsFailed  = "proposals_failed"
	ApplyDuration    = "apply_duration"
	PutP99           = "put_p99"
	ListAllP99       = "list_all_p99"
	DBQuotaUsed      = "db_quota_used"
	RequestErrors    = "request_errors"
	APIMutatingP99   = "api_mutating_p99"
	APIGetP99        = "api_get_p99"
	APIListP99       = "api_list_p99"
	APIErrors        = "api_errors"
	CapacityHeadroom = "capacity_headroom"
)

// sloSource is where the Kubernetes API call latency SLO is defined.
// limitSource starts the source of a criterion set with --limit.
const limitSource = "set with --limit "

const sloSource = "Kubernetes SLO on API call latency (sig-scalability/slos/api_call_latency.md)"

// Table holds every limit etcdperf judges by: the checks' criteria, then
// the levels of the findings.
// The derived levels' limits are their shares of the defaults.
var Table = derive(append(append([]Criterion(nil), checked...), levels...), nil)

// checked are the criteria judged as checks. Throughput's limit is a
// fraction of the profile's target rate.
var checked = []Criterion{
	{ID: DiskSyncP99, Title: "WAL fdatasync p99", Unit: Seconds, Op: Below, Limit: 0.010, Warn: f(0.008),
		Source: "etcd FAQ and hardware guide: 99th percentile of fdatasync below 10ms; warn with under 20% headroom"},
	{ID: DiskIOPS, Title: "sequential synced write IOPS", Unit: PerSec, Op: AtLeast, Limit: 50, Warn: f(500),
		Source: "etcd hardware guide: 50 sequential IOPS typical, 500 for a heavily loaded cluster"},
	{ID: Throughput, Title: "throughput vs target rate", Unit: Fraction, Op: AtLeast, Limit: 0.9,
		Source: "etcdctl check perf: at least 90% of the profile's rate"},
	{ID: SlowestRequest, Title: "slowest request", Unit: Seconds, Op: AtMost, Limit: 0.5,
		Source: "etcdctl check perf: slowest request at most 500ms"},
	{ID: LatencyStddev, Title: "request latency stddev", Unit: Seconds, Op: AtMost, Limit: 0.1,
		Source: "etcdctl check perf: standard deviation at most 100ms"},
	{ID: RequestP99, Title: "request p99", Unit: Seconds, Op: Below, Limit: 0.1, Warn: f(0.05),
		Source: "etcd --warning-apply-duration (100ms): a request slower than that is logged as took too long"},
	{ID: WALFsyncP99, Title: "server WAL fsync p99", Unit: Seconds, Op: Below, Limit: 0.010, Warn: f(0.008),
		Source: "etcd metrics guide: etcd_disk_wal_fsync_duration_seconds p99 below 10ms"},
	{ID: BackendCommitP99, Title: "server backend commit p99", Unit: Seconds, Op: Below, Limit: 0.025, Warn: f(0.020),
		Source: "etcd FAQ: etcd_disk_backend_commit_duration_seconds p99 below 25ms"},
	{ID: LeaderChanges, Title: "leader changes", Unit: Count, Op: AtMost, Limit: 0,
		Source: "etcd metrics guide: leader changes under steady load mean missed heartbeats"},
	{ID: ProposalsFailed, Title: "failed proposals", Unit: Count, Op: AtMost, Limit: 0,
		Source: "etcd metrics guide: etcd_server_proposals_failed_total should not grow"},
	{ID: ApplyDuration, Title: "apply duration", Unit: Seconds, Op: Below, Limit: 0.1,
		Source: "etcd --warning-apply-duration default 100ms"},
	{ID: PutP99, Title: "put p99 (a Kubernetes write)", Unit: Seconds, Op: Below, Limit: 1, Warn: f(0.1),
		Source: "Kubernetes API call latency SLO (sig-scalability): mutating calls p99 <= 1s, etcd's write included; warn at etcd's --warning-apply-duration 100ms"},
	{ID: ListAllP99, Title: "list of a whole resource (all pages)", Unit: Seconds, Op: Below, Limit: 30, Warn: f(5),
		Source: "Kubernetes API call latency SLO (sig-scalability): LIST of a namespace or the cluster p99 <= 30s, the API server's own work included; warn at 5s"},
	{ID: DBQuotaUsed, Title: "database size / backend quota", Unit: Fraction, Op: Below, Limit: 0.8, Warn: f(0.5), Findings: "db_near_quota",
		Source: "etcd --quota-backend-bytes (default 2 GiB): at the quota etcd raises the NOSPACE alarm and accepts only reads and deletes; " +
			"80% leaves room to compact and defragment before etcd's own alert pages at 95% (etcdDatabaseQuotaLowSpace, etcd-io/etcd contrib/mixin)"},
	{ID: RequestErrors, Title: "failed requests", Unit: Count, Op: AtMost, Limit: 0,
		Source: "etcdctl check perf: any failed request fails the check"},
	{ID: APIMutatingP99, Title: "mutating API call p99", Unit: Seconds, Op: AtMost, Limit: 1, Warn: f(0.5),
		Source: sloSource + ": POST, PUT, PATCH, DELETE of single objects, per resource and verb, p99 <= 1s; warn at 500ms"},
	{ID: APIGetP99, Title: "read of one object p99", Unit: Seconds, Op: AtMost, Limit: 1, Warn: f(0.5),
		Source: sloSource + ": non-streaming read-only calls of scope resource p99 <= 1s; warn at 500ms"},
	{ID: APIListP99, Title: "list of a namespace p99", Unit: Seconds, Op: AtMost, Limit: 5, Warn: f(2.5),
		Source: sloSource + ": non-streaming read-only calls of scope namespace p99 <= 5s; warn at 2.5s"},
	{ID: CapacityHeadroom, Title: "capacity over the cluster's peak write demand", Unit: Times, Op: AtLeast, Limit: 1, Warn: f(2),
		Source: "a storage must carry the cluster's peak writes (etcd's hardware guide sizes disks in writes/s); warn with under 2x headroom, as for a peak that grows"},
	{ID: APIErrors, Title: "failed API calls", Unit: Count, Op: AtMost, Limit: 0,
		Source: "a call that failed (e.g. etcdserver: request timed out) failed its user"},
}

// Lookup returns the criterion with the given ID from table.
func Lookup(table []Criterion, id string) (Criterion, bool) {
	for _, c := range table {
		if c.ID == id {
			return c, true
		}
	}
	return Criterion{}, false
}

// LimitOf returns criterion id's limit in table (the criteria a run is
// judged with, --limit applied), else Table's.
func LimitOf(table []Criterion, id string) float64 {
	c, ok := Lookup(table, id)
	if !ok {
		c, _ = Lookup(Table, id)
	}
	return c.Limit
}

// Evaluate judges one observed value.
func Evaluate(c Criterion, observed float64) result.Check {
	ch := result.Check{
		Name:     c.ID,
		Title:    c.Title,
		Observed: observed,
		Limit:    c.Limit,
		Warn:     c.Warn,
		Op:       string(c.Op),
		Unit:     string(c.Unit),
		Source:   c.Source,
		Status:   result.StatusPass,
	}
	if !passes(c.Op, observed, c.Limit) {
		ch.Status = result.StatusFail
	} else if c.Warn != nil && !passes(c.Op, observed, *c.Warn) {
		ch.Status = result.StatusWarn
	}
	return ch
}

// Judge looks up the criterion id in criteria and judges v by it; false
// when criteria has no such criterion (it is not judged).
func Judge(criteria []Criterion, id string, v float64) (result.Check, bool) {
	c, ok := Lookup(criteria, id)
	if !ok {
		return result.Check{}, false
	}
	return Evaluate(c, v), true
}

// Apply judges v by the criterion id of criteria and appends the check to
// checks; bound marks an observed value that is only an upper bound (a p99
// in the lowest bucket of etcd's histogram). Nothing is appended when
// criteria has no such criterion.
func Apply(checks *[]result.Check, criteria []Criterion, id string, v float64, bound bool) {
	if ch, ok := Judge(criteria, id, v); ok {
		ch.Bound = bound
		*checks = append(*checks, ch)
	}
}

func passes(op Op, v, limit float64) bool {
	switch op {
	case Below:
		return v < limit
	case AtMost:
		return v <= limit
	case AtLeast:
		return v >= limit
	}
	return false
}

// Verdict folds checks into one verdict: the worst status.
func Verdict(checks []result.Check) result.Verdict {
	v := result.Pass
	for _, c := range checks {
		v = result.Worse(v, result.Verdict(c.Status))
	}
	return v
}

// Override returns a copy of table with limits replaced by "id=value"
// settings. Values take the criterion's unit; durations ("15ms") are
// accepted for criteria in seconds, percentages ("80%") for ratios and
// sizes ("64m", "100MiB") for bytes. The
// warning level of an overridden criterion is dropped unless the setting
// gives it as "id=limit,warn". A level derived from a criterion set here
// (derivedLevels) follows it, unless settings set the level too.
func Override(table []Criterion, settings []string) ([]Criterion, error) {
	out := append([]Criterion(nil), table...)
	set := map[string]bool{}
	for _, s := range settings {
		id, val, ok := strings.Cut(s, "=")
		if !ok {
			return nil, fmt.Errorf("--limit %q: want NAME=VALUE, e.g. %s=15ms", s, DiskSyncP99)
		}
		i := -1
		for j := range out {
			if out[j].ID == id {
				i = j
			}
		}
		if i < 0 {
			return nil, fmt.Errorf("--limit %q: unknown criterion %q (known: %s)", s, id, strings.Join(IDs(table), ", "))
		}
		lim, warn, hasWarn := strings.Cut(val, ",")
		v, err := parseValue(out[i].Unit, lim)
		if err != nil {
			return nil, fmt.Errorf("--limit %q: %w", s, err)
		}
		set[id] = true
		out[i].Limit = v
		out[i].Warn = nil
		out[i].Source = limitSource + s
		if hasWarn {
			w, err := parseValue(out[i].Unit, warn)
			if err != nil {
				return nil, fmt.Errorf("--limit %q: %w", s, err)
			}
			out[i].Warn = &w
		}
	}
	return derive(out, set), nil
}

// IDs lists the criterion IDs of a table.
func IDs(table []Criterion) []string {
	ids := make([]string, len(table))
	for i, c := range table {
		ids[i] = c.ID
	}
	return ids
}

// parseValue reads a limit in unit u; it must be a finite number, not
// negative.
func parseValue(u Unit, s string) (float64, error) {
	v, err := parseNumber(u, s)
	if err == nil && (math.IsNaN(v) || math.IsInf(v, 0) || v < 0) {
		return 0, fmt.Errorf("%q is not a limit: use a finite value of 0 or more", strings.TrimSpace(s))
	}
	return v, err
}

func parseNumber(u Unit, s string) (float64, error) {
	s = strings.TrimSpace(s)
	switch u {
	case Seconds:
		if d, err := time.ParseDuration(s); err == nil {
			return d.Seconds(), nil
		}
	case Fraction:
		if p, ok := strings.CutSuffix(s, "%"); ok {
			v, err := strconv.ParseFloat(p, 64)
			if err != nil {
				return 0, fmt.Errorf("%q is not a percentage", s)
			}
			return v / 100, nil
		}
	case Bytes:
		if b, err := units.ParseSize(s); err == nil {
			return float64(b), nil
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number%s", s, unitHint[u])
	}
	return v, nil
}

// unitHint says what else a value of a unit may be written as.
var unitHint = map[Unit]string{Seconds: " or a duration like 15ms", Fraction: " or a percentage like 80%", Bytes: " or a size like 64m"}

// MinSamples is the fewest observations whose q-quantile (0 < q < 1) is a
// quantile at all: below 1/(1-q) of them (100 for a p99), it is their
// maximum. A window with fewer is not judged by a quantile's limit.
func MinSamples(q float64) float64 { return math.Ceil(1 / (1 - q)) }
