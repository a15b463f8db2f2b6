package diagnose

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// The rules that name what makes each member slow: its disk, its CPU, or
// the network to it. They read etcd's own metrics of every member (the
// server section of bench, check and doctor, or the members of metrics),
// the members' round trips to each other, and, for the members that run
// on the host etcdperf ran on, what the kernel says of their processes.
//
// etcd's WAL fsync histogram times the fdatasync call and the wait for a
// CPU after it: a member starved of CPU shows a slow fsync on a fast disk.
// Only the member's own process (its threads' run-queue wait, its cgroup's
// throttling) tells the two apart; without it, the finding says both and
// how to tell.
func init() {
	Register(
		Rule{ID: "member_cause", Apply: memberCauseFindings},
		Rule{ID: "member_volatile", Apply: memberVolatile},
		Rule{ID: "volume_headroom", Apply: volumeHeadroom},
	)
}

// symptom is a member's disk latency over its limit.
type symptom struct {
	check result.Check // the member's own value judged by the run's criterion
}

// memberSymptoms judges a member's WAL fsync and backend commit p99 by the
// limits the run judged the cluster by (none when it judged neither: e.g.
// a memory measurement's burst of writes). Only a p99 over its limit is a
// symptom whose cause is named: a p99 near it is the checks' to warn of,
// and on a shared host a healthy member's tail swings that far.
func memberSymptoms(r *result.Result, v Member) []symptom {
	var out []symptom
	for _, s := range []struct {
		id string
		l  *result.Latency
	}{{limits.WALFsyncP99, v.WALFsync}, {limits.BackendCommitP99, v.BackendCommit}} {
		if s.l == nil || s.l.Count == 0 {
			continue
		}
		c, ok := FindCheck(r, s.id)
		if !ok {
			continue
		}
		c.Observed = s.l.P99
		c.Bound = s.l.Bucketed && s.l.Resolution > 0 && s.l.P99 <= s.l.Resolution
		if c.Observed >= c.Limit {
			c.Status = result.StatusFail
			out = append(out, symptom{check: c})
		}
	}
	return out
}

// cpuStarvation returns the evidence that a member's process waited for a
// CPU, with the same in words; nil when it did not (or was not measured).
// deviceFast says that the device under its WAL answered far faster than
// its fsync p99 (or that the WAL is in memory): then a saturated host
// explains the rest, as the kernel's work for each fsync and the thread
// that resumes after it wait for a CPU; the member's own mean wait hides
// such a tail.
func cpuStarvation(lv Levels, p *result.MemberProcess, deviceFast bool) ([]result.Evidence, []string) {
	if !p.Measured() {
		return nil, nil
	}
	var ev []result.Evidence
	var words []string
	if deviceFast && p.HostCPUBusy >= lv.MemberHostBusy {
		ev = append(ev, result.Evidence{What: fmt.Sprintf("share of the CPUs of host %s busy, where %s runs", p.Host, p.Name),
			Observed: p.HostCPUBusy, Limit: lv.MemberHostBusy, Unit: "ratio", Source: "/proc/stat on " + p.Host})
		words = append(words, fmt.Sprintf("the CPUs of its host %s were %.0f%% busy", p.Host, p.HostCPUBusy*100))
	}
	if throttledByLimit(lv, p) {
		ev = append(ev, result.Evidence{What: fmt.Sprintf("share of %s's CPU periods in which its cgroup ran out of quota (%s CPU; stopped %s per second)",
			p.Name, units.Cores(p.CPULimit), units.Seconds(p.ThrottledTime)), Observed: p.Throttled, Limit: lv.Throttled, Unit: "ratio", Source: p.Cgroup + "/cpu.stat"})
		words = append(words, fmt.Sprintf("its cgroup (limit %s CPU) throttled it in %.0f%% of its CPU periods", units.Cores(p.CPULimit), p.Throttled*100))
	}
	if p.SchedWait >= lv.SchedWait {
		ev = append(ev, result.Evidence{What: fmt.Sprintf("mean wait of %s's threads for a CPU each time they could run", p.Name),
			Observed: p.SchedWait, Limit: lv.SchedWait, Unit: "s", Source: fmt.Sprintf("/proc/%d/task/*/schedstat on %s", p.PID, p.Host)})
		words = append(words, fmt.Sprintf("its threads waited %s for a CPU on average each time they could run", units.Seconds(p.SchedWait)))
	}
	if p.CPULimit > 0 && p.CPU >= lv.CPUAtLimit*p.CPULimit {
		ev = append(ev, result.Evidence{What: fmt.Sprintf("CPU used by %s, of the %s CPU its cgroup allows", p.Name, units.Cores(p.CPULimit)),
			Observed: p.CPU / p.CPULimit, Limit: lv.CPUAtLimit, Unit: "ratio", Source: fmt.Sprintf("/proc/%d/task/*/schedstat, %s", p.PID, p.Cgroup)})
		words = append(words, fmt.Sprintf("it used %s of its %s CPU", units.Cores(p.CPU), units.Cores(p.CPULimit)))
	}
	return ev, words
}

