package judge

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// knee is what the cause rules of a sweep read: its steps, the step that
// broke (the lowest, a confirm step before a shorter one at its rate), and
// the levels the run set.
type knee struct {
	steps []result.CapacityStep
	broke *result.CapacityStep
	lv    diagnose.Levels
}

// A capacityRule names a write cap at the knee with its evidence, or
// names none (""); final says that the rules after it do not apply (a cap
// is ruled out).
type capacityRule struct {
	name string
	test func(k knee) (cause result.Cause, evidence string, final bool)
}

// capacityRules are the write-cap rules, in the order they are tried: the
// cap this host shows first (the member's cgroup, the volume's figures as
// the user stated them), then what etcd's behaviour across the steps shows
// of a cap neither shows.
var capacityRules = []capacityRule{
	{"cgroup_cap", cgroupCap},
	{"volume", volume},
	{"client_or_network", clientOrNetwork},
	{"flat_ceiling", flatCeiling},
	{"off_device", offDevice},
}

// kneeCause names what limited etcd at the knee, with its evidence and
// the rule that named it: the first write-cap rule that names one, else
// ("host") what the verdict's rules named at the step that broke, refined
// by what the sweep's steps show (hostCause).
func kneeCause(steps []result.CapacityStep, broke *result.CapacityStep, lv diagnose.Levels) (cause result.Cause, evidence, rule string) {
	k := knee{steps: steps, broke: broke, lv: lv}
	for _, r := range capacityRules {
		cause, ev, final := r.test(k)
		if cause != "" {
			return cause, ev, r.name
		}
		if final {
			break
		}
	}
	cause = hostCause(broke, lv)
	if cause == result.CauseDisk {
		if ev, ok := k.queuedBelow(); ok {
			return result.CauseDiskOrIOPSCap, ev, "queued_below"
		}
	}
	return cause, stepEvidence(broke), "host"
}

// queuedBelow says (with its evidence) whether the device's writes, fast
// at the sweep's lowest rate (device_fast_await), took device_queued_growth
// times as long at the step that broke: they queued as the rate rose, at
// the device or below it (a cap on the volume, or the storage behind it),
// where a disk bound by its latency answers each write in about the same
// time at any rate.
func (k knee) queuedBelow() (string, bool) {
	b, lv := k.broke, k.lv
	first := slices.MinFunc(k.steps, func(a, b result.CapacityStep) int { return cmp.Compare(a.Offered, b.Offered) })
	if first.Offered >= b.Offered || first.DeviceIOPS <= 0 || b.DeviceIOPS <= 0 || first.DeviceAwait <= 0 ||
		first.DeviceAwait > lv.FastAwait || b.DeviceAwait < lv.Queued*first.DeviceAwait {
		return "", false
	}
	return fmt.Sprintf("the device's writes took %s on average at %s puts/s and %s at %s (%s IOPS, %.0f%% busy): they queued as the rate rose, at the device or below it, "+
		"where a disk bound by its latency answers each write in about the same time at any rate; %s",
		units.Seconds(first.DeviceAwait), units.Thousands(first.Offered), units.Seconds(b.DeviceAwait), units.Thousands(b.Offered),
		units.Thousands(b.DeviceIOPS), b.DeviceUtil*100, stepEvidence(b)), true
}

// deviceIdle says whether the device under the step that broke was
// neither busy (under device_idle) nor slow per write (under
// device_idle_await): it cannot explain etcd's waits.
func (k knee) deviceIdle() bool {
	b := k.broke
	return b.DeviceIOPS > 0 && b.DeviceAwait < k.lv.IdleAwait && b.DeviceUtil < k.lv.DeviceIdle
}

