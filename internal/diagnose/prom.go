package diagnose

import (
	"fmt"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// The rules of `etcdperf prom check`: they read the breaches and the
// per-member totals that the history in Prometheus gave (r.Prom).
func init() {
	Register(
		Rule{ID: "history_breaches", Apply: historyBreaches},
		Rule{ID: "history_slow_applies", Apply: historySlowApplies},
		Rule{ID: "history_heartbeat_failures", Apply: historyHeartbeatFailures},
	)
}

// maxWindows is how many breach windows a finding lists per member.
const maxWindows = 5

type historyAdvice struct {
	what   string
	advice string
}

var historyAdvices = map[string]historyAdvice{
	limits.WALFsyncP99: {"WAL fsync p99",
		"These are the windows in which etcd's WAL fsync was slow; the finding on the member says whether its disk or its CPU was the cause " +
			"(etcd's histogram counts both). Look at what else ran on that host then (backups, compactions, neighbours' I/O or builds)."},
	limits.BackendCommitP99: {"backend commit p99",
		"These are the windows in which bbolt's commits were slow: a slow disk or a CPU-starved member (the finding on the member says which), " +
			"or a large, fragmented database (defragment it, compact history)."},
	limits.LeaderChanges: {"leader changes",
		"Elections happen when followers miss heartbeats: check the WAL fsync latency of that time, CPU starvation of etcd, and the network " +
			"between members; raise --heartbeat-interval and --election-timeout only when the round trip between members needs it."},
	limits.ProposalsFailed: {"failed proposals",
		"Proposals fail during elections and when the cluster loses quorum: see the leader changes of the same windows."},
	"has_leader": {"member without a leader",
		"A member without a leader cannot serve writes or linearizable reads: check that a quorum of members was up and could reach each other then."},
}

// historyBreaches gives one finding per criterion that was breached at
// some evaluation point, listing the windows per member. It is critical
// when the criterion's check failed over the whole period or a member lost
// its leader; otherwise the breaches were transient and it warns.
func historyBreaches(r *result.Result) []result.Finding {
	if r.Prom == nil {
		return nil
	}
	return breachFindings(r, r.Prom.Breaches, "history_", seconds(r.Prom.Step), seconds(r.Prom.Window))
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// breachFindings gives one finding per criterion in breaches, named
// prefix+criterion, its severity from r's check of that criterion. step is
// the time between two points, window the span each point judges.
func breachFindings(r *result.Result, breaches []result.PromBreach, prefix string, step, window time.Duration) []result.Finding {
	var order []string
	by := map[string][]result.PromBreach{}
	for _, b := range breaches {
		if _, ok := by[b.Check]; !ok {
			order = append(order, b.Check)
		}
		by[b.Check] = append(by[b.Check], b)
	}
	var out []result.Finding
	for _, id := range order {
		bs := by[id]
		adv, ok := historyAdvices[id]
		if !ok {
			adv = historyAdvice{what: id}
		}
		failed := id == "has_leader"
		if c, ok := FindCheck(r, id); ok && c.Status == result.StatusFail {
			failed = true
		}
		var members []string
		f := result.Finding{ID: prefix + id, Severity: result.Warning, Recommendation: adv.advice}
		// Windows over a limit in a period whose p99 kept it are told
		// (when, how often, how far), as moments, not as a verdict: a p99
		// over a short window swings with everything else on the host, and
		// etcd's own alerting rules ask for a p99 over its limit for 10
		// minutes (etcd-mixin etcdHighFsyncDurations). A member without a
		// leader is always worth a warning.
		switch {
		case failed:
			f.Severity = result.Critical
		case !mustWarn[id]:
			f.Severity = result.Info
		}
		for _, b := range bs {
			members = append(members, b.Instance)
			f.Evidence = append(f.Evidence, result.Evidence{
				What: fmt.Sprintf("%s on %s: %d of %d evaluation points (%.1f%% of the time) %s, in %d window(s); the worst",
					adv.what, b.Instance, b.Points, b.Total, b.Fraction*100, breachWord(b), len(b.Windows)),
				Observed: b.Worst, Limit: b.Limit, Unit: b.Unit,
			})
			for i, w := range b.Windows {
				if i == maxWindows {
					f.Evidence = append(f.Evidence, result.Evidence{What: fmt.Sprintf("... and %d more window(s) on %s", len(b.Windows)-maxWindows, b.Instance)})
					break
				}
				f.Evidence = append(f.Evidence, result.Evidence{What: windowText(w, b.Instance, b.Unit, step, window)})
			}
		}
		switch {
		case id == "has_leader":
			f.Title = fmt.Sprintf("%s had no leader at times in this period", strings.Join(members, ", "))
		case failed:
			f.Title = fmt.Sprintf("The limit on the %s was passed on %s, at times and over the whole period", adv.what, strings.Join(members, ", "))
		default:
			f.Title = fmt.Sprintf("The limit on the %s was passed (or nearly) at times on %s, though not over the whole period", adv.what, strings.Join(members, ", "))
		}
		out = append(out, f)
	}
	return out
}

// mustWarn are the criteria whose passing at times is a warning even when
// the period as a whole kept the limit: counts of events that hurt clients
// when they happen.
var mustWarn = map[string]bool{limits.LeaderChanges: true, limits.ProposalsFailed: true}

func breachWord(b result.PromBreach) string {
	if b.Failed == b.Points {
		return "over the limit"
	}
	return fmt.Sprintf("over the warning level (%d over the limit)", b.Failed)
}

// windowText tells a window in UTC; each point judged the rate window
// before it, so the trouble may have started up to a window earlier.
func windowText(w result.PromWindow, instance, unit string, step, window time.Duration) string {
	from, to := w.From.UTC(), w.To.UTC()
	span := to.Sub(from) + step
	// Steps under a second (etcdperf metrics --interval 500ms) need the
	// milliseconds.
	fromFmt, toFmt, precision := time.RFC3339, "15:04:05Z", time.Second
	if step < time.Second {
		fromFmt, toFmt, precision = "2006-01-02T15:04:05.000Z07:00", "15:04:05.000Z", time.Millisecond
	}
	if from.YearDay() != to.YearDay() || from.Year() != to.Year() {
		toFmt = fromFmt
	}
	s := fmt.Sprintf("%s: %s to %s (%s, %d points), worst %s (%s)", instance, from.Format(fromFmt), to.Format(toFmt), span.Round(precision), w.Points, valueIn(w.Worst, unit), w.Status)
	if window > 0 {
		s += fmt.Sprintf("; each point covers the %s before it", window)
	}
	return s
}

func valueIn(v float64, unit string) string {
	if unit == string(limits.Seconds) {
		return units.Seconds(v)
	}
	return fmt.Sprintf("%g", v)
}

// memberTotals sums a count of the members, and says whose it is.
func memberTotals(ms []Member, count func(Member) float64) (total float64, who []string) {
	for _, m := range ms {
		if v := count(m); v > 0 {
			total += v
			who = append(who, fmt.Sprintf("%s: %g", m.Name, v))
		}
	}
	return total, who
}

// historySlowApplies warns about applies that took longer than etcd's
// --warning-apply-duration: each is an "apply request took too long" line
// in etcd's log.
func historySlowApplies(r *result.Result) []result.Finding {
	if r.Prom == nil {
		return nil
	}
	return slowApplies(etcdMembers(r), "history_slow_applies")
}

func slowApplies(ms []Member, id string) []result.Finding {
	total, who := memberTotals(ms, func(m Member) float64 { return m.SlowApplies })
	if total == 0 {
		return nil
	}
	c, _ := limits.Lookup(limits.Table, limits.ApplyDuration)
	sev, once := stallSeverity(total, 1)
	return []result.Finding{{
		ID:       id,
		Severity: sev,
		Title:    fmt.Sprintf("%g applies took longer than %s in this period (etcd logged \"apply request took too long\")%s", total, units.Seconds(c.Limit), once),
		Evidence: []result.Evidence{{What: "increase of etcd_server_slow_apply_total over the period (" + strings.Join(who, ", ") + ")", Observed: total, Unit: "count", Source: c.Source}},
		Recommendation: "Slow applies come from a slow backend (see backend commit), expensive requests (large ranges, big transactions) " +
			"or CPU starvation: look at the requests of that time and at etcd's CPU.",
	}}
}

// historyHeartbeatFailures warns about heartbeats the leader could not
// send on time ("failed to send out heartbeat on time").
func historyHeartbeatFailures(r *result.Result) []result.Finding {
	if r.Prom == nil {
		return nil
	}
	return heartbeatFailures(etcdMembers(r), "history_heartbeat_failures")
}

// stallSeverity is the severity of n events etcd counted or logged (slow
// applies, late heartbeats, slow requests) in a period, of which one stall
// makes up to perStall (a leader stalled once sends one late heartbeat to
// each follower, and counts each): a single stall, as a busy host or a
// pause of the process makes, is told as information; the disk, the CPU
// or expensive requests make them recur.
func stallSeverity(n, perStall float64) (result.Severity, string) {
	if n > 0 && !recurring(n, perStall) {
		return result.Info, ": a single stall, not a pattern (a busy host or a pause of the process makes one); it matters when it recurs"
	}
	return result.Warning, ""
}

// recurring says whether n events make more than one stall.
func recurring(n, perStall float64) bool { return n > max(1, perStall) }

func heartbeatFailures(ms []Member, id string) []result.Finding {
	total, who := memberTotals(ms, func(m Member) float64 { return m.HeartbeatFailures })
	if total == 0 {
		return nil
	}
	sev, once := stallSeverity(total, float64(len(ms)-1))
	return []result.Finding{{
		ID:       id,
		Severity: sev,
		Title:    fmt.Sprintf("The leader failed to send %g heartbeats on time in this period (etcd logged \"failed to send out heartbeat on time\")%s", total, once),
		Evidence: []result.Evidence{{What: "increase of etcd_server_heartbeat_send_failures_total over the period (" + strings.Join(who, ", ") + ")", Observed: total, Unit: "count"}},
		Recommendation: "The leader was too slow to send heartbeats: usually a slow disk (WAL fsync) or CPU starvation on the leader, " +
			"sometimes the network; if it persists, followers start elections.",
	}}
}