// throttledByLimit says whether a member's own cgroup stopped it for its CPU
// limit often and long enough to make it wait.
func throttledByLimit(lv Levels, p *result.MemberProcess) bool {
	return p.Measured() && p.Throttled >= lv.Throttled && p.ThrottledTime >= lv.ThrottledTime
}

// processEvidence is what the process's figures say when they clear the
// CPU: its threads got a CPU promptly and were not throttled.
func processEvidence(lv Levels, p *result.MemberProcess) ([]result.Evidence, string) {
	ev := []result.Evidence{{What: fmt.Sprintf("mean wait of %s's threads for a CPU each time they could run (pid %d on %s)", p.Name, p.PID, p.Host),
		Observed: p.SchedWait, Limit: lv.SchedWait, Unit: "s", Source: "/proc/PID/task/*/schedstat"}}
	words := fmt.Sprintf("its threads got a CPU within %s on average", units.Seconds(p.SchedWait))
	if p.CPULimit > 0 {
		ev = append(ev, result.Evidence{What: fmt.Sprintf("share of %s's CPU periods throttled (cgroup limit %s CPU)", p.Name, units.Cores(p.CPULimit)),
			Observed: p.Throttled, Limit: lv.Throttled, Unit: "ratio", Source: p.Cgroup + "/cpu.stat"})
		words += fmt.Sprintf(" and its cgroup (limit %s CPU) throttled it in %.0f%% of its periods", units.Cores(p.CPULimit), p.Throttled*100)
	}
	return ev, words
}

// deviceEvidence is what the device under the member's WAL did, and
// whether it accounts for a p99 of p99 (slow) or answered ten times faster
// (fast; so does memory); neither when its time is not known (no block
// device, as FUSE or NFS, or no write in the span).
func deviceEvidence(lv Levels, p *result.MemberProcess, p99 float64) (ev []result.Evidence, words string, slow, fast bool) {
	if !p.Measured() {
		return nil, "", false, false
	}
	if p.Volatile {
		return []result.Evidence{{What: fmt.Sprintf("%s's WAL (%s) is on %s, in memory: fdatasync does no I/O there", p.Name, p.WALDir, p.FSType),
			Source: "/proc/self/mountinfo"}}, fmt.Sprintf("its WAL is on %s, in memory", p.FSType), false, true
	}
	if p.Device == "" {
		return []result.Evidence{{What: fmt.Sprintf("%s's WAL (%s) is on %s, which has no block device whose statistics the kernel keeps", p.Name, p.WALDir, p.FSType),
			Source: "/proc/self/mountinfo"}}, fmt.Sprintf("its WAL is on %s (no device statistics)", p.FSType), false, false
	}
	service, what := p.DeviceFlushAwait, "flushed its cache"
	if p.DeviceFlushes == 0 {
		service, what = p.DeviceWriteAwait, "completed a write"
	}
	if service <= 0 {
		return nil, "", false, false
	}
	ev = []result.Evidence{{What: fmt.Sprintf("mean time %s, the device under %s's WAL, %s", p.Device, p.Name, what), Observed: service, Unit: "s",
		Source: "/proc/diskstats on " + p.Host}}
	slow = service*lv.FastFactor > p99
	words = fmt.Sprintf("the device under its WAL (%s) %s in %s on average", p.Device, what, units.Seconds(service))
	if inMemory(p) {
		words += ", in memory: its writes are copies the CPUs make"
		ev[0].What += " (a RAM disk: its writes are copies the CPUs make)"
	}
	return ev, words, slow, !slow
}