// cgroupCap: the cap is seen on this host, the member's cgroup. It is what
// etcd ran into when the step that broke used it to iops_cap_used,
// whatever else was busy (a cap is a hard ceiling; a busy host's CPU is
// said beside it), or when etcd waited above an idle device (deviceIdle)
// and nothing else was named: bbolt's commits write in bursts, which a cap
// delays even when the mean rate is under it.
func cgroupCap(k knee) (result.Cause, string, bool) {
	b, lv := k.broke, k.lv
	otherNamed := b.Cause == result.CauseCPU || b.Cause == result.CauseClient || b.Cause == result.CauseNetwork
	if !lv.AtCap(b.IOPSCap, b.CappedWriteIOPS) && (b.IOPSCap <= 0 || !k.deviceIdle() || otherNamed) {
		return "", "", false
	}
	ev := fmt.Sprintf("the member's cgroup caps its writes on %s at %s IOPS, and it wrote %s/s during the step",
		b.CapDevice, units.Thousands(b.IOPSCap), units.Thousands(b.CappedWriteIOPS))
	if k.deviceIdle() {
		ev += fmt.Sprintf(", while the device answered each write in %s on average, %.0f%% busy", units.Seconds(b.DeviceAwait), b.DeviceUtil*100)
	}
	if b.HostCPUBusy >= lv.HostCPUBusy {
		ev += fmt.Sprintf("; this host's CPUs were also %.0f%% busy", b.HostCPUBusy*100)
	}
	return result.CauseIOPSCap, ev, false
}

// volume: the device wrote iops_cap_used of the volume's provisioned
// IOPS or throughput as the user stated them (--volume-iops,
// --volume-mbps).
func volume(k knee) (result.Cause, string, bool) {
	for _, f := range k.lv.Volume(k.broke.DeviceIOPS, k.broke.DeviceWriteBytes) {
		if !f.AtCap {
			continue
		}
		did, provisioned := units.Thousands(f.Did)+" IOPS", units.Thousands(f.Provisioned)
		if f.Unit == "B/s" {
			did, provisioned = units.Bytes(f.Did)+"/s", units.Bytes(f.Provisioned)+"/s"
		}
		return result.CauseIOPSCap, fmt.Sprintf("the device wrote %s during the step, %.0f%% of the %s provisioned (%s)", did, 100*f.Used, provisioned, f.Flag), false
	}
	return "", "", false
}

// clientOrNetwork: the verdict's rules named the load generator or the
// network at the step that broke: etcd's writes say nothing of a cap.
func clientOrNetwork(k knee) (result.Cause, string, bool) {
	return "", "", k.broke.Cause == result.CauseClient || k.broke.Cause == result.CauseNetwork
}

