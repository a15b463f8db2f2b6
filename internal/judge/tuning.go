package judge

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// etcd's timer flags, their defaults (milliseconds) and the bound etcd
// puts on the election timeout.
const (
	FlagHeartbeat = "heartbeat-interval"
	FlagElection  = "election-timeout"
	// DefaultHeartbeatMs and DefaultElectionMs are etcd's defaults.
	DefaultHeartbeatMs = 100
	DefaultElectionMs  = 1000
	maxElectionMs      = 50000
	electionPerBeat    = 10 // etcd's defaults, and the tuning guide's 10x the round trip
	minElectPerBeat    = 5  // etcd refuses an election timeout under 5x the heartbeat
)

const (
	tuningGuide = "etcd tuning guide, https://etcd.io/docs/v3.6/tuning/#time-parameters"
	electSource = tuningGuide + "; etcd refuses an election timeout under 5x the heartbeat interval (server/embed/config.go)"
)

// timerFigures are what the timers are computed from: the members' round
// trips to each other (pairs, each a mean of etcd's smoothed round trips),
// their p99 over the run where it was observed, what says the heartbeats
// were late, and the members whose CPU or disk the findings named.
type timerFigures struct {
	pairs  []result.PeerRTT
	p99    float64
	late   []string
	blamed map[string][]result.Cause
}

// metricsTimers gathers a metrics Result's timer figures; its findings are
// judged.
func metricsTimers(r *result.Result) timerFigures {
	f := timerFigures{pairs: r.Metrics.PeerRTTs, blamed: blamedMembers(r.Findings)}
	var failures, changes, slow float64
	for _, m := range r.Metrics.Members {
		o := m.Overall
		if o == nil {
			continue
		}
		if o.PeerRTT != nil && o.PeerRTT.Count > 0 {
			f.p99 = max(f.p99, o.PeerRTT.P99)
		}
		failures += o.HeartbeatFailures
		changes += o.LeaderChanges
		slow += o.SlowApplies
	}
	f.late = lateWords(failures, changes, slow)
	return f
}

// blamedMembers are the members whose CPU or storage the findings named.
func blamedMembers(fs []result.Finding) map[string][]result.Cause {
	out := map[string][]result.Cause{}
	for _, f := range fs {
		switch f.Cause {
		case result.CauseDisk, result.CauseCPU, result.CauseDiskOrCPU, result.CauseIOPSCap, result.CauseDiskOrIOPSCap:
			for _, m := range f.Members {
				if !slices.Contains(out[m], f.Cause) {
					out[m] = append(out[m], f.Cause)
				}
			}
		}
	}
	return out
}

// tuneTimers suggests --heartbeat-interval and --election-timeout from
// the round trips between members, per etcd's tuning guide: the heartbeat
// about the slowest pair's mean round trip (0.5-1.5x), never under etcd's
// 100ms default; the election timeout 10x the heartbeat, which is at
// least 10x the round trip and 5x the heartbeat, never under the 1s
// default and at most etcd's 50s. A pair with a member whose CPU or disk
// the findings named says that member's lateness, not the link's: it is
// left out, and when the heartbeats were late the note says that larger
// timers would only slow failover and hide the cause.
func tuneTimers(t *result.Tuning, f timerFigures) {
	var links []result.PeerRTT
	var through []string
	for _, p := range f.pairs {
		if p.Count <= 0 {
			continue
		}
		if len(f.blamed[p.From]) > 0 || len(f.blamed[p.To]) > 0 {
			through = append(through, p.From+" → "+p.To)
			continue
		}
		links = append(links, p)
	}
	if len(f.blamed) > 0 {
		t.Notes = append(t.Notes, blamedNote(f))
	}
	if len(links) == 0 {
		why := "no round trip between members was recorded (etcd records one per peer about every 30s; a single member has none)"
		if len(through) > 0 {
			why = "every round trip recorded involves a member whose CPU or storage the findings named (" + strings.Join(through, ", ") + ")"
		}
		t.Notes = append(t.Notes, "The timers are not computed: "+why+".")
		return
	}
	slowest := slices.MaxFunc(links, func(a, b result.PeerRTT) int { return cmp.Compare(a.Mean, b.Mean) })
	rttMs := slowest.Mean * 1000
	figure := fmt.Sprintf("the slowest pair's mean round trip is %s (%s → %s, %.0f recorded, %s)", units.Seconds(slowest.Mean), slowest.From, slowest.To, slowest.Count, slowest.Scope)
	if f.p99 > 0 {
		figure += fmt.Sprintf("; the members' round-trip p99 over the run %s", units.Seconds(f.p99))
	}
	beat := max(DefaultHeartbeatMs, niceMs(rttMs))
	hb := result.TunedFlag{Name: FlagHeartbeat, Unit: "ms", Suggested: beat, Source: tuningGuide,
		Why: figure + ": the heartbeat interval should be about the round trip (0.5-1.5x), never under etcd's 100ms default"}
	current(t, &hb, func(cur float64) bool { return cur >= 0.5*rttMs })
	inForce := hb.Suggested
	if hb.Action == result.TuneKeep {
		inForce = hb.Current
	}
	elect := math.Min(maxElectionMs, max(DefaultElectionMs, electionPerBeat*inForce, electionPerBeat*niceMs(rttMs)))
	el := result.TunedFlag{Name: FlagElection, Unit: "ms", Suggested: elect, Source: electSource,
		Why: fmt.Sprintf("10x the heartbeat interval of %s: at least 10x the round trip of %s, for its variance, and 5x the heartbeat, never under etcd's 1s default",
			units.Seconds(inForce/1000), units.Seconds(slowest.Mean))}
	current(t, &el, func(cur float64) bool { return cur >= electionPerBeat*rttMs && cur >= minElectPerBeat*inForce })
	if electionPerBeat*rttMs > maxElectionMs {
		t.Notes = append(t.Notes, fmt.Sprintf("No election timeout fits: 10x the round trip of %s passes etcd's 50s bound; members this far apart should not share a cluster.", units.Seconds(slowest.Mean)))
	}
	t.Flags = append(t.Flags, hb, el)
}