// blame is one cause named for some members.
type blame struct {
	cause    result.Cause
	members  []string
	severity result.Severity
	title    []string
	evidence []result.Evidence
}

// memberBlames names the cause of every member's slow disk latencies, and
// of slow round trips to a member.
func memberBlames(r *result.Result) []blame {
	views := etcdMembers(r)
	bs := &blames{lv: LevelsOf(r), by: map[result.Cause]*blame{}, explained: map[string]bool{}}
	named := map[string]bool{}
	for _, v := range views {
		if syms := memberSymptoms(r, v); len(syms) > 0 {
			named[v.Name] = true
			bs.slowMember(r, v, syms)
		}
	}
	// A member short of CPU whose disk latencies stayed under their limits
	// still answers its leader and its clients late: when the run passed a
	// limit (its requests, another member's disk), it is named too; when
	// the cluster only stalled more than once (slow applies, late
	// heartbeats: etcd's own loop ran late), or its own cgroup's CPU limit
	// stopped it (a fact of the member, whatever else runs on the host),
	// it is named as a warning: whether its wait shows in etcd's
	// histograms depends on when the stops fall. Either way it answers its
	// peers' probes late, and is not blamed on the network.
	failed := slices.ContainsFunc(r.Checks, func(c result.Check) bool { return c.Status == result.StatusFail })
	stalls := clusterStalled(views)
	for _, v := range views {
		if !named[v.Name] {
			bs.quietMember(v, failed, stalls)
		}
	}
	if nb, ok := networkBlame(peerRTTsOf(r), bs.explained, bs.lv.PeerRTT); ok {
		bs.by[result.CauseNetwork] = &nb
		bs.order = append(bs.order, result.CauseNetwork)
	}
	var out []blame
	for _, c := range bs.order {
		out = append(out, *bs.by[c])
	}
	return out
}

// blames are the causes named so far, in the order first named.
type blames struct {
	lv    Levels
	by    map[result.Cause]*blame
	order []result.Cause
	// explained: members whose late answers to their peers' probes their
	// own CPU or stalls may explain (or whose process is not known).
	explained map[string]bool
}

// add names cause for member at sev (see addAs).
func (bs *blames) add(sev result.Severity, cause result.Cause, member, title string, ev []result.Evidence) {
	addAs(bs.by, &bs.order, sev, cause, member, title, ev)
}

// slowMember names what made member v's disk latencies pass their limits
// (syms): its disk or CPU, critical.
func (bs *blames) slowMember(r *result.Result, v Member, syms []symptom) {
	lv := bs.lv
	add := func(cause result.Cause, title string, ev []result.Evidence) {
		bs.add(result.Critical, cause, v.Name, title, ev)
	}
	measured, symEv := symptomWords(v, syms)
	p99 := syms[0].check.Observed
	devEv, devWords, devSlow, devFast := deviceEvidence(lv, v.Process, p99)
	cpuEv, cpuWords := cpuStarvation(lv, v.Process, devFast)
	capEv, capWords := capEvidence(lv, v.Process)
	switch {
	case !v.Process.Measured():
		bs.explained[v.Name] = true
		bs.unmeasured(r, v, measured, symEv)
	case len(capEv) > 0:
		// A cap used: the writes waited for it, whatever the device's
		// speed. The member's own CPU starvation is named beside it.
		add(result.CauseIOPSCap, fmt.Sprintf("%s, while %s", measured, joinWords(capWords...)), append(slices.Clone(symEv), capEv...))
		// A cgroup's cap holds the writes above the device, which then
		// answers fast: a device slow as well is named beside it (a
		// volume's cap below the guest makes its device look slow).
		if devSlow && !volumeAtCap(lv, v.Process) {
			add(result.CauseDisk, fmt.Sprintf("%s, while %s", measured, devWords), append(slices.Clone(symEv), devEv...))
		}
		if ownEv, ownWords := cpuStarvation(lv, v.Process, false); len(ownEv) > 0 {
			add(result.CauseCPU, fmt.Sprintf("%s, while %s", measured, joinWords(ownWords...)), append(symEv, ownEv...))
		}
	case len(cpuEv) > 0 && devSlow && !inMemory(v.Process):
		add(result.CauseDisk, fmt.Sprintf("%s, while %s", measured, devWords), append(symEv, devEv...))
		add(result.CauseCPU, fmt.Sprintf("%s, while %s", measured, joinWords(cpuWords...)), append(symEv, cpuEv...))
	case len(cpuEv) > 0 || v.Process.Volatile || inMemory(v.Process):
		// In memory, an fsync does no I/O, or its I/O is a copy the
		// CPUs make (a RAM disk, fast or slow): what is slow is the
		// member's own work or its wait for a CPU.
		bs.explained[v.Name] = true
		add(result.CauseCPU, fmt.Sprintf("%s, while %s", measured, joinWords(append(cpuWords, devWords)...)), append(append(symEv, cpuEv...), devEv...))
	case devFast && belowDevice(lv, v.Process, p99):
		// The device answered fast, the CPU was free: the time went
		// below the device the host sees, to a volume's cap or the
		// storage behind it; the volume's stated figures would tell.
		procEv, procWords := processEvidence(lv, v.Process)
		add(result.CauseDiskOrIOPSCap, fmt.Sprintf("%s, while %s; %s", measured, joinWords(procWords, devWords), belowWords(v.Process)),
			append(append(symEv, devEv...), append(procEv, belowEvidence(v.Process)...)...))
	default:
		procEv, procWords := processEvidence(lv, v.Process)
		add(result.CauseDisk, fmt.Sprintf("%s, while %s: the time went to its storage", measured, joinWords(procWords, devWords, capNote(v.Process))),
			append(append(symEv, devEv...), procEv...))
	}
}