// flatCeiling reports a cap seen from etcd's behaviour alone, wherever it
// sits (a cloud volume's below the guest, or a cgroup's the host hides):
// a fast WAL fsync at the sweep's lowest rate, then the writes (the
// device's write IOPS when every step measured them, else etcd's WAL
// fsyncs per second) flat across the steps at and past the knee (the step
// that broke among them): within fsyncs_flat_growth of their highest, or
// fewer at a higher rate offered than the step that wrote the most, while
// the offered rate rose by at least offered_rise and the fsync p99 climbed
// past wal_fsync_fast (half its limit). The knee's middle step only adds a
// point to the band: which side of the knee it falls on does not decide
// the cause. A latency-bound disk holds a flat ceiling too, but its fsync
// p99 does not climb with the rate. Where the CPU may explain the waits
// (cpuExplains), etcd batching its writes for want of a CPU looks the
// same: over a device of this host that was not busy (and no cgroup cap
// on the member), that is the CPU, not a cap; without the device's figures
// (a member on another host), or with a busy device while this host's CPUs
// were saturated (its queue may be writes the CPUs were too busy to
// complete), both are said. With too few steps in the band, the rule
// leaves the knee to offDevice (final when the CPU was named).
func flatCeiling(k knee) (result.Cause, string, bool) {
	broke, lv := k.broke, k.lv
	sorted := slices.Clone(k.steps)
	slices.SortStableFunc(sorted, func(a, b result.CapacityStep) int { return cmp.Compare(a.Offered, b.Offered) })
	first := sorted[0]
	// Below the ceiling the writes were fast: etcd's WAL fsync p99 at the
	// lowest rate, or, where the device was measured, each of its writes
	// (over a real disk etcd's fsync tail may pass wal_fsync_fast while
	// the device answers in a fraction of a millisecond).
	measured := !slices.ContainsFunc(sorted, func(s result.CapacityStep) bool { return s.DeviceIOPS <= 0 })
	fastBelow := measured && first.DeviceAwait > 0 && first.DeviceAwait <= lv.FastAwait
	if len(sorted) < 2 || first.Offered >= broke.Offered || first.WALFsyncP99 > lv.WALFast && !fastBelow {
		return "", "", true
	}
	band, inBand := ceiling(sorted, measured, lv)
	fsyncs := 0.0
	for _, s := range sorted {
		fsyncs = max(fsyncs, s.WALFsyncs)
	}
	if len(band) < 2 || !inBand(*broke) {
		return "", "", broke.Cause == result.CauseCPU
	}
	lo, hi := band[0], band[len(band)-1]
	if hi.Offered < lo.Offered*lv.OfferedRise {
		return "", "", true
	}
	peakP99, devMin, devMax, util, await := 0.0, math.Inf(1), 0.0, 0.0, 0.0
	for _, s := range band {
		peakP99 = max(peakP99, s.WALFsyncP99)
		devMin, devMax = min(devMin, s.DeviceIOPS), max(devMax, s.DeviceIOPS)
		util, await = max(util, s.DeviceUtil), max(await, s.DeviceAwait)
	}
	device := devMin > 0
	if device && !lv.Flat(lo.DeviceIOPS, devMax) {
		return "", "", true // the device wrote more as the rate rose: no ceiling
	}
	if peakP99 < lv.WALFast {
		return "", "", true // the fsyncs' latency did not climb: no queue at a cap
	}
	if fastBelow && await <= lv.FastAwait {
		// Each write as fast at the ceiling as below it (within
		// device_fast_await): etcd's serial writes bound by the disk's
		// latency, not writes queued at a cap.
		return "", "", true
	}
	what := fmt.Sprintf("etcd's WAL fsyncs held at ~%s/s", units.Thousands(fsyncs))
	if device {
		what = fmt.Sprintf("the volume delivered at most ~%s write IOPS (etcd's WAL fsyncs ~%s/s)", units.Thousands(devMax), units.Thousands(fsyncs))
	}
	ev := fmt.Sprintf("%s from %s to %s puts/s offered, while its fsync p99 rose from %s at %s puts/s to %s",
		what, units.Thousands(lo.Offered), units.Thousands(hi.Offered), units.P99(first.WALFsyncP99, first.WALFsyncBound), units.Thousands(first.Offered), units.Seconds(peakP99))
	deviceBusy := device && util >= lv.DeviceIdle
	memberCPU, hostBusy := cpuExplains(broke, lv)
	switch {
	case deviceBusy && broke.HostCPUBusy >= lv.HostCPUBusy:
		// This host's CPUs were saturated: the device's queue may be
		// writes they were too busy to complete (a loop device's worker,
		// a guest's completions) as much as a cap's. Both are said.
		ev += fmt.Sprintf("; the device was %.0f%% busy, its writes waiting %s on average, while this host's CPUs were %.0f%% busy",
			util*100, units.Seconds(await), broke.HostCPUBusy*100)
		if memberCPU {
			ev += " and the member waited for a CPU"
		}
		return result.CauseIOPSCapOrCPU, ev, true
	case deviceBusy:
		ev += fmt.Sprintf("; the device was %.0f%% busy, its writes waiting %s on average: they queued below this host, at the volume", util*100, units.Seconds(await))
		if memberCPU {
			ev += "; the member also waited for a CPU"
		}
	case memberCPU || hostBusy && device:
		// The member's own CPU wait was measured, or this host's CPUs
		// were busy while its device showed no queue: the CPU.
		return "", "", true
	case hostBusy:
		ev += fmt.Sprintf("; this host's CPUs were %.0f%% busy", broke.HostCPUBusy*100)
		return result.CauseIOPSCapOrCPU, ev, true
	case device:
		ev += fmt.Sprintf("; the device was at most %.0f%% busy, its writes %s on average", util*100, units.Seconds(await))
	}
	if broke.HostCPUBusy >= lv.HostCPUBusy {
		ev += fmt.Sprintf("; this host's CPUs were %.0f%% busy, yet the member's own CPU did not explain its waits", broke.HostCPUBusy*100)
	}
	return result.CauseIOPSCap, ev, true
}