// current fills a flag's value in force and its action: keep when ok
// says the value in force suits the figures, else change; at least when
// it is unknown.
func current(t *result.Tuning, f *result.TunedFlag, ok func(cur float64) bool) {
	v, known := t.Value(f.Name)
	switch {
	case !known:
		f.Action = result.TuneAtLeast
	case ok(v.Value):
		f.Current, f.CurrentFrom, f.Action = v.Value, v.From, result.TuneKeep
		f.Suggested = v.Value
	default:
		f.Current, f.CurrentFrom, f.Action = v.Value, v.From, result.TuneChange
	}
}

// blamedNote says which members' CPU or storage the findings named, and,
// when the heartbeats were late, that larger timers would hide it.
func blamedNote(f timerFigures) string {
	var names []string
	for m := range f.blamed {
		names = append(names, m)
	}
	sort.Strings(names)
	var parts []string
	for _, m := range names {
		var cs []string
		for _, c := range f.blamed[m] {
			cs = append(cs, c.Info().Noun)
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", m, strings.Join(cs, ", ")))
	}
	s := "The findings named " + strings.Join(parts, ", ") + ": their round trips are left out of the timers, as a member late for its own reasons answers its peers late"
	if len(f.late) > 0 {
		s += fmt.Sprintf(". The cluster's heartbeats were late (%s): larger timers would only slow failover and hide the cause; fix it first", strings.Join(f.late, ", "))
	}
	return s + "."
}

// niceMs rounds a time in milliseconds up to a setting: a multiple of
// 50ms up to 1s, of 100ms above.
func niceMs(ms float64) float64 {
	step := 50.0
	if ms > 1000 {
		step = 100
	}
	return math.Ceil(ms/step) * step
}

// metricsTuning sets a metrics Result's tuning: the flags the figures
// call for, from the values in force it knows.
func metricsTuning(r *result.Result) {
	if r.Metrics == nil {
		return
	}
	if r.Tuning == nil {
		r.Tuning = &result.Tuning{}
	}
	r.Tuning.Flags, r.Tuning.Notes = nil, nil
	tuneTimers(r.Tuning, metricsTimers(r))
	quotaTuning(r)
	compactionTuning(r)
	snapshotTuning(r)
	r.Tuning.Defrag = metricsDefrag(r)
}

// defragCandidate is one member's database as a command read it, for
// the defragmentation plan.
type defragCandidate struct {
	name, id, url string
	leader        bool
	size, inUse   float64
	// stall is its predicted defragmentation's stall (seconds, 0:
	// unknown) and stallFrom what predicts it.
	stall     float64
	stallFrom string
}

// metricsDefrag plans the members' defragmentation from their databases'
// sizes at the end of a metrics run; each member's stall from its own
// defragmentations during the run.
func metricsDefrag(r *result.Result) *result.DefragPlan {
	urls := targetURLs(r)
	// The leader at the end of the run, from its own gauge; else the one
	// that led when the run started.
	gauge := slices.ContainsFunc(r.Metrics.Members, func(m result.MetricsMember) bool { return m.Overall != nil && m.Overall.IsLeader == 1 })
	var cs []defragCandidate
	for _, m := range r.Metrics.Members {
		o := m.Overall
		if o == nil || o.DBSize <= 0 {
			continue
		}
		c := defragCandidate{name: m.Name, id: m.ID, url: urls[m.Name], leader: o.IsLeader == 1 || !gauge && m.Leader, size: o.DBSize, inUse: o.DBSizeInUse}
		if rate, from := pastDefragRate(r.Metrics.Defrags, m.Name, o.DBSizeInUse); rate > 0 {
			c.stall, c.stallFrom = o.DBSizeInUse/rate, from
		}
		cs = append(cs, c)
	}
	p := defragPlan(r, cs, "the leader")
	if p != nil {
		for _, d := range r.Metrics.Defrags {
			if d.Longest > p.Took {
				p.Took, p.TookOn = d.Longest, d.Member
			}
		}
	}
	return p
}

// nodeDefrag plans the defragmentation of doctor --node's cluster from
// its members' gauges at the end of the window; the node's member's
// stall as the Result predicts it.
func nodeDefrag(r *result.Result) *result.DefragPlan {
	if r.Server == nil {
		return nil
	}
	urls, leaders := targetURLs(r), map[string]bool{}
	if r.Target != nil {
		for _, m := range r.Target.Members {
			leaders[m.Name] = m.Leader
		}
	}
	var cs []defragCandidate
	for _, d := range r.Server.Databases {
		c := defragCandidate{name: d.Name, url: urls[d.Name], leader: leaders[d.Name], size: d.Size, inUse: d.InUse}
		if e := r.ExpectedDefrag; e != nil && e.Member == d.Name && e.Seconds > 0 {
			c.stall, c.stallFrom = e.Seconds, e.RateFrom
		}
		cs = append(cs, c)
	}
	return defragPlan(r, cs, "the leader")
}

// promDefrag plans the defragmentation from the members' databases at
// the end of a history; which member leads is not read from it.
func promDefrag(r *result.Result) *result.DefragPlan {
	var cs []defragCandidate
	for _, d := range r.Prom.Databases {
		c := defragCandidate{name: d.Instance, size: d.Size, inUse: d.InUse}
		if rate, from := pastDefragRate(r.Prom.Defrags, d.Instance, d.InUse); rate > 0 {
			c.stall, c.stallFrom = d.InUse/rate, from
		}
		cs = append(cs, c)
	}
	return defragPlan(r, cs, "the leader (etcdctl endpoint status says which)")
}

// targetURLs are the members' client URLs by name.
func targetURLs(r *result.Result) map[string]string {
	urls := map[string]string{}
	if r.Target != nil {
		for _, m := range r.Target.Members {
			urls[m.Name] = m.ClientURL
		}
	}
	return urls
}

// defragPlan plans the members' defragmentation: a file of at least
// db_fragmented_size with under db_in_use of it in use is due (as
// db_fragmented says it); the followers due first, one at a time, then
// the leader after moving its leadership to a follower (etcd's
// maintenance guide: a defragmentation blocks its member while it runs);
// nil when no member's database size is known.
func defragPlan(r *result.Result, cs []defragCandidate, leaderWords string) *result.DefragPlan {
	if len(cs) == 0 {
		return nil
	}
	size, inUse := diagnose.LimitOf(r, limits.DBFragmentedSize), diagnose.LimitOf(r, limits.DBInUse)
	p := &result.DefragPlan{Rule: fmt.Sprintf("at least %s with under %.0f%% of it in use (%s, %s)",
		units.Bytes(size), inUse*100, limits.DBFragmentedSize, limits.DBInUse)}
	follower := ""
	for _, c := range cs {
		if !c.leader && c.id != "" && follower == "" {
			follower = c.id
		}
	}
	var due []defragCandidate
	leaderKnown := false
	for _, c := range cs {
		leaderKnown = leaderKnown || c.leader
		if c.size >= size && c.inUse > 0 && c.inUse < inUse*c.size {
			due = append(due, c)
		}
	}
	// Followers first (by name), the leader last.
	slices.SortStableFunc(due, func(a, b defragCandidate) int {
		if a.leader != b.leader {
			if a.leader {
				return 1
			}
			return -1
		}
		return strings.Compare(a.name, b.name)
	})
	for _, c := range due {
		ep := c.url
		if ep == "" {
			ep = "<" + c.name + "'s client URL>"
		}
		m := result.DefragMember{Name: c.name, Leader: c.leader, Size: c.size, InUse: c.inUse, Stall: c.stall, StallFrom: c.stallFrom}
		if c.leader {
			target := follower
			if target == "" {
				target = "<a follower's ID: etcdctl member list>"
			}
			m.Commands = append(m.Commands, fmt.Sprintf("etcdctl --endpoints=%s move-leader %s", ep, target))
		}
		m.Commands = append(m.Commands, fmt.Sprintf("etcdctl --endpoints=%s defrag", ep))
		p.Members = append(p.Members, m)
	}
	p.Due = len(p.Members) > 0
	if p.Due && !leaderKnown {
		p.Rule += "; which member leads is not known here: take " + leaderWords + " last, after moving its leadership"
	}
	return p
}

const faqHeartbeat = "etcd FAQ, https://etcd.io/docs/v3.6/faq/#what-does-the-etcd-warning-failed-to-send-out-heartbeat-on-time-mean"

// logsTuning sets a logs Result's tuning. The timers in force are the
// members' own (their startup lines, else the heartbeat interval a late
// heartbeat's line names). The logs carry no round trip between members,
// so the timers are not computed from one; but late heartbeats logged by
// a member that also logged fdatasyncs over 1s are its disk's (etcd's
// FAQ): the timers are to be kept, and the disk named.
func logsTuning(r *result.Result) {
	l := r.Logs
	if l == nil {
		return
	}
	r.Tuning = &result.Tuning{}
	logsTimers(r.Tuning, l)
	compactionTuning(r)
}

// logsTimers keeps the timers in force for the disk when the logs say
// so, else notes what the logs cannot tell.
func logsTimers(t *result.Tuning, l *result.Logs) {
	beat, elect, notes := logTimers(l.Members)
	t.Notes = append(t.Notes, notes...)
	if beat.Value > 0 {
		t.Known = append(t.Known, beat)
	}
	if elect.Value > 0 {
		t.Known = append(t.Known, elect)
	}
	late := l.Class("heartbeat_late")
	if late == nil || late.Count == 0 {
		t.Notes = append(t.Notes, "etcd's logs carry no round trip between members, and no late heartbeat: etcdperf metrics --endpoints reads the round trips and computes the timers.")
		return
	}
	if !keepForTheDisk(t, l) {
		t.Notes = append(t.Notes, fmt.Sprintf("%s (\"failed to send out heartbeat on time\") and no fdatasync over 1s from the same member: "+
			"a disk slower than etcd's 10ms but under 1s per fdatasync, a CPU or the network; the logs cannot tell which, nor the round trip: "+
			"etcdperf metrics --endpoints measures the WAL fsyncs and round trips and computes the timers.", units.Count(late.Count, "late heartbeat")))
	}
}

// keepForTheDisk keeps the timers in force (t.Known) when a member logged
// both late heartbeats and fdatasyncs over 1s: its raft loop waited for
// its disk (etcd's FAQ), and larger timers would hide it. It reports
// whether the logs showed that.
func keepForTheDisk(t *result.Tuning, l *result.Logs) bool {
	late, slow := l.Class("heartbeat_late"), l.Class("slow_fdatasync")
	if late == nil || slow == nil {
		return false
	}
	var both []string
	for m := range late.Members {
		if slow.Members[m] > 0 {
			both = append(both, m)
		}
	}
	if len(both) == 0 {
		return false
	}
	sort.Strings(both)
	var lines []string
	for _, m := range both {
		lines = append(lines, fmt.Sprintf("%s logged %s and %s over 1s", m, units.Count(late.Members[m], "late heartbeat"), units.Count(slow.Members[m], "fdatasync")))
	}
	why := strings.Join(lines, "; ") + ": the leader's raft loop waited for its disk, not for the network; larger timers would only slow failover and hide the disk: fix the disk (the disk findings above)"
	for _, fv := range t.Known {
		if fv.Name != FlagHeartbeat && fv.Name != FlagElection || fv.Value <= 0 {
			continue
		}
		t.Flags = append(t.Flags, result.TunedFlag{Name: fv.Name, Unit: "ms", Current: fv.Value, CurrentFrom: fv.From, Suggested: fv.Value,
			Action: result.TuneKeep, Why: why, Source: faqHeartbeat})
	}
	if len(t.Flags) == 0 {
		t.Notes = append(t.Notes, "Keep the timers as they are, whatever they are: "+why+".")
	}
	return true
}

// nodeTuning sets the tuning of doctor --node's member, whose timers in
// force the node's configuration gave (t.Known): kept for its disk when
// its log lines during the run say so, else computed from the round trips
// its peers' probes measured, as metrics does.
func nodeTuning(r *result.Result) {
	t := r.Tuning
	if t == nil {
		return
	}
	t.Flags, t.Notes = nil, nil
	if r.Logs == nil || !keepForTheDisk(t, r.Logs) {
		tuneTimers(t, nodeTimers(r))
	}
	quotaTuning(r)
	compactionTuning(r)
	snapshotTuning(r)
	t.Defrag = nodeDefrag(r)
}

// nodeTimers gathers doctor --node's timer figures: the round trips its
// peers' probes measured, and what says the heartbeats were late.
func nodeTimers(r *result.Result) timerFigures {
	f := timerFigures{blamed: blamedMembers(r.Findings)}
	if r.Server != nil {
		f.pairs = r.Server.PeerRTTs
	}
	var failures, changes, slow float64
	for _, m := range diagnose.Members(r) {
		failures += m.HeartbeatFailures
		slow += m.SlowApplies
	}
	for _, c := range r.Checks {
		if c.Name == limits.LeaderChanges {
			changes += c.Observed
		}
	}
	f.late = lateWords(failures, changes, slow)
	return f
}

// logTimers are the members' timers as their logs say them, when the
// members that say them agree; otherwise a note.
func logTimers(ms []result.LogMember) (beat, elect result.FlagValue, notes []string) {
	beat, elect = result.FlagValue{Name: FlagHeartbeat}, result.FlagValue{Name: FlagElection}
	pick := func(fv *result.FlagValue, get func(result.LogMember) float64, what string) {
		var who, seen []string
		vals := map[float64]bool{}
		for _, m := range ms {
			if v := get(m); v > 0 {
				vals[v] = true
				who = append(who, m.Name)
				seen = append(seen, fmt.Sprintf("%s %s", m.Name, units.Seconds(v)))
			}
		}
		switch len(vals) {
		case 0:
		case 1:
			for v := range vals {
				fv.Value = math.Round(v * 1000)
			}
			fv.From = "etcd's log of " + strings.Join(who, ", ")
		default:
			notes = append(notes, fmt.Sprintf("The members' logs name different %s: %s; etcd expects them alike on every member.", what, strings.Join(seen, ", ")))
		}
	}
	pick(&beat, func(m result.LogMember) float64 { return m.HeartbeatInterval }, "heartbeat intervals")
	pick(&elect, func(m result.LogMember) float64 { return m.ElectionTimeout }, "election timeouts")
	return beat, elect, notes
}

// promTuning sets a prom check Result's timers from the members' round
// trips over the period (the days a Prometheus holds), as metrics does.
func promTuning(r *result.Result) {
	p := r.Prom
	if p == nil {
		return
	}
	if r.Tuning == nil {
		r.Tuning = &result.Tuning{}
	}
	r.Tuning.Flags, r.Tuning.Notes = nil, nil
	f := timerFigures{pairs: p.PeerRTTs, blamed: blamedMembers(r.Findings)}
	var failures, changes, slow float64
	for _, m := range p.Members {
		failures += m.Observed["heartbeat_failures"]
		changes += m.Observed[limits.LeaderChanges]
		slow += m.Observed["slow_applies"]
	}
	f.late = lateWords(failures, changes, slow)
	tuneTimers(r.Tuning, f)
	promQuota(r)
	compactionTuning(r)
	r.Tuning.Defrag = promDefrag(r)
}

// lateWords says what shows the heartbeats were late: heartbeats the
// leader failed to send, leader changes, slow applies.
func lateWords(failures, changes, slow float64) []string {
	var out []string
	for _, c := range []struct {
		n    float64
		what string
	}{{failures, "heartbeats the leader failed to send"}, {changes, "leader changes"}, {slow, "slow applies"}} {
		if c.n > 0 {
			out = append(out, fmt.Sprintf("%.0f %s", c.n, c.what))
		}
	}
	return out
}