// symptomWords says member v's latencies that passed their limits, with
// their values, and their evidence.
func symptomWords(v Member, syms []symptom) (string, []result.Evidence) {
	var parts []string
	var ev []result.Evidence
	for _, s := range syms {
		what := symptomNames[s.check.Name]
		parts = append(parts, fmt.Sprintf("%s %s (limit %s)", what, LatencyText(s.check), units.Seconds(s.check.Limit)))
		e := EvidenceOf(s.check)
		e.What = fmt.Sprintf("%s of %s over the run", what, v.Name)
		ev = append(ev, e)
	}
	return v.Name + "'s " + strings.Join(parts, ", "), ev
}

// unmeasured names the cause of slow disk latencies on a member whose
// process etcdperf did not measure: the IOPS cap when its host's device
// history shows it, else its disk or its CPU, with why it cannot tell.
func (bs *blames) unmeasured(r *result.Result, v Member, measured string, symEv []result.Evidence) {
	why := "etcdperf could not measure its process: it does not run on this host"
	switch {
	case r.Prom != nil:
		why = "a history in Prometheus says nothing of its process"
	case v.Process != nil && v.Process.Error != "":
		why = "etcdperf could not measure its process: " + v.Process.Error
	}
	cause, hEv, hWords := historyDevice(bs.lv, v.HostDisk)
	if cause == result.CauseIOPSCap {
		bs.add(result.Critical, cause, v.Name, fmt.Sprintf("%s, while %s", measured, hWords), append(symEv, hEv...))
		return
	}
	if hWords != "" {
		why += "; " + hWords
	}
	bs.add(result.Critical, result.CauseDiskOrCPU, v.Name, fmt.Sprintf("%s, and %s", measured, why), append(symEv, hEv...))
}

// quietMember names what a member whose disk latencies stayed under their
// limits still did to the run: a cap its writes used, and its own CPU
// starvation (critical when the run failed a limit, else a warning).
func (bs *blames) quietMember(v Member, failed, stalls bool) {
	lv := bs.lv
	sev := result.Critical
	if !failed {
		sev = result.Warning
	}
	// A cap used is a fact of the member as its CPU throttling is:
	// its writes wait for the cap's next slot even while its
	// latencies stay under their limits.
	if capEv, capWords := capEvidence(lv, v.Process); len(capEv) > 0 && (cgroupCapUsed(lv, v.Process) || !overStated(v.Process, lv)) {
		// Near the figures the user stated, with its latencies under
		// their limits, a member is close to its cap: a warning,
		// whatever another member did to the run.
		s := sev
		if !cgroupCapUsed(lv, v.Process) {
			s = result.Warning
		}
		bs.add(s, result.CauseIOPSCap, v.Name, fmt.Sprintf("%s, while %s", underLimits(v), strings.Join(capWords, "; ")), capEv)
	} else if lv.VolumeIOPS > 0 {
		if cause, hEv, hWords := historyDevice(lv, v.HostDisk); cause == result.CauseIOPSCap {
			bs.add(sev, cause, v.Name, fmt.Sprintf("%s, while %s", underLimits(v), hWords), hEv)
		}
	}
	cpuEv, cpuWords := cpuStarvation(lv, v.Process, false)
	if len(cpuEv) == 0 {
		return
	}
	bs.explained[v.Name] = true
	if !failed && !stalls && !throttledByLimit(lv, v.Process) {
		return
	}
	bs.add(sev, result.CauseCPU, v.Name, fmt.Sprintf("%s, while %s", underLimits(v), strings.Join(cpuWords, "; ")), cpuEv)
}

