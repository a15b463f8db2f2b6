package judge

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// capacityCriteria are the limits a sweep's step must hold: check perf's
// and etcd's disk limits (leader changes and failed proposals too: a step
// that loses its leader did not carry its load).
var capacityCriteria = []string{
	check.Throughput, check.SlowestRequest, check.LatencyStddev, check.RequestP99,
	check.WALFsyncP99, check.BackendCommitP99, check.LeaderChanges, check.ProposalsFailed,
}

// CapacityStep judges one step of a capacity sweep from its judged Result
// (Judge): its figures, the capacity criteria it failed, and what limited
// it (as the verdict names it: disk, cpu, client, network, ...).
func CapacityStep(r *result.Result, offered float64, clients int) result.CapacityStep {
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
	if len(st.Broke) > 0 {
		st.Cause = diagnose.DoctorLimitedBy(r)
		if st.Cause == result.CauseDiskOrIOPSCap {
			// One step cannot tell a volume's cap from the storage
			// behind it; the sweep's steps together can (iopsCap), and
			// its rules read the step as its storage's.
			st.Cause = result.CauseDisk
		}
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
func Capacity(c *result.Capacity, criteria []check.Criterion) {
	lv := capacityLevelsOf(criteria)
	c.PutsPerS, c.LimitedBy, c.Cause, c.Evidence = 0, nil, result.CauseNone, ""
	if len(c.Steps) == 0 {
		c.Answer = "no step of the sweep ran"
		return
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
	var broke *result.CapacityStep
	for i := range c.Steps {
		st := &c.Steps[i]
		if !st.Failed() && st.Offered < held && (confirmed == 0 || st.Offered <= confirmed) {
			c.PutsPerS = max(c.PutsPerS, st.Offered)
		} else if st.Failed() && (broke == nil || st.Offered < broke.Offered || st.Offered == broke.Offered && st.Confirm) {
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
			rate(c.PutsPerS), size, rate(last.Achieved))
		return
	}
	c.LimitedBy = broke.Broke
	if len(broke.Broke) == 0 {
		c.LimitedBy = broke.Tight
	}
	c.Cause = broke.Cause
	if cause, ev := iopsCap(c.Steps, broke, lv); cause != "" {
		c.Cause, c.Evidence = cause, ev
	} else {
		c.Cause = hostCause(broke, lv)
		c.Evidence = stepEvidence(broke)
	}
	what := brokeWords(broke)
	if c.PutsPerS == 0 {
		c.Answer = fmt.Sprintf("does not carry etcd at %s puts/s of %s: %s; %s", rate(broke.Offered), size, what, causeWords(c.Cause, c.Evidence))
		return
	}
	c.Answer = fmt.Sprintf("carries etcd up to %s puts/s of %s within its limits%s; at %s%s %s: %s",
		rate(c.PutsPerS), size, heldWords(c), rate(broke.Offered), confirmWords(c, broke), what, causeWords(c.Cause, c.Evidence))
}

// capacityLevels are the levels a sweep's cause is judged by, as the run
// set them (check.Table, --limit applied): the WAL fsync limit and the
// host's CPUs busy (host_cpu_busy, the level at which the host rules call
// them saturated); how much of a seen cap a step must use for the cap to
// be what it ran into (the cgroup counts the operations it throttles, and
// a step near its knee spends part of its time below the cap); the device
// write time and utilisation under which the device explains no etcd
// limit (idleAwait, looser, below a member's cgroup cap); the WAL fsync
// p99 at or under which a step found the disk fast (walFast); and the
// growth of the writes (the device's IOPS, else etcd's fsyncs/s) under
// which they are flat while the offered rate rose by offeredRise. The device and fsync levels derive from the
// WAL fsync limit in check (derivedLevels), not here.
type capacityLevels struct {
	walLimit, busyHost, capUsed, fastAwait, idleAwait, walFast, idleUtil, flatGrowth, offeredRise float64
	// volumeIOPS and volumeBPS are the volume's provisioned figures as
	// the user stated them (0: not stated).
	volumeIOPS, volumeBPS float64
}

func capacityLevelsOf(criteria []check.Criterion) capacityLevels {
	return capacityLevels{
		walLimit:    check.LimitOf(criteria, check.WALFsyncP99),
		busyHost:    check.LimitOf(criteria, check.HostCPUBusy),
		capUsed:     check.LimitOf(criteria, check.IOPSCapUsed),
		fastAwait:   check.LimitOf(criteria, check.DeviceFastAwait),
		idleAwait:   check.LimitOf(criteria, check.DeviceIdleAwait),
		walFast:     check.LimitOf(criteria, check.WALFsyncFast),
		idleUtil:    check.LimitOf(criteria, check.DeviceIdle),
		flatGrowth:  check.LimitOf(criteria, check.FsyncsFlatGrowth),
		offeredRise: check.LimitOf(criteria, check.OfferedRise),
		volumeIOPS:  check.LimitOf(criteria, check.VolumeIOPS),
		volumeBPS:   check.LimitOf(criteria, check.VolumeWriteBPS),
	}
}

// headroom judges the capacity against the cluster's peak demand, when
// one is given, and says so in the answer.
func headroom(c *result.Capacity) {
	c.Headroom = 0
	if c.Demand <= 0 {
		return
	}
	c.Headroom = c.PutsPerS / c.Demand
	c.Answer += fmt.Sprintf("; against a peak demand of %s writes/s (%s): %s headroom", rate(c.Demand), c.DemandFrom, units.Ratio(c.Headroom))
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
// ran: held for its time, or in a short step only.
func heldWords(c *result.Capacity) string {
	if c.ConfirmSeconds <= 0 {
		return ""
	}
	longest := 0.0
	for _, st := range c.Steps {
		if !st.Failed() && st.Offered == c.PutsPerS {
			longest = max(longest, st.Seconds)
		}
	}
	if longest >= c.ConfirmSeconds*0.9 {
		return ", held for " + units.Seconds(longest)
	}
	return ", held only for " + units.Seconds(longest)
}

// confirmWords says that the step that broke was a confirm step.
func confirmWords(c *result.Capacity, broke *result.CapacityStep) string {
	if !broke.Confirm {
		return ""
	}
	return ", held for " + units.Seconds(c.ConfirmSeconds) + ","
}

// provisioned says, when the user stated the volume's provisioned
// figures, how much of them the device wrote at the capacity's step (the
// highest that held; the first step when none did), and so the headroom
// the provisioning leaves.
func provisioned(c *result.Capacity, lv capacityLevels) {
	c.VolumeIOPS, c.VolumeWriteBPS, c.VolumeIOPSUsed, c.VolumeBPSUsed = lv.volumeIOPS, lv.volumeBPS, 0, 0
	if lv.volumeIOPS <= 0 && lv.volumeBPS <= 0 {
		return
	}
	at := c.Steps[0]
	for _, s := range c.Steps {
		if len(s.Broke) == 0 && s.Offered == c.PutsPerS {
			at = s
		}
	}
	var parts []string
	if lv.volumeIOPS > 0 && at.DeviceIOPS > 0 {
		c.VolumeIOPSUsed = at.DeviceIOPS / lv.volumeIOPS
		parts = append(parts, fmt.Sprintf("%s of the %s IOPS provisioned (%.0f%%)", rate(at.DeviceIOPS), rate(lv.volumeIOPS), 100*c.VolumeIOPSUsed))
	}
	if lv.volumeBPS > 0 && at.DeviceWriteBytes > 0 {
		c.VolumeBPSUsed = at.DeviceWriteBytes / lv.volumeBPS
		parts = append(parts, fmt.Sprintf("%s/s of the %s/s provisioned (%.0f%%)", units.Bytes(at.DeviceWriteBytes), units.Bytes(lv.volumeBPS), 100*c.VolumeBPSUsed))
	}
	if len(parts) == 0 {
		c.Answer += "; the device's writes were not measured, so the provisioned figures cannot be judged"
		return
	}
	c.Answer += fmt.Sprintf("; at %s puts/s the device wrote %s", rate(at.Offered), strings.Join(parts, " and "))
}

// capacityChecks adds the headroom check of a sweep judged against a
// demand.
func capacityChecks(r *result.Result, criteria []check.Criterion) {
	if c := r.Capacity; c != nil && c.Demand > 0 {
		check.Apply(&r.Checks, criteria, check.CapacityHeadroom, c.Headroom, false)
	}
}

// iopsCap names a write cap at the knee, and its evidence ("" when none
// shows): the member's own cgroup cap on this host, used to at least
// iops_cap_used during the step that broke (or etcd waiting above an idle
// device with nothing else named); the volume's provisioned figures as the
// user stated them, written to at least iops_cap_used of them; else a flat
// ceiling of etcd's writes (flatCeiling).
func iopsCap(steps []result.CapacityStep, broke *result.CapacityStep, lv capacityLevels) (result.Cause, string) {
	// The cap is seen, on this host: the member's cgroup. It is what etcd
	// ran into when the step used most of it, whatever else was busy (a
	// cap is a hard ceiling; a busy host's CPU is said beside it), or when
	// etcd waited for its disk while the device itself answered fast (the
	// wait was above it) and nothing else was named.
	// A device neither busy (under device_idle) nor slow per write (under
	// device_idle_await) cannot explain etcd's waits: with a cap seen, they were above
	// it (bbolt's commits write in bursts, which a cap delays even when
	// the mean rate is under it).
	deviceIdle := broke.DeviceIOPS > 0 && broke.DeviceAwait < lv.idleAwait && broke.DeviceUtil < lv.idleUtil
	otherNamed := broke.Cause == result.CauseCPU || broke.Cause == result.CauseClient || broke.Cause == result.CauseNetwork
	used := broke.IOPSCap > 0 && broke.CappedWriteIOPS >= lv.capUsed*broke.IOPSCap
	if used || (broke.IOPSCap > 0 && deviceIdle && !otherNamed) {
		ev := fmt.Sprintf("the member's cgroup caps its writes on %s at %s IOPS, and it wrote %s/s during the step",
			broke.CapDevice, rate(broke.IOPSCap), rate(broke.CappedWriteIOPS))
		if deviceIdle {
			ev += fmt.Sprintf(", while the device answered each write in %s on average, %.0f%% busy", units.Seconds(broke.DeviceAwait), broke.DeviceUtil*100)
		}
		if broke.HostCPUBusy >= lv.busyHost {
			ev += fmt.Sprintf("; this host's CPUs were also %.0f%% busy", broke.HostCPUBusy*100)
		}
		return result.CauseIOPSCap, ev
	}
	if lv.volumeIOPS > 0 && broke.DeviceIOPS >= lv.capUsed*lv.volumeIOPS {
		return result.CauseIOPSCap, fmt.Sprintf("the device wrote %s IOPS during the step, %.0f%% of the %s provisioned (--volume-iops)",
			rate(broke.DeviceIOPS), 100*broke.DeviceIOPS/lv.volumeIOPS, rate(lv.volumeIOPS))
	}
	if lv.volumeBPS > 0 && broke.DeviceWriteBytes >= lv.capUsed*lv.volumeBPS {
		return result.CauseIOPSCap, fmt.Sprintf("the device wrote %s/s during the step, %.0f%% of the %s/s provisioned (--volume-mbps)",
			units.Bytes(broke.DeviceWriteBytes), 100*broke.DeviceWriteBytes/lv.volumeBPS, units.Bytes(lv.volumeBPS))
	}
	if broke.Cause == result.CauseClient || broke.Cause == result.CauseNetwork {
		return "", ""
	}
	return flatCeiling(steps, broke, lv)
}

// flatCeiling reports a cap seen from etcd's behaviour alone, wherever it
// sits (a cloud volume's below the guest, or a cgroup's the host hides):
// a fast WAL fsync at the sweep's lowest rate, then the writes (the
// device's write IOPS when every step measured them, else etcd's WAL
// fsyncs per second) flat across the steps at and past the knee (the step
// that broke among them): within fsyncs_flat_growth of their highest, or
// fewer at a higher rate offered than the step that wrote the most, while
// the offered rate rose by at least offered_rise and the fsync p99 climbed
// past wal_fsync_fast (half its limit). The knee's middle step only adds a point to the band: which side
// of the knee it falls on does not decide the cause. A latency-bound disk
// holds a flat ceiling too, but its fsync p99 does not climb with the
// rate. Where the CPU may explain the waits (cpuExplains), etcd batching
// its writes for want of a CPU looks the same: over a device of this host
// that was not busy (and no cgroup cap on the member), that is the CPU,
// not a cap; without the device's figures (a member on another host), or
// with a busy device while this host's CPUs were saturated (its queue may
// be writes the CPUs were too busy to complete), both are said.
func flatCeiling(steps []result.CapacityStep, broke *result.CapacityStep, lv capacityLevels) (result.Cause, string) {
	sorted := slices.Clone(steps)
	slices.SortStableFunc(sorted, func(a, b result.CapacityStep) int { return cmp.Compare(a.Offered, b.Offered) })
	first := sorted[0]
	if len(sorted) < 2 || first.Offered >= broke.Offered || first.WALFsyncP99 > lv.walFast {
		return "", ""
	}
	// The writes that hit the ceiling: the device's, when every step
	// measured it (etcd's WAL fsyncs and its backend's commits share a
	// cap, and the commits take more of it on a larger database, so the
	// fsyncs alone may fall past the knee), else etcd's WAL fsyncs.
	writes := func(s result.CapacityStep) float64 { return s.WALFsyncs }
	if !slices.ContainsFunc(sorted, func(s result.CapacityStep) bool { return s.DeviceIOPS <= 0 }) {
		writes = func(s result.CapacityStep) float64 { return s.DeviceIOPS }
	}
	top, topAt, fsyncs := 0.0, 0.0, 0.0
	for _, s := range sorted {
		if writes(s) > top {
			top, topAt = writes(s), s.Offered
		}
		fsyncs = max(fsyncs, s.WALFsyncs)
	}
	// A step past the lowest rate is at the ceiling when its writes came
	// within flatGrowth of the most any step made, or when it was offered
	// more than that step yet wrote less, keeping most of the ceiling
	// (within flatGrowth twice): the ceiling held it, its queue grew and
	// its writes were fewer and larger (on a capped volume the device's
	// IOPS fell 12% from the knee to the step past it). Writes that fell
	// further collapsed rather than held; the lowest rate's step is the
	// fast one before the ceiling, never on it.
	inBand := func(s result.CapacityStep) bool {
		w := writes(s)
		return s.Offered > first.Offered && w > 0 && (w*lv.flatGrowth >= top || s.Offered > topAt && w*lv.flatGrowth*lv.flatGrowth >= top)
	}
	var band []result.CapacityStep
	for _, s := range sorted {
		if inBand(s) {
			band = append(band, s)
		}
	}
	if len(band) < 2 || !inBand(*broke) {
		if broke.Cause == result.CauseCPU {
			return "", ""
		}
		return offDevice(first, broke, lv)
	}
	lo, hi := band[0], band[len(band)-1]
	if hi.Offered < lo.Offered*lv.offeredRise {
		return "", ""
	}
	peakP99, devMin, devMax, util, await := 0.0, math.Inf(1), 0.0, 0.0, 0.0
	for _, s := range band {
		peakP99 = max(peakP99, s.WALFsyncP99)
		devMin, devMax = min(devMin, s.DeviceIOPS), max(devMax, s.DeviceIOPS)
		util, await = max(util, s.DeviceUtil), max(await, s.DeviceAwait)
	}
	device := devMin > 0
	if device && devMax > lo.DeviceIOPS*lv.flatGrowth {
		return "", "" // the device wrote more as the rate rose: no ceiling
	}
	if peakP99 < lv.walFast {
		return "", "" // the fsyncs' latency did not climb: no queue at a cap
	}
	what := fmt.Sprintf("etcd's WAL fsyncs held at ~%s/s", rate(fsyncs))
	if device {
		what = fmt.Sprintf("the volume delivered at most ~%s write IOPS (etcd's WAL fsyncs ~%s/s)", rate(devMax), rate(fsyncs))
	}
	ev := fmt.Sprintf("%s from %s to %s puts/s offered, while its fsync p99 rose from %s at %s puts/s to %s",
		what, rate(lo.Offered), rate(hi.Offered), p99Words(first.WALFsyncP99, first.WALFsyncBound), rate(first.Offered), units.Seconds(peakP99))
	deviceBusy := device && util >= lv.idleUtil
	memberCPU, hostBusy := cpuExplains(broke, lv)
	switch {
	case deviceBusy && broke.HostCPUBusy >= lv.busyHost:
		// This host's CPUs were saturated: the device's queue may be
		// writes they were too busy to complete (a loop device's worker,
		// a guest's completions) as much as a cap's. Both are said.
		ev += fmt.Sprintf("; the device was %.0f%% busy, its writes waiting %s on average, while this host's CPUs were %.0f%% busy",
			util*100, units.Seconds(await), broke.HostCPUBusy*100)
		if memberCPU {
			ev += " and the member waited for a CPU"
		}
		return result.CauseIOPSCapOrCPU, ev
	case deviceBusy:
		ev += fmt.Sprintf("; the device was %.0f%% busy, its writes waiting %s on average: they queued below this host, at the volume", util*100, units.Seconds(await))
		if memberCPU {
			ev += "; the member also waited for a CPU"
		}
	case memberCPU || hostBusy && device:
		// The member's own CPU wait was measured, or this host's CPUs
		// were busy while its device showed no queue: the CPU.
		return "", ""
	case hostBusy:
		ev += fmt.Sprintf("; this host's CPUs were %.0f%% busy", broke.HostCPUBusy*100)
		return result.CauseIOPSCapOrCPU, ev
	case device:
		ev += fmt.Sprintf("; the device was at most %.0f%% busy, its writes %s on average", util*100, units.Seconds(await))
	}
	if broke.HostCPUBusy >= lv.busyHost {
		ev += fmt.Sprintf("; this host's CPUs were %.0f%% busy, yet the member's own CPU did not explain its waits", broke.HostCPUBusy*100)
	}
	return result.CauseIOPSCap, ev
}

// offDevice names a write cap from the one step that broke, when the sweep
// saw its ceiling only there (a knee between two steps): etcd's WAL fsync
// p99 climbed past wal_fsync_fast (half its limit) from a fast one at the lowest rate and
// its fsyncs fell behind the offered rate (under it by more than
// fsyncs_flat_growth), while the device answered each write fast
// (device_fast_await) and was not busy (device_idle) and the CPU does not
// explain the waits (cpuExplains): the writes waited at a cap that neither the device nor a
// cgroup this host shows, as a cgroup's cap or a volume's throttle does.
func offDevice(first result.CapacityStep, broke *result.CapacityStep, lv capacityLevels) (result.Cause, string) {
	memberCPU, hostBusy := cpuExplains(broke, lv)
	if broke.DeviceIOPS <= 0 || broke.WALFsyncP99 < lv.walFast || broke.WALFsyncs*lv.flatGrowth > broke.Offered ||
		broke.DeviceAwait > lv.fastAwait || broke.DeviceUtil >= lv.idleUtil || memberCPU || hostBusy {
		return "", ""
	}
	return result.CauseIOPSCap, fmt.Sprintf("etcd's WAL fsync p99 rose from %s at %s puts/s to %s at %s, its fsyncs (%s/s) behind the rate offered, "+
		"while the device answered each write in %s, %.0f%% busy, and this host's CPUs were %.0f%% busy: the writes waited at a cap that neither the device nor this host shows",
		p99Words(first.WALFsyncP99, first.WALFsyncBound), rate(first.Offered), units.Seconds(broke.WALFsyncP99), rate(broke.Offered), rate(broke.WALFsyncs),
		units.Seconds(broke.DeviceAwait), broke.DeviceUtil*100, broke.HostCPUBusy*100)
}

// cpuExplains says whether the CPU may explain a step's waits: the
// verdict's rules named the member's CPU from its own process (memberCPU),
// or this host's CPUs were busy while those rules, unable to see the
// member's CPU wait, named neither it nor the disk (hostBusy). A member
// whose rules named its disk was measured waiting for no CPU.
func cpuExplains(st *result.CapacityStep, lv capacityLevels) (memberCPU, hostBusy bool) {
	return st.Cause == result.CauseCPU, st.Cause != result.CauseCPU && st.Cause != result.CauseDisk && st.HostCPUBusy >= lv.busyHost
}

// hostCause refines what the verdict's rules named at the knee with what
// a sweep sees that one load does not: a "disk" whose device answered fast,
// or was not measured (a cluster's member on another host), while etcd's
// WAL fsyncs held their limit (the wait was etcd's backend commit, its CPU
// as much as its disk) or this host's CPUs were busy: both are said, and nothing named
// while the host's CPUs, shared by etcd and the load generator, were
// saturated.
func hostCause(st *result.CapacityStep, lv capacityLevels) result.Cause {
	deviceFast := st.DeviceIOPS > 0 && st.DeviceAwait <= lv.fastAwait && st.DeviceUtil < lv.idleUtil
	switch {
	case st.Cause == result.CauseDisk && (deviceFast || st.DeviceIOPS == 0) && (st.WALFsyncP99 < lv.walLimit || st.HostCPUBusy >= lv.busyHost):
		return result.CauseDiskOrCPU
	case (st.Cause == result.CauseNone || st.Cause == result.CauseEtcd || st.Cause == "") && st.HostCPUBusy >= lv.busyHost:
		return result.CauseCPU
	}
	return st.Cause
}

// stepEvidence says what the step that broke measured.
func stepEvidence(st *result.CapacityStep) string {
	parts := []string{fmt.Sprintf("WAL fsync p99 %s, %s fsyncs/s", p99Words(st.WALFsyncP99, st.WALFsyncBound), rate(st.WALFsyncs))}
	if st.DeviceIOPS > 0 || st.DeviceUtil > 0 {
		parts = append(parts, fmt.Sprintf("device %s IOPS, %.0f%% busy, writes %s", rate(st.DeviceIOPS), st.DeviceUtil*100, units.Seconds(st.DeviceAwait)))
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
		case check.WALFsyncP99:
			ws = append(ws, "the WAL fsync p99"+verb+" ("+p99Words(st.WALFsyncP99, st.WALFsyncBound)+")")
		case check.BackendCommitP99:
			ws = append(ws, "the backend commit p99"+verb+" ("+p99Words(st.BackendCommitP99, st.BackendCommitBound)+")")
		case check.Throughput:
			ws = append(ws, fmt.Sprintf("the throughput%s (%s of %s puts/s)", verb, rate(st.Achieved), rate(st.Offered)))
		case check.RequestP99:
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

func p99Words(v float64, bound bool) string {
	if bound {
		return "<= 1ms"
	}
	return units.Seconds(v)
}

// rate formats a rate with thousands separators: 4,000.
func rate(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
