package promexport

import (
	"fmt"
	"github.com/etcdperf/etcdperf/internal/limits"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/etcdperf/etcdperf/internal/promscrape"
)

// PresetEtcd is the name of the preset of etcd's health signals.
const PresetEtcd = "etcd"

// presetEntry is one query of a preset, written with two placeholders:
// sel(name, extra...) is a selector of the metric with the --selector
// matchers, and W the rate window.
type presetEntry struct {
	name, unit, help string
	expr             func(b builder) string
}

// builder writes PromQL for one selector and window.
type builder struct {
	selector string
	window   string
}

// sel is the selector of metric with the user's matchers and extra ones.
func (b builder) sel(metric string, extra ...string) string {
	var m []string
	if b.selector != "" {
		m = append(m, b.selector)
	}
	m = append(m, extra...)
	return metric + "{" + strings.Join(m, ",") + "}"
}

// oneOf is the first of several names etcd gave one gauge over its
// versions, per instance: (a{..} or b{..}). Vector matching ignores the
// metric name, so a server exposing both is counted once.
func (b builder) oneOf(names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = b.sel(n)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "(" + strings.Join(parts, " or ") + ")"
}

// quantile is the q-quantile per instance of a histogram over the window.
func (b builder) quantile(q float64, histogram string) string {
	return fmt.Sprintf("histogram_quantile(%g, sum by (instance, le) (rate(%s[%s])))", q, b.sel(histogram+"_bucket"), b.window)
}

// judgedQuantile is quantile where the window holds enough observations
// for it to be one (limits.MinSamples), absent elsewhere: a p99 of a
// handful of observations is their maximum.
func (b builder) judgedQuantile(q float64, histogram string) string {
	return fmt.Sprintf("%s and on (instance) (sum by (instance) (increase(%s[%s])) >= %g)",
		b.quantile(q, histogram), b.sel(histogram+"_count"), b.window, limits.MinSamples(q))
}

// rate is the per-second rate per instance of the first counter of names
// that the server has.
func (b builder) rate(names []string, extra ...string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("sum by (instance) (rate(%s[%s]))", b.sel(n, extra...), b.window)
	}
	return strings.Join(parts, " or ")
}

// increase is the increase per instance of a counter over the window.
func (b builder) increase(name string) string {
	return fmt.Sprintf("sum by (instance) (increase(%s[%s]))", b.sel(name), b.window)
}

var presets = map[string][]presetEntry{
	PresetEtcd: etcdPreset(),
}

// etcdPreset holds the signals OpenStack performance-docs' etcd health
// tests pulled out of Prometheus (memory, snapshot save, backend commit and WAL fsync
// latencies, pending proposals, failed requests, peer traffic) plus leader
// changes, the database size and what etcd's own guide watches.
func etcdPreset() []presetEntry {
	n := promscrape.EtcdNames
	q := func(name string, q float64, hist []string, help string) presetEntry {
		return presetEntry{name, "s", help, func(b builder) string { return b.quantile(q, hist[0]) }}
	}
	return []presetEntry{
		{"rss", "bytes", "resident memory of the etcd process",
			func(b builder) string {
				return fmt.Sprintf("max by (instance) (%s and on (instance) %s)", b.oneOf(n.RSS), b.oneOf(n.HasLeader))
			}},
		q("wal_fsync_p50", 0.5, n.WALFsync, "median WAL fsync latency"),
		q("wal_fsync_p90", 0.9, n.WALFsync, "90th percentile of WAL fsync latency"),
		q("wal_fsync_p99", 0.99, n.WALFsync, "99th percentile of WAL fsync latency (limit 10ms)"),
		q("backend_commit_p50", 0.5, n.BackendCommit, "median backend (bbolt) commit latency"),
		q("backend_commit_p90", 0.9, n.BackendCommit, "90th percentile of backend commit latency"),
		q("backend_commit_p99", 0.99, n.BackendCommit, "99th percentile of backend commit latency (limit 25ms)"),
		q("snapshot_save_p99", 0.99, n.SnapshotSave, "99th percentile of raft snapshot save latency (NaN: no snapshot in the window)"),
		q("peer_rtt_p99", 0.99, n.PeerRTT, "99th percentile of the round trip time to peers"),
		{"proposals_pending", "count", "proposals waiting to be committed",
			func(b builder) string { return "max by (instance) (" + b.oneOf(n.ProposalsPending) + ")" }},
		{"proposals_committed_rate", "ops/s", "raft proposals committed per second",
			func(b builder) string { return b.rate(n.ProposalsCommitted) }},
		{"proposals_failed_rate", "ops/s", "raft proposals failed per second",
			func(b builder) string { return b.rate(n.ProposalsFailed) }},
		{"failed_requests_rate", "ops/s", "gRPC requests per second that ended with a code other than OK or Canceled",
			func(b builder) string { return b.rate(n.GRPCHandled, `grpc_code!~"OK|Canceled"`) }},
		{"puts_rate", "ops/s", "puts per second",
			func(b builder) string { return b.rate(n.Puts) }},
		{"peer_sent_rate", "bytes/s", "bytes per second sent to peers",
			func(b builder) string { return b.rate(n.PeerSent) }},
		{"peer_received_rate", "bytes/s", "bytes per second received from peers",
			func(b builder) string { return b.rate(n.PeerReceived) }},
		{"leader_changes", "count", "leader changes seen in the window before each point",
			func(b builder) string { return b.increase(n.LeaderChanges[0]) }},
		{"has_leader", "count", "1 when the member has a leader, 0 when not",
			func(b builder) string { return "min by (instance) (" + b.oneOf(n.HasLeader) + ")" }},
		{"slow_applies", "count", "applies slower than --warning-apply-duration in the window before each point",
			func(b builder) string { return b.increase(n.SlowApplies[0]) }},
		{"heartbeat_failures", "count", "heartbeats the leader failed to send in the window before each point",
			func(b builder) string { return b.increase(n.HeartbeatFailures[0]) }},
		{"db_size", "bytes", "size of the backend database file",
			func(b builder) string { return "max by (instance) (" + b.oneOf(n.DBSize) + ")" }},
		{"db_size_in_use", "bytes", "bytes of the database in use (the rest is free pages that defrag returns)",
			func(b builder) string { return "max by (instance) (" + b.oneOf(n.DBSizeInUse) + ")" }},
	}
}

// Preset returns the queries of the named preset, each selecting only
// series that match selector (label matchers without braces, may be
// empty), with rates and quantiles over window.
func Preset(name, selector string, window time.Duration) ([]Query, error) {
	entries, ok := presets[name]
	if !ok {
		return nil, fmt.Errorf("--preset %q: unknown preset (known: %s)", name, strings.Join(PresetNames(), ", "))
	}
	if window <= 0 {
		return nil, fmt.Errorf("the rate window must be positive")
	}
	b := builder{selector: selector, window: model.Duration(window).String()}
	qs := make([]Query, len(entries))
	for i, e := range entries {
		qs[i] = Query{Name: e.name, Expr: e.expr(b), Unit: e.unit}
	}
	return qs, nil
}

// PresetNames lists the presets.
func PresetNames() []string {
	var names []string
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// PresetHelp describes each query of a preset, one line each, for --help.
func PresetHelp(name string) string {
	var b strings.Builder
	for _, e := range presets[name] {
		fmt.Fprintf(&b, "  %-26s %s\n", e.name, e.help)
	}
	return b.String()
}
