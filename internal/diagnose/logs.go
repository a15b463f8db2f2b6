package diagnose

import (
	"fmt"
	"sort"
	"strings"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// The rules over etcd's logs. They read r.Logs only: the counts of each
// event class (ids from internal/etcdlog), their durations and the
// members' leader changes.
func init() {
	Register(
		Rule{ID: "logs_db_space_exceeded", Apply: logsDBSpace},
		Rule{ID: "logs_request_timeouts", Apply: logsTimeouts},
		Rule{ID: "logs_leader_churn", Apply: logsLeaderChurn},
		Rule{ID: "logs_disk", Apply: logsDisk},
		Rule{ID: "logs_raft_loop_blocked", Apply: logsRaftBlocked},
		Rule{ID: "logs_network", Apply: logsNetwork},
		Rule{ID: "logs_slow_requests", Apply: logsSlowRequests},
		Rule{ID: "logs_clock_drift", Apply: logsClockDrift},
		Rule{ID: "logs_maintenance_failed", Apply: logsMaintenanceFailed},
		Rule{ID: "logs_unparsed", Apply: logsUnparsed},
	)
}

const logsSource = "etcd logs"

func logCount(l *result.Logs, ids ...string) int64 {
	var n int64
	for _, id := range ids {
		n += l.Classes[id]
	}
	return n
}

// countEvidence is the evidence "N <what> (class)" for each class with events.
func countEvidence(l *result.Logs, ids ...string) []result.Evidence {
	var ev []result.Evidence
	for _, id := range ids {
		n := l.Classes[id]
		if n == 0 {
			continue
		}
		what := id
		if st := l.Class(id); st != nil {
			what = fmt.Sprintf("%s lines (%s)", id, st.Title)
			if st.First != nil && st.Last != nil {
				what += fmt.Sprintf(", %s to %s", st.First.Format("2006-01-02 15:04:05"), st.Last.Format("2006-01-02 15:04:05"))
			}
		}
		ev = append(ev, result.Evidence{What: what, Observed: float64(n), Unit: "count", Source: logsSource})
	}
	return ev
}

// tookEvidence is the p99 and max of a class's durations, if it has them.
func tookEvidence(l *result.Logs, id string, limit float64) []result.Evidence {
	st := l.Class(id)
	if st == nil || st.Took == nil || st.Took.Count == 0 {
		return nil
	}
	return []result.Evidence{
		{What: id + " p99 of the durations logged", Observed: st.Took.P99, Limit: limit, Unit: "s", Source: logsSource},
		{What: id + " longest duration logged", Observed: st.Took.Max, Limit: limit, Unit: "s", Source: logsSource},
	}
}

func logsDBSpace(r *result.Result) []result.Finding {
	l := r.Logs
	if l == nil || logCount(l, "db_space_exceeded") == 0 {
		return nil
	}
	return []result.Finding{{
		ID:       "logs_db_space_exceeded",
		Severity: result.Critical,
		Title:    "etcd ran out of its space quota (NOSPACE alarm, \"database space exceeded\"): it refuses writes until space is freed and the alarm is disarmed",
		Evidence: countEvidence(l, "db_space_exceeded"),
		Recommendation: "Compact to the current revision (etcdctl compact <rev>), defragment every member one at a time (etcdctl defrag), then clear the alarm (etcdctl alarm disarm). " +
			"Keep --auto-compaction-retention on, and raise --quota-backend-bytes (2 GiB by default, 8 GiB suggested at most) if the data really needs it (etcd maintenance guide, \"Space quota\").",
	}}
}

func logsTimeouts(r *result.Result) []result.Finding {
	l := r.Logs
	if l == nil || logCount(l, "request_timeout") == 0 {
		return nil
	}
	n := logCount(l, "request_timeout")
	ev := countEvidence(l, "request_timeout", "read_index_slow")
	return []result.Finding{{
		ID:       "logs_request_timeouts",
		Severity: result.Critical,
		Title:    fmt.Sprintf("etcd failed requests with \"request timed out\" %s: clients (the Kubernetes API server) saw errors", nTimes(n)),
		Evidence: ev,
		Recommendation: "A request times out when its proposal is not committed and applied within the request timeout: the leader could not reach a quorum in time, " +
			"because of slow disks (WAL fdatasync), a blocked raft loop or the network between members. The other findings say which; fix that one.",
	}}
}

func logsLeaderChurn(r *result.Result) []result.Finding {
	l := r.Logs
	if l == nil {
		return nil
	}
	lost := logCount(l, "leader_lost", "leader_changed")
	worst, worstMember := 0, ""
	for _, m := range l.Members {
		if m.MaxLeaderChanges15m > worst {
			worst, worstMember = m.MaxLeaderChanges15m, m.Name
		}
	}
	leaderChanges15m := LimitOf(r, limits.LeaderChanges15m)
	if lost == 0 && float64(worst) < leaderChanges15m {
		return nil
	}
	ev := countEvidence(l, "leader_lost", "leader_changed", "election_started", "leader_elected")
	ev = append(ev, result.Evidence{What: "most leader changes one member saw within 15 minutes (" + worstMember + ")",
		Observed: float64(worst), Limit: leaderChanges15m, Unit: "count",
		Source: "etcd-mixin alert etcdHighNumberOfLeaderChanges: 4 leader changes within 15 minutes"})
	f := result.Finding{
		ID:       "logs_leader_churn",
		Severity: result.Warning,
		Title:    fmt.Sprintf("Members lost or changed their leader %s: each election stalls writes for at least an election timeout", nTimes(lost)),
		Evidence: ev,
		Recommendation: "Leaders are lost when followers miss heartbeats: the leader's disk or CPU blocked its raft loop (see the disk and raft loop findings) or the network dropped them. " +
			"If members are far apart, raise --heartbeat-interval to about the round-trip time and --election-timeout to 10x it (etcd tuning guide).",
	}
	if float64(worst) >= leaderChanges15m {
		f.Severity = result.Critical
		f.Title = fmt.Sprintf("Leader elections are frequent: %s saw %d leader changes within 15 minutes (etcd's alert fires at %.0f)", worstMember, worst, leaderChanges15m)
	}
	return []result.Finding{f}
}

const logsDiskAdvice = "Measure the storage under etcd's data dir with `etcdperf disk --dir <data-dir>` (fdatasync p99 must stay under 10ms). " + diskAdvice

func logsDisk(r *result.Result) []result.Finding {
	l := r.Logs
	if l == nil || logCount(l, "slow_fdatasync") == 0 {
		return nil
	}
	n := logCount(l, "slow_fdatasync")
	ev := tookEvidence(l, "slow_fdatasync", LimitOf(r, limits.DiskSyncP99))
	ev = append(ev, countEvidence(l, "slow_fdatasync", "heartbeat_late", "server_overloaded", "slow_apply", "tick_missed")...)
	longest := ""
	if st := l.Class("slow_fdatasync"); st != nil && st.Took != nil {
		longest = ", up to " + units.Seconds(st.Took.Max)
	}
	title := fmt.Sprintf("The logs point to the disk: %s too slow (over 1s since etcd 3.1%s; etcd needs a p99 under 10ms)", nOf(n, "WAL fdatasync was", "WAL fdatasyncs were"), longest)
	if hb := logCount(l, "heartbeat_late"); hb > 0 {
		title += fmt.Sprintf(", and the leader sent %s late", nOf(hb, "heartbeat", "heartbeats"))
	}
	return []result.Finding{{
		ID:             "logs_disk",
		Severity:       result.Critical,
		Title:          title,
		Evidence:       ev,
		Recommendation: logsDiskAdvice,
	}}
}

func logsRaftBlocked(r *result.Result) []result.Finding {
	l := r.Logs
	if l == nil || logCount(l, "slow_fdatasync") > 0 {
		return nil // the disk finding already explains these
	}
	n := logCount(l, "heartbeat_late", "tick_missed")
	if n == 0 {
		return nil
	}
	ev := tookEvidence(l, "heartbeat_late", 0)
	ev = append(ev, countEvidence(l, "heartbeat_late", "server_overloaded", "tick_missed", "slow_apply")...)
	perStall := 1.0
	if logCount(l, "tick_missed") == 0 {
		perStall = float64(len(l.Members) - 1) // one late heartbeat to each follower
	}
	sev, once := stallSeverity(float64(n), perStall)
	return []result.Finding{{
		ID:       "logs_raft_loop_blocked",
		Severity: sev,
		Title: fmt.Sprintf("etcd's raft loop was blocked %s (late heartbeats, missed ticks) without slow-fdatasync warnings: "+
			"a disk slower than 10ms but faster than 1s per fdatasync, or CPU starvation%s", nTimes(n), once),
		Evidence: ev,
		Recommendation: "etcd FAQ: \"usually this issue is caused by a slow disk\"; it can also be CPU starvation. " + logsDiskAdvice +
			" Then check that etcd has dedicated CPU (no throttling by a container limit, no noisy neighbours) and raise its CPU priority.",
	}}
}

func logsNetwork(r *result.Result) []result.Finding {
	l := r.Logs
	if l == nil {
		return nil
	}
	n := logCount(l, "peer_unhealthy", "message_dropped", "snapshot_failed", "read_index_slow")
	if n == 0 {
		return nil
	}
	ev := countEvidence(l, "peer_unhealthy", "message_dropped", "snapshot_failed", "snapshot_slow", "read_index_slow")
	if st := l.Class("peer_unhealthy"); st != nil && len(st.Members) > 0 {
		ev = append(ev, result.Evidence{What: "members that logged peer failures: " + memberList(st.Members), Source: logsSource})
	}
	return []result.Finding{{
		ID:       "logs_network",
		Severity: result.Warning,
		Title: fmt.Sprintf("The logs point to the network between members: %s (peer connection failures, dropped raft messages, slow ReadIndex round trips)",
			nOf(n, "warning", "warnings")),
		Evidence: ev,
		Recommendation: "Check the peer links (port 2380) between the members named: packet loss, round-trip time, firewalls, TLS errors, members that were down. " +
			"Peer failures while a member restarts are expected; outside restarts they cost heartbeats and elections. " +
			"For links with a high round-trip time, raise --heartbeat-interval to about the RTT and --election-timeout to 10x it (etcd tuning guide).",
	}}
}

// nOf says "1 heartbeat" or "3 heartbeats".
func nOf(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func nTimes(n int64) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

func memberList(m map[string]int64) string {
	var parts []string
	for name, n := range m {
		parts = append(parts, fmt.Sprintf("%s (%d)", name, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func logsSlowRequests(r *result.Result) []result.Finding {
	l := r.Logs
	if l == nil {
		return nil
	}
	slow := logCount(l, "slow_apply", "slow_read_only_range", "slow_read_only_txn", "slow_request")
	if slow == 0 || logCount(l, "slow_fdatasync", "heartbeat_late", "tick_missed") > 0 {
		return nil // the disk or raft-loop findings explain slow requests then
	}
	// etcd logs a request over its own --warning-apply-duration (100ms by
	// default): the logs quote etcd's setting, which --limit does not move.
	apply, _ := limits.Lookup(limits.Table, limits.ApplyDuration)
	applyLimit := apply.Limit
	ev := tookEvidence(l, "slow_read_only_range", applyLimit)
	ev = append(ev, tookEvidence(l, "slow_apply", applyLimit)...)
	ev = append(ev, countEvidence(l, "slow_apply", "slow_read_only_range", "slow_read_only_txn", "slow_request", "large_range_warning")...)
	var large []string
	largeRangeKeys := LimitOf(r, limits.LargeRangeKeys)
	for _, p := range l.TopPrefixes {
		if float64(p.MaxCount) >= largeRangeKeys {
			large = append(large, fmt.Sprintf("%s (up to %d keys)", p.Prefix, p.MaxCount))
		}
	}
	if len(l.TopPrefixes) > 0 {
		p := l.TopPrefixes[0]
		ev = append(ev, result.Evidence{What: fmt.Sprintf("most frequent key prefix in slow requests: %s (%s, longest %s)",
			p.Prefix, nOf(p.Count, "request", "requests"), units.Seconds(p.Max)), Source: logsSource})
	}
	title := fmt.Sprintf("%s longer than etcd's warning threshold without slow-disk or late-heartbeat warnings: CPU, a disk slower than 10ms but faster than 1s per fdatasync (etcd logs only slower ones), large requests, or a member's slow link to its leader",
		nOf(slow, "request took", "requests took"))
	if len(large) > 0 {
		title = fmt.Sprintf("%s longer than etcd's warning threshold, with large ranges over %s: expensive requests, not the disk", nOf(slow, "request took", "requests took"), strings.Join(large, ", "))
	}
	sev, once := stallSeverity(float64(slow), 1)
	return []result.Finding{{
		ID:       "logs_slow_requests",
		Severity: sev,
		Title:    title + once,
		Evidence: ev,
		Recommendation: "Look at the top requests and key prefixes: paginate large lists (limit), avoid reading whole prefixes often, " +
			"and compact and defragment a large database. If requests are small, look at CPU: etcd needs dedicated cores, and a throttled or shared CPU makes every apply slow " +
			"(etcd FAQ, \"apply request took too long\"); a disk whose fdatasync is slower than 10ms but under 1s leaves no line of its own, so measure it (etcdperf metrics, or etcdperf disk on the member's host). A follower's linearizable reads wait for a round trip to the leader: if the slow ones are on one follower, " +
			"look at its network (etcdperf metrics shows the members' round trips).",
	}}
}

func logsClockDrift(r *result.Result) []result.Finding {
	l := r.Logs
	if l == nil || logCount(l, "clock_drift") == 0 {
		return nil
	}
	ev := tookEvidence(l, "clock_drift", 1)
	ev = append(ev, countEvidence(l, "clock_drift")...)
	return []result.Finding{{
		ID:             "logs_clock_drift",
		Severity:       result.Warning,
		Title:          "Members' clocks differ by more than 1s",
		Evidence:       ev,
		Recommendation: "Run NTP (chrony, systemd-timesyncd) on every member: leases and TTLs and the logs' timestamps rely on clocks that agree.",
	}}
}

func logsMaintenanceFailed(r *result.Result) []result.Finding {
	l := r.Logs
	if l == nil || logCount(l, "compaction_failed", "defrag_failed", "snapshot_failed") == 0 {
		return nil
	}
	return []result.Finding{{
		ID:       "logs_maintenance_failed",
		Severity: result.Warning,
		Title:    "Compactions, defragmentations or snapshot transfers failed",
		Evidence: countEvidence(l, "compaction_failed", "defrag_failed", "snapshot_failed"),
		Recommendation: "Failed compactions let the database grow toward its quota; failed snapshot transfers leave a follower behind until one succeeds. " +
			"Look at the error in each line (etcdperf logs -o events.csv) and retry the maintenance when the cluster is healthy.",
	}}
}

// unparsedTitle says how many lines were skipped: "1 of 2 lines was not
// an etcd log line and was skipped".
func unparsedTitle(unparsed, lines int64) string {
	of := fmt.Sprintf("%d of %d lines", unparsed, lines)
	if lines == 1 {
		of = "The only line"
	}
	if unparsed == 1 {
		return of + " was not an etcd log line and was skipped"
	}
	return of + " were not etcd log lines and were skipped"
}

func logsUnparsed(r *result.Result) []result.Finding {
	l := r.Logs
	if l == nil || l.Unparsed == 0 {
		return nil
	}
	return []result.Finding{{
		ID:       "logs_unparsed",
		Severity: result.Info,
		Title:    unparsedTitle(l.Unparsed, l.Lines),
		Evidence: []result.Evidence{{What: "lines not read as etcd log lines", Observed: float64(l.Unparsed), Unit: "count", Source: logsSource}},
		Recommendation: "Other programs' output, stack traces and cut lines are expected; if most lines are skipped, check that the files are etcd's logs " +
			"(capnslog, zap JSON or console; raw, or from kubectl logs --timestamps, journalctl, container log files).",
	}}
}