// ceiling is the steps of sorted (by the offered rate) at a ceiling of
// the writes, and the test of a step for it. The writes that hit a
// ceiling are the device's, when every step measured it (measured: etcd's
// WAL fsyncs and its backend's commits share a cap, and the commits take
// more of it on a larger database, so the fsyncs alone may fall past the
// knee), else etcd's WAL fsyncs. A step past the lowest rate is at the
// ceiling when its writes came within fsyncs_flat_growth of the most any
// step made, or when it was offered more than that step yet wrote less,
// keeping most of the ceiling (within fsyncs_flat_growth twice): the
// ceiling held it, its queue grew and its writes were fewer and larger.
// Writes that fell further collapsed rather than held; the lowest rate's
// step is the fast one before the ceiling, never on it.
func ceiling(sorted []result.CapacityStep, measured bool, lv diagnose.Levels) ([]result.CapacityStep, func(result.CapacityStep) bool) {
	writes := func(s result.CapacityStep) float64 { return s.WALFsyncs }
	if measured {
		writes = func(s result.CapacityStep) float64 { return s.DeviceIOPS }
	}
	top, topAt := 0.0, 0.0
	for _, s := range sorted {
		if writes(s) > top {
			top, topAt = writes(s), s.Offered
		}
	}
	first := sorted[0]
	inBand := func(s result.CapacityStep) bool {
		w := writes(s)
		return s.Offered > first.Offered && w > 0 && (lv.Flat(w, top) || s.Offered > topAt && lv.Flat(w*lv.FlatGrowth, top))
	}
	var band []result.CapacityStep
	for _, s := range sorted {
		if inBand(s) {
			band = append(band, s)
		}
	}
	return band, inBand
}

// offDevice names a write cap from the one step that broke, when the sweep
// saw its ceiling only there (a knee between two steps): etcd's WAL fsync
// p99 climbed past its limit (a cap delays the fsyncs themselves: a backend
// commit that broke alone, the fsyncs within their limit, says nothing of
// one) from a fast one at the lowest rate and its fsyncs fell behind the
// offered rate
// (CapacityStep.FsyncsBehind), while the device answered each write fast
// (device_fast_await) and was not busy (device_idle), etcd's fsync p99
// device_fast_factor times its mean write time or more, and the CPU does
// not explain the waits (cpuExplains): the writes waited at a cap that
// neither the device nor a cgroup this host shows, as a cgroup's cap or a
// volume's throttle does. A disk whose writes take a millisecond, with
// etcd's fsync p99 a few times that, is etcd's serial fsyncs bound by the
// disk's latency, fsyncs falling behind the rate as etcd batches more puts
// into each: not a cap.
func offDevice(k knee) (result.Cause, string, bool) {
	broke, lv := k.broke, k.lv
	first := slices.MinFunc(k.steps, func(a, b result.CapacityStep) int { return cmp.Compare(a.Offered, b.Offered) })
	memberCPU, hostBusy := cpuExplains(broke, lv)
	if broke.DeviceIOPS <= 0 || broke.WALFsyncP99 < lv.WALLimit || !broke.FsyncsBehind(lv.FlatGrowth) ||
		broke.DeviceAwait > lv.FastAwait || broke.DeviceUtil >= lv.DeviceIdle || memberCPU || hostBusy ||
		broke.WALFsyncP99 < lv.FastFactor*broke.DeviceAwait || wroteMore(k.steps, broke, lv) {
		return "", "", true
	}
	return result.CauseIOPSCap, fmt.Sprintf("etcd's WAL fsync p99 rose from %s at %s puts/s to %s at %s, its fsyncs (%s/s) behind the rate offered, "+
		"while the device answered each write in %s, %.0f%% busy, and this host's CPUs were %.0f%% busy: the writes waited at a cap that neither the device nor this host shows",
		units.P99(first.WALFsyncP99, first.WALFsyncBound), units.Thousands(first.Offered), units.Seconds(broke.WALFsyncP99), units.Thousands(broke.Offered), units.Thousands(broke.WALFsyncs),
		units.Seconds(broke.DeviceAwait), broke.DeviceUtil*100, broke.HostCPUBusy*100), true
}