// joinWords joins the words that say something with "; ".
func joinWords(words ...string) string {
	var ws []string
	for _, w := range words {
		if w != "" {
			ws = append(ws, w)
		}
	}
	return strings.Join(ws, "; ")
}

// underLimits says that a member's disk latencies stayed under their
// limits, with their values.
func underLimits(v Member) string {
	var under []string
	for _, l := range []struct {
		id string
		l  *result.Latency
	}{{limits.WALFsyncP99, v.WALFsync}, {limits.BackendCommitP99, v.BackendCommit}} {
		if l.l != nil && l.l.Count > 0 {
			bound := l.l.Bucketed && l.l.Resolution > 0 && l.l.P99 <= l.l.Resolution
			under = append(under, symptomNames[l.id]+" "+LatencyText(result.Check{Observed: l.l.P99, Bound: bound}))
		}
	}
	measured := v.Name + "'s disk latencies stayed under their limits"
	if len(under) > 0 {
		measured = fmt.Sprintf("%s (%s)", measured, strings.Join(under, ", "))
	}
	return measured
}

// addAs names cause for member with its evidence, at severity sev or
// the severity it already has, whichever is higher.
func addAs(by map[result.Cause]*blame, order *[]result.Cause, sev result.Severity, cause result.Cause, member, title string, ev []result.Evidence) {
	b, ok := by[cause]
	if !ok {
		b = &blame{cause: cause, severity: sev}
		by[cause] = b
		*order = append(*order, cause)
	}
	if sev == result.Critical {
		b.severity = sev
	}
	if !slices.Contains(b.members, member) {
		b.members = append(b.members, member)
	}
	b.title = append(b.title, title)
	b.evidence = append(b.evidence, ev...)
}

// clusterStalled says whether the members' own loops ran late more than
// once in the period (slow applies, late heartbeats: the levels at which
// stallSeverity warns).
func clusterStalled(views []Member) bool {
	var applies, hb float64
	for _, v := range views {
		applies += v.SlowApplies
		hb += v.HeartbeatFailures
	}
	return recurring(applies, 1) || recurring(hb, float64(len(views)-1))
}

// symptomNames are the disk latencies the cause rules judge, in words.
var symptomNames = map[string]string{limits.WALFsyncP99: "WAL fsync p99", limits.BackendCommitP99: "backend commit p99"}

// LatencyText is a latency check's observed value, "<= 1ms" when it is
// only a bound (a p99 in the lowest bucket of a histogram).
func LatencyText(c result.Check) string {
	if c.Bound {
		return "<= " + units.Seconds(c.Observed)
	}
	return units.Seconds(c.Observed)
}

