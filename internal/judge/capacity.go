package judge

import (
	"fmt"
	"math"
	"strings"

	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// capacityCriteria are the limits a sweep's step must hold: check perf's
// and etcd's disk limits (leader changes and failed proposals too: a step
// that loses its leader did not carry its load).
var capacityCriteria = []string{
	limits.Throughput, limits.SlowestRequest, limits.LatencyStddev, limits.RequestP99,
	limits.WALFsyncP99, limits.BackendCommitP99, limits.LeaderChanges, limits.ProposalsFailed,
}

// CapacityStep judges one step of a capacity sweep from its judged Result
// (Judge): its figures, the capacity criteria it failed, and what limited
// it (as the verdict names it: disk, cpu, client, network, ...). A confirm
// step's intervals, when given, judge its p99s as a soak's are (hold).
func CapacityStep(r *result.Result, offered float64, clients int, intervals []result.SoakSample, criteria []limits.Criterion) result.CapacityStep {
	st := result.CapacityStep{Offered: offered, Clients: clients}
	st.WALFsyncP99, st.BackendCommitP99, st.RequestP99 = loadP99s(r)
	if b := r.Bench; b != nil {
		st.Achieved, st.Seconds = b.Throughput, b.Seconds
		st.ClientCPU = b.ClientCPU
	}
	if s := r.Server; s != nil {
		st.WALFsyncBound, st.BackendCommitBound = s.WALFsync.AtFloor(), s.BackendCommit.AtFloor()
		if s.WALFsync != nil && st.Seconds > 0 {
			st.WALFsyncs = float64(s.WALFsync.Count) / st.Seconds
		}
		// The tightest cap a member's cgroup puts on its writes.
		for _, p := range s.Processes {
			if p.IOPSCap > 0 && (st.IOPSCap == 0 || p.IOPSCap < st.IOPSCap) {
				st.IOPSCap, st.CappedWriteIOPS, st.CapDevice = p.IOPSCap, p.CappedWriteIOPS, p.CapDevice
			}
		}
	}
	if pf := r.Perf; pf != nil {
		st.EtcdCPU, st.ClientCPU = pf.ServerCPU, pf.ClientCPU
	}
	if h := r.Host; h != nil {
		st.HostCPUBusy = h.Summary.CPUBusy
		if h.Device != "" {
			st.DeviceIOPS, st.DeviceUtil, st.DeviceAwait = h.Summary.WriteIOPS, h.Summary.Util, h.Summary.WriteAwait
			st.DeviceWriteBytes = h.Summary.WriteBytes
		}
	}
	for _, c := range r.Checks {
		switch {
		case !contains(capacityCriteria, c.Name):
		case c.Status == result.StatusFail:
			st.Broke = append(st.Broke, c.Name)
		case c.Status == result.StatusWarn:
			st.Tight = append(st.Tight, c.Name)
		}
	}
	hold(&st, intervals, criteria)
	if len(st.Broke) > 0 {
		// What the verdict's rules name at the step; the sweep's rules
		// (kneeCause) read it with the other steps.
		st.Cause = diagnose.DoctorLimitedBy(r)
	}
	return st
}

// Capacity concludes a sweep from its steps (in the order they ran, the
// offered rate rising but for a last step between the highest that held
// and the lowest that broke): the highest offered rate that held every
// limit, what broke next, and why, by the limits of criteria (the WAL
// fsync p99's, the host's CPUs busy). The volume's IOPS cap is told from a slow disk by its sign: a
// fast fsync at a low rate, then the writes (the device's IOPS, else
// etcd's fsyncs per second) flat across a rising offered rate while the
// fsync p99 climbs; or, on this host, the
// member's own cgroup cap, used to at least iops_cap_used during the step
// that broke.
func Capacity(c *result.Capacity, criteria []limits.Criterion) {
	// A hold's p99s are its intervals' (hold): judged again from them, by
	// criteria, as the sweep judged them.
	for i := range c.Steps {
		if st := &c.Steps[i]; st.Confirm && len(st.Intervals) > 0 {
			hold(st, st.Intervals, criteria)
		}
	}
	concludeSweep(c, diagnose.LevelsIn(criteria))
}

// concludeSweep is Capacity by the levels lv; it returns the name of the
// rule that named the cause (capacityRules, or "host"; "" when no step
// broke).
func concludeSweep(c *result.Capacity, lv diagnose.Levels) (rule string) {
	c.PutsPerS, c.LimitedBy, c.Cause, c.Evidence = 0, nil, result.CauseNone, ""
	if len(c.Steps) == 0 {
		c.Answer = "no step of the sweep ran"
		return ""
	}
	defer headroom(c)
	defer provisioned(c, lv)
	defer sizesFrom(c)
	// A rate that broke when held (a confirm step) undoes what shorter
	// steps held at it and above.
	// A rate that held when held (a confirm step below the one that
	// broke) bounds the answer too: a shorter step that held between the
	// two was not confirmed, and the sweep stepped down past it.
	held, confirmed := math.Inf(1), 0.0
	for _, st := range c.Steps {
		if st.Confirm && st.Failed() {
			held = min(held, st.Offered)
		}
	}
	for _, st := range c.Steps {
		if st.Confirm && !st.Failed() && st.Offered < held {
			confirmed = max(confirmed, st.Offered)
		}
	}
	for _, st := range c.Steps {
		if !st.Failed() && st.Offered < held && (confirmed == 0 || st.Offered <= confirmed) {
			c.PutsPerS = max(c.PutsPerS, st.Offered)
		}
	}
	// What broke is the lowest rate above the answer that broke (a hold
	// that held above a short step that broke bounds the answer, not the
	// short step).
	var broke *result.CapacityStep
	for i := range c.Steps {
		st := &c.Steps[i]
		if st.Failed() && st.Offered > c.PutsPerS && (broke == nil || st.Offered < broke.Offered || st.Offered == broke.Offered && st.Confirm) {
			broke = st
		}
	}
	size := units.Bytes(float64(c.ValueSize))
	if c.DBSize > 0 {
		size += " on a database of " + units.Bytes(float64(c.DBSize))
	}
	if broke == nil {
		last := c.Steps[len(c.Steps)-1]
		c.Answer = fmt.Sprintf("carries etcd up to %s puts/s of %s within its limits, the most this sweep offered (%s achieved)",
			units.Thousands(c.PutsPerS), size, units.Thousands(last.Achieved))
		return ""
	}
	c.LimitedBy = broke.Broke
	if len(broke.Broke) == 0 {
		c.LimitedBy = broke.Tight
	}
	c.Cause, c.Evidence, rule = kneeCause(c.Steps, broke, lv)
	what := brokeWords(broke)
	if c.PutsPerS == 0 {
		c.Answer = fmt.Sprintf("does not carry etcd at %s puts/s of %s: %s; %s", units.Thousands(broke.Offered), size, what, causeWords(c.Cause, c.Evidence))
		return rule
	}
	c.Answer = fmt.Sprintf("carries etcd up to %s puts/s of %s within its limits%s; at %s%s %s: %s",
		units.Thousands(c.PutsPerS), size, heldWords(c), units.Thousands(broke.Offered), confirmWords(c, broke), what, causeWords(c.Cause, c.Evidence))
	return rule
}

// headroom judges the capacity against the cluster's peak demand, when
// one is given, and says so in the answer.
func headroom(c *result.Capacity) {
	c.Headroom = 0
	if c.Demand <= 0 {
		return
	}
	c.Headroom = c.PutsPerS / c.Demand
	c.Answer += fmt.Sprintf("; against a peak demand of %s writes/s (%s): %s headroom", units.Thousands(c.Demand), c.DemandFrom, units.Ratio(c.Headroom))
}

// sizesFrom says in the answer which sizes are the cluster's, read from
// its metrics, and what they assume.
func sizesFrom(c *result.Capacity) {
	var said []string
	if c.DBSizeFrom != "" {
		said = append(said, fmt.Sprintf("the database's size (%s) is %s", units.Bytes(float64(c.DBSize)), c.DBSizeFrom))
	}
	if c.ValueSizeFrom != "" {
		said = append(said, fmt.Sprintf("the values' size (%s) is %s", units.Bytes(float64(c.ValueSize)), c.ValueSizeFrom))
	}
	if len(said) > 0 {
		c.Answer += "; " + strings.Join(said, "; ")
	}
}

// heldWords says how long the capacity's rate held, when a confirm step
// ran: held for the time of the longest hold that held it (its whole
// time, or two intervals or more once they had decided it: HoldDecided),
// or in a short step only.
func heldWords(c *result.Capacity) string {
	if c.ConfirmSeconds <= 0 {
		return ""
	}
	longest, hold := 0.0, false
	for _, st := range c.Steps {
		if !st.Failed() && st.Offered == c.PutsPerS {
			longest = max(longest, st.Seconds)
			hold = hold || st.Confirm && (st.Seconds >= c.ConfirmSeconds*0.9 || len(st.Intervals) >= 2)
		}
	}
	if hold {
		// In whole seconds: a hold's load ends with its last send, a
		// little before its time (9.97s of 10s).
		return ", held for " + units.Seconds(math.Round(longest))
	}
	return ", held only for " + units.Seconds(longest)
}

// confirmWords says that the step that broke was a confirm step, and how
// long it ran: the confirm's time, or less when its first intervals
// had broken it already (HoldDecided).
func confirmWords(c *result.Capacity, broke *result.CapacityStep) string {
	if !broke.Confirm {
		return ""
	}
	secs := c.ConfirmSeconds
	if broke.Seconds > 0 && broke.Seconds < 0.9*secs {
		secs = math.Round(broke.Seconds)
	}
	return ", held for " + units.Seconds(secs) + ","
}

// provisioned says, when the user stated the volume's provisioned
// figures, how much of them the device wrote at the capacity's step (the
// highest that held; the first step when none did), and so the headroom
// the provisioning leaves.
func provisioned(c *result.Capacity, lv diagnose.Levels) {
	c.VolumeIOPS, c.VolumeWriteBPS, c.VolumeIOPSUsed, c.VolumeBPSUsed = lv.VolumeIOPS, lv.VolumeBPS, 0, 0
	if lv.VolumeIOPS <= 0 && lv.VolumeBPS <= 0 {
		return
	}
	at := c.Steps[0]
	for _, s := range c.Steps {
		if len(s.Broke) == 0 && s.Offered == c.PutsPerS {
			at = s
		}
	}
	var parts []string
	if lv.VolumeIOPS > 0 && at.DeviceIOPS > 0 {
		c.VolumeIOPSUsed = at.DeviceIOPS / lv.VolumeIOPS
		parts = append(parts, fmt.Sprintf("%s of the %s IOPS provisioned (%.0f%%)", units.Thousands(at.DeviceIOPS), units.Thousands(lv.VolumeIOPS), 100*c.VolumeIOPSUsed))
	}
	if lv.VolumeBPS > 0 && at.DeviceWriteBytes > 0 {
		c.VolumeBPSUsed = at.DeviceWriteBytes / lv.VolumeBPS
		parts = append(parts, fmt.Sprintf("%s/s of the %s/s provisioned (%.0f%%)", units.Bytes(at.DeviceWriteBytes), units.Bytes(lv.VolumeBPS), 100*c.VolumeBPSUsed))
	}
	if len(parts) == 0 {
		c.Answer += "; the device's writes were not measured, so the provisioned figures cannot be judged"
		return
	}
	c.Answer += fmt.Sprintf("; at %s puts/s the device wrote %s", units.Thousands(at.Offered), strings.Join(parts, " and "))
}

// capacityChecks judges the capacity sweep and the soak a Result holds
// (Capacity, Soak), and adds the headroom check of a sweep judged against
// a demand.
func capacityChecks(r *result.Result, criteria []limits.Criterion) {
	if s := r.Soak; s != nil {
		Soak(s, criteria)
	}
	c := r.Capacity
	if c == nil {
		return
	}
	Capacity(c, criteria)
	if c.Demand > 0 {
		limits.Apply(&r.Checks, criteria, limits.CapacityHeadroom, c.Headroom, false)
	}
}

// stepEvidence says what the step that broke measured.
func stepEvidence(st *result.CapacityStep) string {
	parts := []string{fmt.Sprintf("WAL fsync p99 %s, %s fsyncs/s", units.P99(st.WALFsyncP99, st.WALFsyncBound), units.Thousands(st.WALFsyncs))}
	if st.DeviceIOPS > 0 || st.DeviceUtil > 0 {
		parts = append(parts, fmt.Sprintf("device %s IOPS, %.0f%% busy, writes %s", units.Thousands(st.DeviceIOPS), st.DeviceUtil*100, units.Seconds(st.DeviceAwait)))
	}
	if st.EtcdCPU > 0 {
		parts = append(parts, fmt.Sprintf("etcd %.2f cores", st.EtcdCPU))
	}
	parts = append(parts, fmt.Sprintf("load generator %.2f cores", st.ClientCPU))
	if st.HostCPUBusy > 0 {
		parts = append(parts, fmt.Sprintf("this host's CPUs %.0f%% busy", st.HostCPUBusy*100))
	}
	return strings.Join(parts, ", ")
}

// brokeWords says which limits a step broke, with their values, or, for
// a confirm step held tight, which it came near.
func brokeWords(st *result.CapacityStep) string {
	if len(st.Broke) == 0 {
		return limitWords(st, st.Tight, "") + " came within the warning level of its limit: a queue still building, which a longer hold breaks"
	}
	return limitWords(st, st.Broke, " broke")
}

// limitWords names the limits ids of a step, each followed by verb and
// the step's value of it.
func limitWords(st *result.CapacityStep, ids []string, verb string) string {
	var ws []string
	for _, id := range ids {
		switch id {
		case limits.WALFsyncP99:
			ws = append(ws, "the WAL fsync p99"+verb+" ("+units.P99(st.WALFsyncP99, st.WALFsyncBound)+")")
		case limits.BackendCommitP99:
			ws = append(ws, "the backend commit p99"+verb+" ("+units.P99(st.BackendCommitP99, st.BackendCommitBound)+")")
		case limits.Throughput:
			ws = append(ws, fmt.Sprintf("the throughput%s (%s of %s puts/s)", verb, units.Thousands(st.Achieved), units.Thousands(st.Offered)))
		case limits.RequestP99:
			ws = append(ws, "the request p99"+verb+" ("+units.Seconds(st.RequestP99)+")")
		default:
			ws = append(ws, "the "+strings.ReplaceAll(id, "_", " ")+verb)
		}
	}
	return strings.Join(ws, ", ")
}

// causeWords says what limited etcd at the knee, with the evidence.
func causeWords(cause result.Cause, ev string) string {
	w := cause.Info().AtKnee
	if w == "" {
		w = "nothing observed explains it"
	}
	if ev != "" {
		w += " (" + ev + ")"
	}
	return w
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