// wroteMore says whether a step of the sweep had its device write more
// than broke's did, past fsyncs_flat_growth: a cap is a ceiling, and the
// storage delivered more than broke's writes elsewhere in the same sweep
// (on an uncapped loop device, a step broke at 4,266 IOPS where holds
// after it wrote 6,689-7,684): broke's waits were not at a cap.
func wroteMore(steps []result.CapacityStep, broke *result.CapacityStep, lv diagnose.Levels) bool {
	return slices.ContainsFunc(steps, func(s result.CapacityStep) bool {
		return s.DeviceIOPS > broke.DeviceIOPS && !lv.Flat(broke.DeviceIOPS, s.DeviceIOPS)
	})
}

// cpuExplains says whether the CPU may explain a step's waits: the
// verdict's rules named the member's CPU from its own process (memberCPU),
// or this host's CPUs were busy while those rules, unable to see the
// member's CPU wait, named neither it nor the disk (hostBusy). A member
// whose rules named its disk (or the storage below its device) was
// measured waiting for no CPU, unless they named the storage below the
// device from a commit while etcd did CPU work of its own (commitOnCPU).
func cpuExplains(st *result.CapacityStep, lv diagnose.Levels) (memberCPU, hostBusy bool) {
	disk := st.Cause == result.CauseDisk || st.Cause == result.CauseDiskOrIOPSCap && !commitOnCPU(st, lv)
	return st.Cause == result.CauseCPU, st.Cause != result.CauseCPU && !disk && st.HostCPUBusy >= lv.HostCPUBusy
}

// commitOnCPU says whether a step's rules named the storage below the
// device from a backend commit that broke alone, etcd's WAL fsyncs within
// their limit, over a fast device that was not busy, while etcd did CPU
// work of its own (etcd_cpu_busy of a CPU or more): a commit writes its
// pages and fsyncs them after CPU work of its own; the CPU explains the
// commit's wait as much as the disk does. A cap below the device that
// delays the commits alone leaves etcd at a fraction of that. Not by how
// busy this host's CPUs were: at the knee of a 2-CPU host they sat at
// host_cpu_busy, and steps alike were named one way at 79% and the other
// at 81%.
func commitOnCPU(st *result.CapacityStep, lv diagnose.Levels) bool {
	return st.Cause == result.CauseDiskOrIOPSCap && deviceFast(st, lv) && st.WALFsyncP99 < lv.WALLimit &&
		st.EtcdCPU >= lv.EtcdCPUBusy
}

// deviceFast says whether the device under a step answered each write
// fast (device_fast_await) and was not busy (device_idle).
func deviceFast(st *result.CapacityStep, lv diagnose.Levels) bool {
	return st.DeviceIOPS > 0 && st.DeviceAwait <= lv.FastAwait && st.DeviceUtil < lv.DeviceIdle
}

// hostCause refines what the verdict's rules named at the knee with what
// a sweep sees that one load does not: a "disk" whose device answered fast,
// or was not measured (a cluster's member on another host), while etcd's
// WAL fsyncs held their limit (the wait was etcd's backend commit, its CPU
// as much as its disk) or this host's CPUs were busy: both are said; the
// same for "the storage below the device" named from a backend commit
// while etcd did CPU work of its own (commitOnCPU); and the CPU where
// nothing was named while the host's CPUs, shared by etcd and the load
// generator, were saturated.
func hostCause(st *result.CapacityStep, lv diagnose.Levels) result.Cause {
	switch {
	case st.Cause == result.CauseDisk && (deviceFast(st, lv) || st.DeviceIOPS == 0) && (st.WALFsyncP99 < lv.WALLimit || st.HostCPUBusy >= lv.HostCPUBusy):
		return result.CauseDiskOrCPU
	case commitOnCPU(st, lv):
		return result.CauseDiskOrCPU
	case (st.Cause == result.CauseNone || st.Cause == result.CauseEtcd || st.Cause == "") && st.HostCPUBusy >= lv.HostCPUBusy:
		return result.CauseCPU
	}
	return st.Cause
}