// networkBlame names the member that every slow round trip leads to (or
// comes from): the one whose peer link is slow. A member short of CPU
// (or not measured, so perhaps) answers its peers' probes late too, and is
// not blamed on the network.
func networkBlame(rtts []result.PeerRTT, explained map[string]bool, high float64) (blame, bool) {
	var slow []result.PeerRTT
	for _, p := range rtts {
		if p.Mean >= high {
			slow = append(slow, p)
		}
	}
	if len(slow) == 0 {
		return blame{}, false
	}
	count := map[string]int{}
	for _, p := range slow {
		count[p.From]++
		count[p.To]++
	}
	var common []string
	for m, n := range count {
		if n == len(slow) {
			common = append(common, m)
		}
	}
	sort.Strings(common)
	members := common
	if len(slow) < 2 || len(common) != 1 {
		// One slow pair, or no member in all of them: name every member
		// of a slow pair.
		members = nil
		for m := range count {
			members = append(members, m)
		}
		sort.Strings(members)
	}
	for _, m := range members {
		if explained[m] {
			return blame{}, false
		}
	}
	b := blame{cause: result.CauseNetwork, members: members, severity: result.Warning}
	for _, p := range slow {
		b.evidence = append(b.evidence, result.Evidence{What: fmt.Sprintf("round trip from %s to %s (mean of %.0f, %s)", p.From, p.To, p.Count, p.Scope),
			Observed: p.Mean, Limit: high, Unit: "s", Source: "etcd_network_peer_round_trip_time_seconds"})
	}
	for _, p := range rtts {
		if p.Mean < high && len(b.evidence) < 2*len(slow)+2 {
			b.evidence = append(b.evidence, result.Evidence{What: fmt.Sprintf("round trip from %s to %s (mean of %.0f, %s), for comparison", p.From, p.To, p.Count, p.Scope),
				Observed: p.Mean, Unit: "s", Source: "etcd_network_peer_round_trip_time_seconds"})
		}
	}
	if len(members) == 1 {
		b.title = []string{fmt.Sprintf("round trips to and from %s take %s, those between the other members %s", members[0],
			units.Seconds(meanOf(slow)), fastText(rtts, high))}
	} else {
		b.title = []string{fmt.Sprintf("round trips between %s take %s", strings.Join(members, ", "), units.Seconds(meanOf(slow)))}
	}
	return b, true
}

func meanOf(ps []result.PeerRTT) float64 {
	var s float64
	for _, p := range ps {
		s += p.Mean
	}
	return s / float64(len(ps))
}

func fastText(rtts []result.PeerRTT, high float64) string {
	var fast []result.PeerRTT
	for _, p := range rtts {
		if p.Mean < high {
			fast = append(fast, p)
		}
	}
	if len(fast) == 0 {
		return "are not known"
	}
	return units.Seconds(meanOf(fast))
}

// Finding IDs of the cause rules (the cause table's).
var (
	FindingMemberDisk      = result.CauseDisk.Info().Finding.ID
	FindingMemberCPU       = result.CauseCPU.Info().Finding.ID
	FindingMemberDiskOrCPU = result.CauseDiskOrCPU.Info().Finding.ID
	FindingMemberNetwork   = result.CauseNetwork.Info().Finding.ID
	FindingMemberIOPSCap   = result.CauseIOPSCap.Info().Finding.ID
	// FindingMemberBelowDevice: the time went below the device its host
	// sees (a volume's cap or the storage behind it).
	FindingMemberBelowDevice = result.CauseDiskOrIOPSCap.Info().Finding.ID
)

func memberCauseFindings(r *result.Result) []result.Finding {
	var out []result.Finding
	for _, b := range memberBlames(r) {
		f := result.Finding{Severity: b.severity, Cause: b.cause, Members: b.members, Evidence: b.evidence}
		who := strings.Join(b.members, ", ")
		w := b.cause.Info().Finding
		f.ID, f.Title, f.Recommendation = w.ID, fmt.Sprintf(w.Title, who, strings.Join(b.title, "; ")), w.Remedy
		out = append(out, f)
	}
	return out
}

// memberVolatile warns about members whose WAL is in memory (tmpfs), as
// volatile_storage does for the storage under test: fast, not durable.
func memberVolatile(r *result.Result) []result.Finding {
	if r.Env != nil && r.Env.Volatile {
		return nil // volatile_storage says it
	}
	var names []string
	var ev []result.Evidence
	fsType := ""
	for _, v := range etcdMembers(r) {
		if p := v.Process; p != nil && p.Volatile {
			names = append(names, v.Name)
			fsType = p.FSType
			ev = append(ev, result.Evidence{What: fmt.Sprintf("%s's WAL %s is on %s (on host %s)", v.Name, p.WALDir, p.FSType, p.Host), Source: "/proc/self/mountinfo"})
		}
	}
	if len(names) == 0 {
		return nil
	}
	return []result.Finding{{
		ID:       "member_volatile",
		Severity: result.Warning,
		Title: fmt.Sprintf("The WAL of %s is in memory (%s): fdatasync is a no-op there, so these figures are RAM's, not a disk's, and the data is lost on reboot",
			strings.Join(names, ", "), fsType),
		Members:        names,
		Evidence:       ev,
		Recommendation: "A RAM disk suits a throw-away etcd (a CI cluster), never one whose data must survive a reboot: judge the disk etcd will really use.",
	}}
}
