package judge

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
)

// The cause at a sweep's knee, from recorded steps: the volume's IOPS cap
// (seen in the member's cgroup, or as a flat fsync ceiling with a fast
// fsync at a low rate) is told from a slow disk, from the CPU, and from no
// limit reached.
func TestCapacityCause(t *testing.T) {
	held := func(offered, wal, fsyncs float64) result.CapacityStep {
		return result.CapacityStep{Offered: offered, Achieved: offered, WALFsyncP99: wal, WALFsyncs: fsyncs}
	}
	broke := func(offered, wal, fsyncs float64, cause result.Cause, ids ...string) result.CapacityStep {
		st := held(offered, wal, fsyncs)
		st.Broke, st.Cause = ids, cause
		return st
	}
	// A member capped at 2,500 write IOPS (blkio), as measured: its
	// backend commits broke first, the device itself was fast.
	capped := []result.CapacityStep{held(150, 0.001, 150), held(1000, 0.0016, 976), broke(2000, 0.0077, 1344, "disk", limits.BackendCommitP99), broke(1400, 0.0045, 1127, "disk", limits.BackendCommitP99)}
	for i := 1; i < len(capped); i++ {
		capped[i].IOPSCap, capped[i].CappedWriteIOPS, capped[i].CapDevice = 2500, 2290, "vda"
		capped[i].DeviceIOPS, capped[i].DeviceAwait, capped[i].DeviceUtil = 2100, 0.0003, 0.3
	}
	capped[2].BackendCommitP99, capped[3].BackendCommitP99 = 0.116, 0.0573
	// The same cap that the step barely used, over a fast device: still
	// the cap (etcd waited above the device).
	cappedIdle := slices.Clone(capped)
	cappedIdle[3].CappedWriteIOPS = 500
	// The cap used (1,231 of 1,500) while a busy host's CPU was named for
	// the step (measured so on a loaded machine): still the cap, the CPU
	// said beside it.
	cappedBusy := []result.CapacityStep{held(150, 0.0064, 150), broke(1000, 0.0258, 477, "cpu", limits.RequestP99, limits.WALFsyncP99, limits.BackendCommitP99), held(390, 0.0038, 382)}
	cappedBusy[1].IOPSCap, cappedBusy[1].CappedWriteIOPS, cappedBusy[1].CapDevice, cappedBusy[1].HostCPUBusy = 1500, 1231, "vda", 0.93
	cappedBusy[1].DeviceIOPS, cappedBusy[1].DeviceAwait, cappedBusy[1].DeviceUtil = 1136, 0.000203, 0.19
	// A cap barely used, over a fast device, while the CPU was named: the
	// CPU.
	cpuUnderCap := slices.Clone(cappedBusy)
	cpuUnderCap[1].CappedWriteIOPS = 300
	// The verdict's own load broke under the cap (bbolt's bursts), the
	// cap's mean use a third, the device 12% busy answering in 2.47ms (as
	// measured in a CI run): the cap, not a slow disk.
	cappedFirst := []result.CapacityStep{broke(150, 0.0048, 141, "disk", limits.RequestP99, limits.BackendCommitP99)}
	cappedFirst[0].IOPSCap, cappedFirst[0].CappedWriteIOPS, cappedFirst[0].CapDevice = 1500, 493, "vda"
	cappedFirst[0].DeviceIOPS, cappedFirst[0].DeviceAwait, cappedFirst[0].DeviceUtil = 493, 0.00247, 0.12
	// The same with a device slow per write (12ms): the disk.
	slowUnderCap := slices.Clone(cappedFirst)
	slowUnderCap[0].DeviceAwait = 0.012
	// A cloud volume's cap, not seen from the host: etcd's fsyncs flat at
	// ~700/s from 1,000 to 2,000 puts/s offered while its p99 climbed,
	// after a fast fsync at 150/s.
	cloud := []result.CapacityStep{held(150, 0.0008, 150), held(1000, 0.002, 700), broke(2000, 0.014, 720, "disk", limits.WALFsyncP99)}
	// A slow disk: slow from the first step.
	slow := []result.CapacityStep{broke(150, 0.016, 150, "disk", limits.WALFsyncP99)}
	// The CPU: flat fsyncs too (etcd batches them), but the step names the CPU.
	cpu := []result.CapacityStep{held(150, 0.0008, 150), held(1000, 0.002, 700), broke(2000, 0.03, 710, "cpu", limits.WALFsyncP99, limits.RequestP99)}
	// A slow device that climbs with the rate: fsyncs grow with it, no cap.
	disk := []result.CapacityStep{held(150, 0.002, 150), held(1000, 0.004, 900), broke(2000, 0.012, 1700, "disk", limits.WALFsyncP99)}
	// The backend commit broke while the device answered in 108µs and the
	// WAL fsyncs held: the disk or the CPU, both said.
	commit := []result.CapacityStep{held(150, 0.001, 150), broke(2800, 0.0027, 1728, "disk", limits.BackendCommitP99)}
	commit[1].DeviceIOPS, commit[1].DeviceAwait, commit[1].DeviceUtil = 3781, 0.000108, 0.37
	// Nothing named while the host's CPUs were saturated: the CPU.
	busy := []result.CapacityStep{held(150, 0.001, 150), broke(5700, 0.001, 2542, "none", limits.RequestP99)}
	busy[1].HostCPUBusy = 0.97
	none := []result.CapacityStep{held(150, 0.0008, 150), held(1000, 0.002, 900), held(15000, 0.004, 3000)}
	for _, c := range []struct {
		name   string
		steps  []result.CapacityStep
		puts   float64
		cause  result.Cause
		broke  []string
		answer string
	}{
		{"cgroup cap", capped, 1000, result.CauseIOPSCap, []string{limits.BackendCommitP99}, "carries etcd up to 1,000 puts/s of 1.0 KiB within its limits; at 1,400 the backend commit p99 broke (57.3ms): the volume was at its IOPS limit"},
		{"cgroup cap, device fast", cappedIdle, 1000, result.CauseIOPSCap, []string{limits.BackendCommitP99}, "the device answered each write in 300µs on average"},
		{"cgroup cap, host busy", cappedBusy, 390, result.CauseIOPSCap, []string{limits.RequestP99, limits.WALFsyncP99, limits.BackendCommitP99}, "this host's CPUs were also 93% busy"},
		{"CPU under a cap barely used", cpuUnderCap, 390, "cpu", []string{limits.RequestP99, limits.WALFsyncP99, limits.BackendCommitP99}, "etcd's CPU limits it there"},
		{"cgroup cap, first step", cappedFirst, 0, result.CauseIOPSCap, []string{limits.RequestP99, limits.BackendCommitP99}, "does not carry etcd at 150 puts/s"},
		{"slow device under a cap", slowUnderCap, 0, "disk", []string{limits.RequestP99, limits.BackendCommitP99}, "the disk's latency limits etcd there"},
		{"cloud cap", cloud, 1000, result.CauseIOPSCap, []string{limits.WALFsyncP99}, "etcd's WAL fsyncs held at ~720/s from 1,000 to 2,000 puts/s offered"},
		{"slow disk", slow, 0, "disk", []string{limits.WALFsyncP99}, "does not carry etcd at 150 puts/s of 1.0 KiB: the WAL fsync p99 broke (16ms); the disk's latency limits etcd there"},
		{"cpu", cpu, 1000, "cpu", []string{limits.WALFsyncP99, limits.RequestP99}, "etcd's CPU limits it there"},
		{"disk climbing", disk, 1000, "disk", []string{limits.WALFsyncP99}, "the disk's latency limits etcd there"},
		{"commit, device fast", commit, 150, "disk_or_cpu", []string{limits.BackendCommitP99}, "its disk or its CPU limits it there"},
		{"host CPU saturated", busy, 150, "cpu", []string{limits.RequestP99}, "this host's CPUs 97% busy"},
		{"no knee", none, 15000, "none", nil, "carries etcd up to 15,000 puts/s of 1.0 KiB within its limits, the most this sweep offered"},
	} {
		cap := &result.Capacity{ValueSize: 1024, Steps: c.steps}
		checkRule(t, c.name, cap)
		Capacity(cap, limits.Table)
		if cap.PutsPerS != c.puts || cap.Cause != c.cause || !slices.Equal(cap.LimitedBy, c.broke) || !strings.Contains(cap.Answer, c.answer) {
			t.Errorf("%s: %g puts/s, cause %q, limited by %v, answer %q; want %g, %q, %v, %q", c.name, cap.PutsPerS, cap.Cause, cap.LimitedBy, cap.Answer, c.puts, c.cause, c.broke, c.answer)
		}
	}
}

// The host's CPUs explain a step by host_cpu_busy as the run set it.
func TestCapacityHostBusyLevel(t *testing.T) {
	steps := []result.CapacityStep{{Offered: 150, Achieved: 150, WALFsyncP99: 0.001, WALFsyncs: 150},
		{Offered: 5700, Achieved: 5700, WALFsyncP99: 0.001, WALFsyncs: 2542, Broke: []string{limits.RequestP99}, Cause: result.CauseNone, HostCPUBusy: 0.97}}
	criteria, err := limits.Override(limits.Table, []string{limits.HostCPUBusy + "=99%"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		criteria []limits.Criterion
		cause    result.Cause
	}{{limits.Table, result.CauseCPU}, {criteria, result.CauseNone}} {
		cap := &result.Capacity{ValueSize: 1024, Steps: slices.Clone(steps)}
		Capacity(cap, c.criteria)
		if cap.Cause != c.cause {
			t.Errorf("host 97%% busy, host_cpu_busy %v: cause %q, want %q", limits.LimitOf(c.criteria, limits.HostCPUBusy), cap.Cause, c.cause)
		}
	}
}

// A sweep's cause follows each of its levels as the run set them with
// --limit: the share of a cgroup cap used, the device's fast write time
// and idle utilisation, the growth under which fsyncs/s are flat and the
// offered rate's rise they are flat across; the device's write times and
// the fast WAL fsync p99 follow the WAL fsync limit too.
func TestCapacityCauseLevels(t *testing.T) {
	held := func(offered, wal, fsyncs float64) result.CapacityStep {
		return result.CapacityStep{Offered: offered, Achieved: offered, WALFsyncP99: wal, WALFsyncs: fsyncs}
	}
	// A cap used to 82% (1,231 of 1,500 IOPS) while the CPU was named.
	capped := []result.CapacityStep{held(150, 0.0064, 150), held(1000, 0.0258, 477), held(390, 0.0038, 382)}
	capped[1].Broke, capped[1].Cause = []string{limits.WALFsyncP99}, result.CauseCPU
	capped[1].IOPSCap, capped[1].CappedWriteIOPS, capped[1].CapDevice = 1500, 1231, "vda"
	capped[1].DeviceIOPS, capped[1].DeviceAwait, capped[1].DeviceUtil = 1136, 0.000203, 0.19
	// Backend commits broke while the device answered in 108µs, 37% busy.
	commit := []result.CapacityStep{held(150, 0.001, 150), held(2800, 0.0027, 1728)}
	commit[1].Broke, commit[1].Cause = []string{limits.BackendCommitP99}, result.CauseDisk
	commit[1].DeviceIOPS, commit[1].DeviceAwait, commit[1].DeviceUtil = 3781, 0.000108, 0.37
	// etcd's fsyncs/s grew 3% (700 to 720) while the offered rate doubled.
	cloud := []result.CapacityStep{held(150, 0.0008, 150), held(1000, 0.002, 700), held(2000, 0.014, 720)}
	cloud[2].Broke, cloud[2].Cause = []string{limits.WALFsyncP99}, result.CauseDisk
	// Backend commits broke while the device answered in 3ms.
	slower := slices.Clone(commit)
	slower[1].DeviceAwait = 0.003
	// A cgroup cap at 1,500 IOPS used to 27% below a device answering in
	// 3ms, 20% busy.
	capIdle := []result.CapacityStep{held(150, 0.001, 150), held(1000, 0.02, 400)}
	capIdle[1].Broke, capIdle[1].Cause = []string{limits.WALFsyncP99}, result.CauseDisk
	capIdle[1].IOPSCap, capIdle[1].CappedWriteIOPS, capIdle[1].CapDevice = 1500, 400, "vda"
	capIdle[1].DeviceIOPS, capIdle[1].DeviceAwait, capIdle[1].DeviceUtil = 400, 0.003, 0.2
	for _, c := range []struct {
		name         string
		steps        []result.CapacityStep
		limit        string
		table, moved result.Cause
	}{
		{"cap used", capped, limits.IOPSCapUsed + "=99%", result.CauseIOPSCap, result.CauseCPU},
		{"device fast", commit, limits.DeviceFastAwait + "=100us", result.CauseDiskOrCPU, result.CauseDisk},
		{"device idle", commit, limits.DeviceIdle + "=30%", result.CauseDiskOrCPU, result.CauseDisk},
		{"fsyncs flat", cloud, limits.FsyncsFlatGrowth + "=1.02", result.CauseIOPSCap, result.CauseDisk},
		{"offered rise", cloud, limits.OfferedRise + "=2.5", result.CauseIOPSCap, result.CauseDisk},
		{"device fast, from the WAL limit", slower, limits.WALFsyncP99 + "=20ms", result.CauseDisk, result.CauseDiskOrCPU},
		{"device idle below a cap", capIdle, limits.DeviceIdleAwait + "=2ms", result.CauseIOPSCap, result.CauseDisk},
		{"device idle below a cap, from the WAL limit", capIdle, limits.WALFsyncP99 + "=4ms", result.CauseIOPSCap, result.CauseDisk},
		{"WAL fsync fast", cloud, limits.WALFsyncFast + "=500us", result.CauseIOPSCap, result.CauseDisk},
		{"WAL fsync fast, from the WAL limit", cloud, limits.WALFsyncP99 + "=30ms", result.CauseIOPSCap, result.CauseDiskOrCPU},
	} {
		criteria, err := limits.Override(limits.Table, []string{c.limit})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range []struct {
			criteria []limits.Criterion
			want     result.Cause
		}{{limits.Table, c.table}, {criteria, c.moved}} {
			cap := &result.Capacity{ValueSize: 1024, Steps: slices.Clone(c.steps)}
			Capacity(cap, j.criteria)
			if cap.Cause != j.want {
				t.Errorf("%s, %d criteria changed (--limit %s): cause %q, want %q", c.name, len(limits.Changed(j.criteria)), c.limit, cap.Cause, j.want)
			}
		}
	}
}

// A sweep judged against the cluster's peak demand: its headroom in the
// answer and as a check, failing under 1x and warning under 2x.
func TestCapacityHeadroom(t *testing.T) {
	steps := []result.CapacityStep{{Offered: 150, Achieved: 150}, {Offered: 1000, Achieved: 1000}, {Offered: 2000, Achieved: 1500, Broke: []string{limits.Throughput}, Cause: "disk"}}
	for demand, want := range map[float64]result.Status{400: result.StatusPass, 700: result.StatusWarn, 1500: result.StatusFail} {
		r := &result.Result{Capacity: &result.Capacity{ValueSize: 1024, Steps: steps, Demand: demand, DemandFrom: "--demand"}}
		Capacity(r.Capacity, limits.Table)
		capacityChecks(r, limits.Table)
		if r.Capacity.Headroom != 1000/demand || len(r.Checks) != 1 || r.Checks[0].Status != want || !strings.Contains(r.Capacity.Answer, "(--demand):") {
			t.Errorf("demand %g: headroom %g, checks %+v, answer %q; want %g and %s", demand, r.Capacity.Headroom, r.Checks, r.Capacity.Answer, 1000/demand, want)
		}
	}
}

// A cap below the guest (a volume whose writes are capped under the file
// system, as a cloud volume's are; no cgroup shows it) is named from
// etcd's behaviour at any knee, whichever side of it the middle step
// falls; a latency-bound disk and etcd batching for want of CPU are not
// taken for it; where a busy host's CPU could explain the ceiling, both
// are said.
func TestCapacityFlatCeiling(t *testing.T) {
	step := func(offered, wal, fsyncs, devIOPS, util float64, ids ...string) result.CapacityStep {
		st := result.CapacityStep{Offered: offered, Achieved: offered, WALFsyncP99: wal, WALFsyncs: fsyncs, DeviceIOPS: devIOPS, DeviceUtil: util, DeviceAwait: 0.004}
		if len(ids) > 0 {
			st.Broke, st.Cause = ids, result.CauseDisk
		}
		return st
	}
	// Capped at 1,500 IOPS below the file system (as measured): fsyncs
	// 980/s and 992/s from 1,000 to 2,000 puts/s, the device 2,256 and
	// 2,401 IOPS; the knee above 1,000 puts/s, its middle step held.
	high := []result.CapacityStep{step(150, 0.0026, 150, 420, 0.2), step(1000, 0.004, 980, 2256, 0.93),
		step(2000, 0.009, 992, 2401, 0.97, limits.BackendCommitP99), step(1400, 0.006, 990, 2350, 0.95)}
	// The same volume in 10s steps, as measured: the device (the volume's
	// loop device) at most 48% busy; fsyncs 996, 1,089 and 1,071/s.
	high10 := []result.CapacityStep{step(150, 0.00169, 150, 404, 0.06), step(1000, 0.001, 996, 2374, 0.01),
		step(2000, 0.00703, 1071, 2576, 0.48, limits.BackendCommitP99), step(1400, 0.00247, 1089, 2595, 0.35)}
	high10[2].HostCPUBusy = 0.66
	// The same volume in 10s steps, its knee between 390 (held, fsyncs at
	// the offered rate) and 1,000 (777 fsyncs/s, p99 19.1ms, the device
	// answering in 168µs, 29% busy), as measured: the ceiling shows in one
	// step only.
	oneStep := []result.CapacityStep{step(150, 0.001, 150, 506, 0.01), step(1000, 0.0191, 777, 2010, 0.29, limits.WALFsyncP99, limits.BackendCommitP99), step(390, 0.001, 390, 1136, 0.05)}
	oneStep[1].DeviceAwait, oneStep[1].HostCPUBusy = 0.000168, 0.39
	// The same with the host's CPUs busy: not the cap.
	oneStepBusy := slices.Clone(oneStep)
	oneStepBusy[1].HostCPUBusy, oneStepBusy[1].Cause = 0.9, result.CauseNone
	// The host's CPUs busy, but the member's own rules named its disk (it
	// waited for no CPU): the cap.
	oneStepDisk := slices.Clone(oneStep)
	oneStepDisk[1].HostCPUBusy = 0.9
	// A ceiling between the sweep's steps (1,000 under it): seen at the
	// knee's middle step and the break only, 1.43x apart.
	between := []result.CapacityStep{step(150, 0.001, 150, 400, 0.1), step(1000, 0.002, 1000, 2000, 0.4),
		step(2000, 0.009, 1250, 2600, 0.9, limits.BackendCommitP99), step(1400, 0.005, 1230, 2580, 0.85)}
	// The same on a busy machine, as measured: the steps that broke named
	// the member's CPU (it waited for one), the device 48-63% busy at a
	// flat 1,942-1,967 IOPS: the cap, the CPU said beside it.
	busyCap := []result.CapacityStep{step(150, 0.0016, 150, 503, 0.01), step(1000, 0.0071, 809, 1967, 0.21),
		step(2000, 0.035, 815, 1942, 0.63, limits.WALFsyncP99, limits.BackendCommitP99), step(1400, 0.024, 816, 1951, 0.48, limits.WALFsyncP99, limits.BackendCommitP99)}
	busyCap[2].Cause, busyCap[3].Cause = result.CauseCPU, result.CauseCPU
	// The same with this host's CPUs saturated (as measured at 600 IOPS
	// beside two busy loops: the host 100% busy, 1.77 of its 2 cores with
	// other work): the device's queue may be the CPU's; both are said.
	busySaturated := slices.Clone(busyCap)
	busySaturated[3].HostCPUBusy = 1
	// Saturated, the member's own CPU wait not seen: both still.
	busySaturatedDisk := slices.Clone(busySaturated)
	busySaturatedDisk[3].Cause = result.CauseDisk
	// Capped at 400 on a busy machine, as measured: the device wrote fewer
	// IOPS at 1,000 than at 390 (445 against 514), still at its ceiling.
	busyLow := []result.CapacityStep{step(150, 0.003, 149, 503, 0.03), step(1000, 0.11, 171, 445, 0.62, limits.WALFsyncP99),
		step(390, 0.063, 175, 514, 0.57, limits.WALFsyncP99)}
	busyLow[1].Cause, busyLow[2].Cause = result.CauseCPU, result.CauseCPU
	// Capped at 1,500 IOPS below the file system, the key space written
	// before the first step (as measured): past the knee the backend's
	// commits take more of the cap, etcd's WAL fsyncs fall from 824/s to
	// 632/s and the device's IOPS from 2,049 to 1,810.
	prefilled := []result.CapacityStep{step(150, 0.001, 150, 506, 0), step(1000, 0.0031, 824, 2049, 0.2),
		step(2000, 0.046, 716, 1873, 0.6, limits.WALFsyncP99, limits.BackendCommitP99), step(1400, 0.043, 632, 1810, 0.58, limits.WALFsyncP99)}
	// The same, its device's writes falling further past the knee (17%):
	// still held at the ceiling.
	prefilledFall := slices.Clone(prefilled)
	prefilledFall[3].DeviceIOPS = 1700
	// The same volume capped at 600 IOPS, as measured: the knee under 390
	// puts/s, the device at 795 and 742 IOPS past it.
	prefilledLow := []result.CapacityStep{step(150, 0.001, 150, 504, 0.08), step(1000, 0.11, 306, 795, 0.7, limits.WALFsyncP99, limits.BackendCommitP99),
		step(390, 0.058, 206, 742, 0.52, limits.WALFsyncP99)}
	// The high knee with the step that broke writing half as much: its
	// writes collapsed rather than held at a ceiling.
	collapsed := slices.Clone(high)
	collapsed[2].DeviceIOPS = 1200
	// Capped at 400: fsyncs 288/s at 390 and 273/s at 1,000 offered.
	low := []result.CapacityStep{step(150, 0.002, 150, 300, 0.3), step(1000, 0.0498, 273, 692, 0.85, limits.WALFsyncP99), step(390, 0.03, 288, 724, 0.88, limits.WALFsyncP99)}
	lowHeld := slices.Clone(low)
	lowHeld[2] = step(390, 0.004, 288, 724, 0.88)
	// Uncapped, the host's CPUs busy: etcd batches, its fsyncs fall from
	// 1,399/s at 2,000 puts/s to 875/s at 4,000.
	batching := []result.CapacityStep{step(150, 0.001, 150, 300, 0.1), step(1000, 0.001, 1000, 1800, 0.3), step(2000, 0.002, 1399, 2600, 0.4),
		step(4000, 0.003, 875, 2000, 0.3, limits.RequestP99), step(2800, 0.002, 1300, 2500, 0.4)}
	batching[3].Cause, batching[3].HostCPUBusy = result.CauseNone, 0.95
	// A disk bound by its latency (4ms a write): fsyncs flat, their p99
	// flat too; the requests broke.
	latency := []result.CapacityStep{step(150, 0.004, 150, 300, 0.6), step(390, 0.0045, 240, 480, 1), step(1000, 0.0048, 245, 490, 1, limits.RequestP99)}
	// Flat fsyncs over an idle device while the host's CPUs were busy:
	// the CPU, no cap.
	idleBusy := []result.CapacityStep{step(150, 0.001, 150, 300, 0.1), step(1000, 0.003, 700, 1400, 0.2), step(2000, 0.012, 720, 1450, 0.2, limits.WALFsyncP99)}
	idleBusy[2].HostCPUBusy, idleBusy[2].Cause = 0.9, result.CauseNone
	// The same without the device's figures (a member on another host):
	// both are said.
	both := slices.Clone(idleBusy)
	for i := range both {
		both[i].DeviceIOPS, both[i].DeviceUtil, both[i].DeviceAwait = 0, 0, 0
	}
	// Another directory of a virtio disk, no cap anywhere, as measured
	// (doctor at its defaults): only the backend commit p99 broke (42.9ms
	// at 2,000 puts/s), etcd's WAL fsync p99 within its limit (7.12ms, 14x
	// the device's mean write time of 508µs, 25% busy: the device's mean
	// shows no flush's tail), this host's CPUs 79.8% busy; the steps' rules
	// named the storage below the device. A cap delays etcd's fsyncs: with
	// them within their limit, the break says nothing of a hidden cap.
	virtioCommit := []result.CapacityStep{step(150, 0.00348, 150, 515, 0.11), step(1000, 0.00332, 908, 2837, 0.35),
		step(2000, 0.00712, 707, 2739, 0.25, limits.BackendCommitP99), step(1400, 0.00641, 877, 3304, 0.4),
		step(1700, 0.00634, 857, 3640, 0.47, limits.BackendCommitP99), step(1400, 0.0043, 1008, 4293, 0.52),
		step(1800, 0.00603, 866, 4343, 0.53), step(2300, 0.00719, 730, 4357, 0.46, limits.BackendCommitP99)}
	virtioCommit[0].Seconds = 20
	for i, v := range [][3]float64{{0.000174, 0.188, 0.0039}, {0.000235, 0.668, 0.0134}, {0.000508, 0.798, 0.0429}, {0.000399, 0.752, 0.0142},
		{0.000616, 0.761, 0.0422}, {0.000447, 0.716, 0.0156}, {0.000547, 0.775, 0.0222}, {0.000598, 0.803, 0.0284}} {
		st := &virtioCommit[i]
		st.DeviceAwait, st.HostCPUBusy, st.BackendCommitP99 = v[0], v[1], v[2]
		if st.Failed() {
			st.Cause = result.CauseDiskOrIOPSCap
		}
		if i >= 5 {
			st.Confirm, st.Seconds = true, 10
		}
	}
	virtioCommit[6].Tight = []string{limits.BackendCommitP99}
	// A directory of a virtio disk on a 2-CPU host, no cap anywhere, as
	// measured (doctor at its defaults): the backend commit p99 broke alone
	// (27ms at the 5,900 hold), etcd's WAL fsync p99 3.87ms, the device's
	// writes 768µs on average, 31% busy, while etcd used 1.01 CPUs and this
	// host's CPUs were 82% busy; the steps' rules named the storage below
	// the device. A RAM disk on the same host gave the same answer at the
	// same steps, the CPU named: the commits waited for the CPU as much as
	// for the disk, and a cap below the device would have delayed the
	// WAL's fsyncs too.
	cpuBound := []result.CapacityStep{step(150, 0.00100, 150, 509, 0.01), step(1000, 0.00100, 987, 3290, 0.32), step(2000, 0.00106, 1853, 5633, 0.44),
		step(4000, 0.00246, 2021, 7251, 0.34), step(8000, 0.00506, 946, 6008, 0.18, limits.BackendCommitP99), step(5700, 0.00374, 1389, 7045, 0.29),
		step(6800, 0.00490, 1035, 6517, 0.20), step(11000, 0.01284, 287, 4864, 0.11, limits.RequestP99, limits.WALFsyncP99, limits.BackendCommitP99),
		step(7800, 0.00556, 870, 7357, 0.21, limits.BackendCommitP99), step(6800, 0.00414, 1246, 7984, 0.27, limits.BackendCommitP99),
		step(5200, 0.00345, 1692, 8519, 0.32), step(5900, 0.00387, 1407, 8061, 0.31, limits.BackendCommitP99)}
	cpuBound = doctorSteps(cpuBound, [][4]float64{{0.000087, 0.15, 0.14, 0.0020}, {0.000253, 0.51, 0.55, 0.0039}, {0.000246, 0.65, 0.78, 0.0074}, {0.000471, 0.77, 0.93, 0.0131},
		{0.000804, 0.84, 0.90, 0.0251}, {0.000673, 0.83, 0.97, 0.0194}, {0.000785, 0.83, 0.94, 0.0187}, {0.001182, 0.83, 1.01, 0.0523},
		{0.000884, 0.88, 1.09, 0.0380}, {0.000778, 0.84, 1.04, 0.0265}, {0.000646, 0.82, 1.01, 0.0152}, {0.000768, 0.82, 1.01, 0.0270}})
	// The same disk, doctor on it and on a tmpfs side by side: the
	// device's writes held at ~7,200-9,400 IOPS from 4,000 to 11,000 puts/s
	// while etcd's WAL fsync p99 climbed past half its limit (7.25ms), each
	// write 2.48ms on average at the 11,000 hold, 25% busy; etcd at 1.0-1.1
	// CPUs, this host's CPUs 87-89% busy. The ceiling is etcd's CPU, not a
	// cap: the disk or the CPU, as at the hold that broke lowest.
	cpuCeiling := []result.CapacityStep{step(150, 0.00100, 150, 509, 0.01), step(1000, 0.00100, 998, 3197, 0.03), step(2000, 0.00100, 1924, 5745, 0.04),
		step(4000, 0.00175, 2405, 8330, 0.36), step(8000, 0.00243, 1721, 7980, 0.25),
		step(15000, 0.01522, 317, 5479, 0.10, limits.RequestP99, limits.WALFsyncP99, limits.BackendCommitP99), step(11000, 0.00630, 703, 6578, 0.17, limits.BackendCommitP99),
		step(9400, 0.00384, 1046, 7223, 0.26), step(11000, 0.00725, 502, 7437, 0.25, limits.BackendCommitP99, limits.RequestP99),
		step(9400, 0.00547, 731, 7421, 0.23, limits.BackendCommitP99, limits.RequestP99), step(7200, 0.00257, 1701, 9397, 0.34), step(8200, 0.00337, 1252, 8524, 0.28)}
	cpuCeiling = doctorSteps(cpuCeiling, [][4]float64{{0.000070, 0.02, 0.09, 0.0017}, {0.000179, 0.29, 0.47, 0.0039}, {0.000247, 0.62, 0.71, 0.0071}, {0.000386, 0.78, 0.97, 0.0102},
		{0.000534, 0.84, 0.98, 0.0137}, {0.000971, 0.86, 1.03, 0.0442}, {0.000920, 0.88, 1.01, 0.0269}, {0.000857, 0.87, 1.01, 0.0248},
		{0.002484, 0.87, 1.11, 0.0595}, {0.001311, 0.89, 1.13, 0.0284}, {0.000765, 0.86, 1.05, 0.0156}, {0.000927, 0.85, 1.05, 0.0218}})
	// A direct-I/O loop device over a file of a virtio disk, no cap
	// anywhere, as measured: the √2 step at 5,700 puts/s broke its WAL
	// fsync p99 (14.9ms) on 418 fsyncs/s, the device answering in 1.26ms,
	// 28% busy, at 4,266 IOPS; the holds after it wrote 6,689-7,684 IOPS.
	// A cap is a ceiling: the storage delivered more than that step's
	// writes elsewhere in the sweep, so no cap is named.
	loopRoom := []result.CapacityStep{step(150, 0.00100, 150, 509, 0.01), step(1000, 0.00192, 962, 3076, 0.10), step(2000, 0.00199, 1670, 5313, 0.48),
		step(4000, 0.00546, 1242, 5466, 0.49, limits.BackendCommitP99), step(2800, 0.00346, 1646, 6084, 0.54), step(3300, 0.00437, 1366, 6032, 0.54),
		step(5700, 0.01487, 418, 4266, 0.28, limits.WALFsyncP99, limits.BackendCommitP99), step(3800, 0.00446, 1308, 6876, 0.52),
		step(4400, 0.00375, 1466, 7684, 0.54), step(5100, 0.00467, 1238, 7340, 0.52), step(5900, 0.00692, 878, 6689, 0.46, limits.BackendCommitP99)}
	for i, v := range [][4]float64{{0.000146, 0.06, 0.12, 0.0025}, {0.000338, 0.31, 0.51, 0.0054}, {0.000415, 0.69, 0.66, 0.0107}, {0.000665, 0.77, 0.73, 0.0262},
		{0.000606, 0.72, 0.69, 0.0142}, {0.000732, 0.75, 0.73, 0.0154}, {0.001262, 0.80, 0.88, 0.0561}, {0.000731, 0.78, 0.82, 0.0217},
		{0.000661, 0.78, 0.82, 0.0200}, {0.000735, 0.80, 0.86, 0.0208}, {0.000885, 0.82, 0.91, 0.0287}} {
		st := &loopRoom[i]
		st.DeviceAwait, st.HostCPUBusy, st.EtcdCPU, st.BackendCommitP99 = v[0], v[1], v[2], v[3]
		if st.Failed() {
			st.Cause = result.CauseDiskOrIOPSCap
		}
		st.Seconds, st.Confirm = 2, i >= 7
		if st.Confirm {
			st.Seconds = 10
		}
	}
	loopRoom[0].Seconds = 15
	// The same with etcd at a few tenths of a CPU (the host's CPUs busy
	// with other work): nothing tells the commits waited for etcd's CPU.
	cpuOthers := slices.Clone(cpuBound)
	for i := range cpuOthers {
		cpuOthers[i].EtcdCPU = 0.3
	}
	// A directory of a virtio disk, no cap anywhere, as measured: the
	// short steps held to 4,000 puts/s, the holds at 4,000 and 2,800 broke
	// the backend commit p99, etcd batching its puts into 637 fsyncs/s at
	// 2,800 (behind the rate) while the device answered each write in
	// 891µs, 34% busy, etcd's fsync p99 (7.98ms) 9x that: the disk's
	// latency bounds etcd's serial fsyncs, not a cap.
	virtio := []result.CapacityStep{step(150, 0.00268, 149, 543, 0.05), step(1000, 0.00288, 940, 2294, 0.45), step(2000, 0.00255, 1366, 3285, 0.34),
		step(4000, 0.00319, 1174, 3152, 0.27), step(8000, 0.013, 190, 1282, 0.09, limits.RequestP99, limits.WALFsyncP99, limits.BackendCommitP99),
		step(5700, 0.0103, 300, 1769, 0.12, limits.RequestP99, limits.WALFsyncP99, limits.BackendCommitP99),
		step(4000, 0.00523, 763, 3776, 0.26, limits.RequestP99, limits.BackendCommitP99), step(2800, 0.00798, 637, 3248, 0.34, limits.BackendCommitP99)}
	virtio[0].Seconds = 30
	for i, await := range []float64{0.000638, 0.000123, 0.000147, 0.000218, 0.00102, 0.00111, 0.000742, 0.000891} {
		virtio[i].DeviceAwait, virtio[i].HostCPUBusy = await, 0.8
		if i >= 6 {
			virtio[i].Confirm, virtio[i].Seconds = true, 8
		}
	}
	// measured is a sweep as measured over a real disk: offered, WAL fsync
	// p99, fsyncs/s, the device's IOPS, busy share and mean write time,
	// whether a confirm step, the limits it broke (each named the disk,
	// or cause); the host's CPUs at host.
	type m struct {
		offered, wal, fsyncs, iops, util, await float64
		confirm                                 bool
		broke                                   []string
	}
	measured := func(host float64, cause result.Cause, ms ...m) []result.CapacityStep {
		var out []result.CapacityStep
		for i, x := range ms {
			st := step(x.offered, x.wal, x.fsyncs, x.iops, x.util, x.broke...)
			st.DeviceAwait, st.HostCPUBusy, st.Confirm, st.Seconds = x.await, host, x.confirm, 2
			if x.confirm {
				st.Seconds = 8
			}
			if i == 0 {
				st.Seconds = 30
			}
			if len(x.broke) > 0 {
				st.Cause = cause
			}
			out = append(out, st)
		}
		return out
	}
	cp, wp, rp := limits.BackendCommitP99, limits.WALFsyncP99, limits.RequestP99
	// A direct-I/O loop device over a file on a virtio disk, no cap: its
	// writes ~4,350 IOPS at most, 50% busy, each in 0.84ms at the knee
	// against 0.28ms at 150 puts/s: no ceiling (no cap named), but writes
	// that queued as the rate rose, at the loop device or at the virtio
	// disk below it: the storage below the device.
	loop := measured(0.75, result.CauseDisk, m{150, 0.00515, 150, 509, 0.13, 0.000284, false, nil}, m{1000, 0.00198, 953, 2994, 0.17, 0.000360, false, nil},
		m{2000, 0.00386, 993, 3737, 0.47, 0.000671, false, []string{cp}}, m{1500, 0.00393, 1087, 3983, 0.47, 0.000652, false, nil},
		m{1700, 0.00398, 1118, 4352, 0.50, 0.000696, false, nil}, m{2800, 0.00736, 835, 3984, 0.45, 0.000954, false, []string{cp}},
		m{1700, 0.00614, 903, 4359, 0.55, 0.000982, true, []string{cp}}, m{1300, 0.00390, 1048, 4333, 0.50, 0.000765, true, nil},
		m{1500, 0.00554, 985, 4350, 0.57, 0.000837, true, []string{cp}})
	// The same loop capped at 1,500 IOPS below it (the member cannot see
	// the cap): its writes flat at ~2,000 IOPS from 590 to 1,000 puts/s,
	// each waiting 3.7-5.6ms there against 0.39ms at 150 puts/s, while
	// etcd's WAL fsync p99 was already 7.7ms at 150: the cap, not a slow
	// disk.
	loopCap := measured(0.5, result.CauseDisk, m{150, 0.00772, 149, 506, 0.15, 0.000391, false, nil}, m{1000, 0.00752, 616, 2134, 0.62, 0.005213, false, []string{cp}},
		m{770, 0.02112, 470, 2023, 0.58, 0.005631, false, []string{wp, cp}}, m{590, 0.00660, 434, 1908, 0.46, 0.003679, false, []string{cp}})
	// The same capped at 1,500 on a busy machine (the host's CPUs 73%
	// busy, as a CI run measured it; the mean write times below the knee,
	// which that run did not print, as the same volume measured them on a
	// busy machine): the writes not flat (1,194 to 1,804 IOPS), the
	// verdict's rules named the disk at 390 puts/s, its device's writes
	// 2.04ms against 0.18ms at 150: they queued below it, at the cap.
	loopCapBusy := measured(0.73, result.CauseDisk, m{150, 0.0066, 150, 504, 0.05, 0.00018, false, nil}, m{1000, 0.027, 464, 1804, 0.49, 0.00492, false, []string{wp, cp}},
		m{390, 0.0105, 338, 1545, 0.25, 0.00204, false, []string{wp, cp}}, m{240, 0.0078, 238, 1194, 0.13, 0.00047, false, nil}, m{310, 0.0066, 303, 1378, 0.13, 0.00075, false, nil})
	// The same capped at 600: the verdict's load broke, and the verdict's
	// rules named the storage below the device (its cap or the storage
	// behind it): one step, no ceiling to tell which, both said.
	loopCapFirst := measured(0.54, result.CauseDiskOrIOPSCap, m{150, 0.00923, 143, 487, 0.25, 0.000495, false, []string{rp, cp}})
	// A backend commit that broke alone over a fast device is the disk or the
	// CPU when etcd used etcd_cpu_busy of a CPU, however busy the host's CPUs
	// were; under a cap below the device that delayed the commits alone,
	// etcd used a fraction of that, and the storage below the device is
	// named. Both sweeps as measured: a loop device over a file on a virtio
	// disk, no cap (its step at 4,000 puts/s broke with the host's CPUs 79%
	// busy, under host_cpu_busy, etcd at 0.81 CPUs: the old rule named the
	// storage below the device there, and the disk or the CPU on a run whose
	// step broke alike at 81%); the same loop capped at 1,500 IOPS below it.
	type rec struct {
		offered, wal, fsyncs, iops, util, await, host, etcd, commit float64
		hold, broke                                                 bool
	}
	sweep := func(rs ...rec) []result.CapacityStep {
		var out []result.CapacityStep
		for i, r := range rs {
			st := result.CapacityStep{Offered: r.offered, Achieved: r.offered, Seconds: 2, WALFsyncP99: r.wal, WALFsyncs: r.fsyncs, DeviceIOPS: r.iops, DeviceUtil: r.util,
				DeviceAwait: r.await, HostCPUBusy: r.host, EtcdCPU: r.etcd, BackendCommitP99: r.commit, Confirm: r.hold}
			switch {
			case i == 0:
				st.Seconds = 15
			case r.hold:
				st.Seconds = 10
			}
			if r.broke {
				st.Broke, st.Cause = []string{limits.BackendCommitP99}, result.CauseDiskOrIOPSCap
			}
			out = append(out, st)
		}
		return out
	}
	uncapped := sweep(rec{150, 0.00130, 150, 509, 0.03, 0.000169, 0.17, 0.15, 0.0038, false, false}, rec{1000, 0.00184, 975, 3119, 0.09, 0.000322, 0.35, 0.51, 0.0073, false, false},
		rec{2000, 0.00279, 1597, 5138, 0.37, 0.000437, 0.70, 0.69, 0.0106, false, false}, rec{4000, 0.00708, 850, 4747, 0.45, 0.000812, 0.79, 0.81, 0.0406, false, true},
		rec{2800, 0.00447, 1207, 5257, 0.46, 0.000741, 0.75, 0.73, 0.0211, false, false}, rec{3300, 0.00708, 848, 4887, 0.44, 0.000925, 0.78, 0.79, 0.0413, false, true},
		rec{3200, 0.00368, 1421, 6824, 0.56, 0.000721, 0.76, 0.79, 0.0184, true, false}, rec{3700, 0.00369, 1479, 7126, 0.55, 0.000679, 0.78, 0.81, 0.0209, true, false},
		rec{4300, 0.00634, 921, 6087, 0.47, 0.000852, 0.81, 0.88, 0.0310, true, true})
	capped := sweep(rec{150, 0.00174, 150, 509, 0.01, 0.000154, 0.15, 0.11, 0.0037, false, false}, rec{1000, 0.00708, 622, 2216, 0.59, 0.005011, 0.38, 0.39, 0.1223, false, true},
		rec{390, 0.00328, 358, 1632, 0.21, 0.001295, 0.20, 0.24, 0.0573, false, true}, rec{240, 0.00358, 234, 1215, 0.18, 0.000530, 0.23, 0.22, 0.0870, false, true},
		rec{190, 0.00330, 187, 1019, 0.13, 0.000385, 0.16, 0.17, 0.0438, false, true}, rec{150, 0.00246, 151, 916, 0.05, 0.000361, 0.19, 0.15, 0.0039, true, false},
		rec{170, 0.00181, 171, 1004, 0.09, 0.000348, 0.13, 0.15, 0.0043, true, false}, rec{200, 0.00163, 201, 1139, 0.15, 0.000338, 0.11, 0.14, 0.0043, true, false},
		rec{230, 0.00167, 226, 1236, 0.13, 0.000537, 0.15, 0.16, 0.0514, true, true})
	capped[len(capped)-1].Seconds = 5
	for _, c := range []struct {
		name   string
		steps  []result.CapacityStep
		puts   float64
		cause  result.Cause
		answer string
	}{
		{"a virtio disk's latency, no cap", virtio, 2000, result.CauseDiskOrCPU, "its disk or its CPU limits it there"},
		{"a virtio disk, its commits broke alone, etcd busy on a busy host", cpuBound, 5200, result.CauseDiskOrCPU, "the backend commit p99 broke (27ms): its disk or its CPU limits it there"},
		{"a virtio disk, writes flat while etcd kept a busy host's CPUs busy", cpuCeiling, 8200, result.CauseDiskOrCPU, "its disk or its CPU limits it there"},
		{"an uncapped loop, one step broke where holds after it wrote more", loopRoom, 5100, result.CauseDiskOrIOPSCap, "a cap on the volume's IOPS or the storage behind it"},
		{"an uncapped loop, its commits broke alone, etcd at 0.81 CPUs, the host's CPUs 79% busy", uncapped, 3700, result.CauseDiskOrCPU, "at 4,000 the backend commit p99 broke (40.6ms): its disk or its CPU limits it there"},
		{"a loop capped at 1,500 IOPS below it, its commits broke alone, etcd at 0.16 CPUs", capped, 200, result.CauseDiskOrIOPSCap, "a cap on the volume's IOPS or the storage behind it"},
		{"a virtio disk, its commits broke alone, the host busy with other work", cpuOthers, 5200, result.CauseDiskOrIOPSCap, "the storage below the device its host sees limits it there"},
		{"a virtio disk, its commits broke alone, no cap", virtioCommit, 1800, result.CauseDiskOrIOPSCap, "at 2,000 the backend commit p99 broke (42.9ms)"},
		{"a loop over a virtio disk, no cap", loop, 1300, result.CauseDiskOrIOPSCap, "writes took 284µs on average at 150 puts/s and 837µs at 1,500"},
		{"a loop over a virtio disk, capped below, on a busy machine", loopCapBusy, 310, result.CauseDiskOrIOPSCap, "writes took 180µs on average at 150 puts/s and 2.04ms at 390"},
		{"a loop over a virtio disk, capped below", loopCap, 150, result.CauseIOPSCap, "the volume delivered at most ~2,134 write IOPS"},
		{"a loop over a virtio disk, capped below, the first step broke", loopCapFirst, 0, result.CauseDiskOrIOPSCap, "the storage below the device its host sees limits it there"},
		{"cap at a high knee", high, 1400, result.CauseIOPSCap, "the volume delivered at most ~2,401 write IOPS (etcd's WAL fsyncs ~992/s) from 1,000 to 2,000 puts/s offered"},
		{"cap at a high knee, 10s steps", high10, 1400, result.CauseIOPSCap, "the volume delivered at most ~2,595 write IOPS (etcd's WAL fsyncs ~1,089/s) from 1,000 to 2,000 puts/s offered"},
		{"cap from the knee's middle step to the break", between, 1400, result.CauseIOPSCap, "from 1,400 to 2,000 puts/s offered"},
		{"cap on a busy machine, the CPU named by the steps", busyCap, 1000, result.CauseIOPSCap, "the member also waited for a CPU"},
		{"cap on a saturated machine, the member waiting for a CPU", busySaturated, 1000, result.CauseIOPSCapOrCPU, "while this host's CPUs were 100% busy and the member waited for a CPU"},
		{"cap on a saturated machine, the member's disk named", busySaturatedDisk, 1000, result.CauseIOPSCapOrCPU, "its writes waiting 4ms on average, while this host's CPUs were 100% busy)"},
		{"cap at a low knee on a busy machine", busyLow, 150, result.CauseIOPSCap, "the member also waited for a CPU"},
		{"cap at a low knee on a busy machine: the lowest rate's step is not on the ceiling", busyLow, 150, result.CauseIOPSCap, "from 390 to 1,000 puts/s offered"},
		{"writes that collapsed past the knee", collapsed, 1400, result.CauseDisk, "the disk"},
		{"cap seen in one step", oneStep, 390, result.CauseIOPSCap, "the writes waited at a cap that neither the device nor this host shows"},
		{"one step, the host's CPUs busy", oneStepBusy, 390, result.CauseCPU, "etcd's CPU limits it there"},
		{"one step, the host's CPUs busy, the member's disk named", oneStepDisk, 390, result.CauseIOPSCap, "the writes waited at a cap"},
		{"cap with the key space written first", prefilled, 1000, result.CauseIOPSCap, "the volume delivered at most ~2,049 write IOPS (etcd's WAL fsyncs ~824/s) from 1,000 to 2,000 puts/s offered"},
		{"cap with the key space written first, the writes falling past the knee", prefilledFall, 1000, result.CauseIOPSCap, "they queued below this host, at the volume"},
		{"cap at a low knee with the key space written first", prefilledLow, 150, result.CauseIOPSCap, "the volume delivered at most ~795 write IOPS (etcd's WAL fsyncs ~306/s) from 390 to 1,000 puts/s offered"},
		{"cap at a low knee, its middle step broke", low, 150, result.CauseIOPSCap, "from 390 to 1,000 puts/s offered"},
		{"cap at a low knee, its middle step held", lowHeld, 390, result.CauseIOPSCap, "they queued below this host, at the volume"},
		{"etcd batching on a busy host", batching, 2800, result.CauseCPU, "etcd's CPU limits it there"},
		{"a disk bound by its latency", latency, 390, result.CauseDisk, "the disk's latency limits etcd there"},
		{"a ceiling over an idle device, the host's CPUs busy", idleBusy, 1000, result.CauseCPU, "etcd's CPU limits it there"},
		{"a ceiling with the host's CPUs busy, no device figures", both, 1000, result.CauseIOPSCapOrCPU, "measure the storage alone"},
	} {
		cap := &result.Capacity{ValueSize: 1024, Steps: slices.Clone(c.steps)}
		checkRule(t, c.name, cap)
		Capacity(cap, limits.Table)
		if cap.PutsPerS != c.puts || cap.Cause != c.cause || !strings.Contains(cap.Answer, c.answer) {
			t.Errorf("%s: %g puts/s, cause %q, answer %q; want %g, %q, %q", c.name, cap.PutsPerS, cap.Cause, cap.Answer, c.puts, c.cause, c.answer)
		}
	}
}

// The volume's provisioned figures, as --volume-iops and --volume-mbps
// state them: a device that wrote most of them at the break is at its
// cap; the answer says how much of them the capacity's step used.
func TestCapacityProvisioned(t *testing.T) {
	steps := []result.CapacityStep{
		{Offered: 150, Achieved: 150, WALFsyncP99: 0.002, WALFsyncs: 150, DeviceIOPS: 400, DeviceWriteBytes: 2 << 20},
		{Offered: 1000, Achieved: 1000, WALFsyncP99: 0.003, WALFsyncs: 900, DeviceIOPS: 2100, DeviceWriteBytes: 10 << 20},
		{Offered: 2000, Achieved: 1500, WALFsyncP99: 0.004, WALFsyncs: 1400, DeviceIOPS: 2900, DeviceWriteBytes: 14 << 20, Broke: []string{limits.Throughput}, Cause: result.CauseEtcd},
	}
	for _, c := range []struct {
		limits []string
		cause  result.Cause
		rule   string
		answer string
		used   float64
	}{
		{nil, result.CauseEtcd, "host", "etcd itself limits it there", 0},
		{[]string{"volume_iops=3000"}, result.CauseIOPSCap, "volume", "at 1,000 puts/s the device wrote 2,100 of the 3,000 IOPS provisioned (70%)", 0.7},
		{[]string{"volume_iops=10000"}, result.CauseEtcd, "host", "2,100 of the 10,000 IOPS provisioned (21%)", 0.21},
		{[]string{"volume_write_bps=16m"}, result.CauseIOPSCap, "volume", "10.0 MiB/s of the 16.0 MiB/s provisioned (62%)", 0},
		{[]string{"volume_iops=3000"}, result.CauseIOPSCap, "volume", "(the device wrote 2,900 IOPS during the step, 97% of the 3,000 provisioned (--volume-iops))", 0.7},
		{[]string{"volume_write_bps=16m"}, result.CauseIOPSCap, "volume", "(the device wrote 14.0 MiB/s during the step, 88% of the 16.0 MiB/s provisioned (--volume-mbps))", 0},
	} {
		criteria, err := limits.Override(limits.Table, c.limits)
		if err != nil {
			t.Fatal(err)
		}
		cap := &result.Capacity{ValueSize: 1024, Steps: slices.Clone(steps)}
		if rule := concludeSweep(cap, diagnose.LevelsIn(criteria)); rule != c.rule {
			t.Errorf("%v: the cause came from rule %q, want %q", c.limits, rule, c.rule)
		}
		if cap.Cause != c.cause || !strings.Contains(cap.Answer, c.answer) || math.Abs(cap.VolumeIOPSUsed-c.used) > 1e-9 {
			t.Errorf("%v: cause %q, IOPS used %g, answer %q; want %q, %g, %q", c.limits, cap.Cause, cap.VolumeIOPSUsed, cap.Answer, c.cause, c.used, c.answer)
		}
	}
	if cap := (&result.Capacity{}); func() bool { Capacity(cap, limits.Table); return cap.Answer == "" }() {
		t.Error("an empty sweep has no answer")
	}
}

// A live cluster's sweep without the device's figures: a backend commit
// that broke while the WAL fsyncs held their limit names nothing measured
// on the disk: the disk or the CPU, with this host's CPUs said.
func TestCapacityNoDevice(t *testing.T) {
	steps := []result.CapacityStep{
		{Offered: 150, Achieved: 150, WALFsyncP99: 0.001, WALFsyncs: 150},
		{Offered: 8000, Achieved: 8000, WALFsyncP99: 0.004, WALFsyncs: 5000},
		{Offered: 15000, Achieved: 11000, WALFsyncP99: 0.00688, WALFsyncs: 9800, HostCPUBusy: 0.88, Broke: []string{limits.BackendCommitP99}, Cause: result.CauseDisk},
	}
	cap := &result.Capacity{ValueSize: 1024, Steps: steps}
	Capacity(cap, limits.Table)
	if cap.Cause != result.CauseDiskOrCPU || !strings.Contains(cap.Answer, "this host's CPUs 88% busy") {
		t.Errorf("cause %q, answer %q; want the disk or the CPU, with the host's CPUs", cap.Cause, cap.Answer)
	}
}

// Confirm steps: a rate that broke when held undoes what shorter steps
// held at it and above; the answer says how long its rate held.
func TestCapacityConfirm(t *testing.T) {
	st := func(offered, secs float64, confirm bool, broke ...string) result.CapacityStep {
		s := result.CapacityStep{Offered: offered, Achieved: offered, Seconds: secs, WALFsyncP99: 0.001, WALFsyncs: offered / 2, Confirm: confirm, Broke: broke}
		if len(broke) > 0 {
			s.Cause, s.HostCPUBusy = result.CauseNone, 0.95
		}
		if confirm {
			// A hold's 5s intervals, as many as it ran, each past the
			// limits it broke (Capacity judges a hold on them).
			iv := result.SoakSample{Seconds: 5, WALFsyncP99: 0.001, BackendCommitP99: 0.005, RequestP99: 0.010}
			for _, b := range broke {
				switch b {
				case limits.RequestP99:
					iv.RequestP99 = 1
				case limits.BackendCommitP99:
					iv.BackendCommitP99 = 0.1
				}
			}
			for range int(math.Round(secs / 5)) {
				s.Intervals = append(s.Intervals, iv)
			}
		}
		return s
	}
	// tight: the backend commit p99 at commit, under its limit, over its
	// warning level.
	tight := func(s result.CapacityStep, commit float64) result.CapacityStep {
		s.BackendCommitP99, s.Tight = commit, []string{limits.BackendCommitP99}
		for i := range s.Intervals {
			s.Intervals[i].BackendCommitP99 = commit
		}
		return s
	}
	// A short step held near a limit still held: only a confirm step's
	// hold tells a building queue.
	sweep := []result.CapacityStep{st(150, 30, false), st(1000, 2, false), st(2000, 2, false), st(4000, 2, false),
		st(8000, 2, false, limits.RequestP99), tight(st(5700, 2, false), 0.024)}
	for _, c := range []struct {
		name    string
		confirm []result.CapacityStep
		puts    float64
		answer  string
	}{
		// A hold decided after two of its three intervals held (HoldDecided).
		{"the answer held", []result.CapacityStep{st(5700, 10, true)}, 5700, "up to 5,700 puts/s of 1.0 KiB within its limits, held for 10s; at 8,000 the request p99 broke"},
		{"the answer held for the whole hold", []result.CapacityStep{st(5700, 15, true)}, 5700, "up to 5,700 puts/s of 1.0 KiB within its limits, held for 15s; at 8,000 the request p99 broke"},
		// A hold whose load ended after one interval (the run
		// interrupted) did not hold for a hold's time.
		{"the answer held one interval", []result.CapacityStep{st(5700, 5, true)}, 5700, "up to 5,700 puts/s of 1.0 KiB within its limits, held only for 5s; at 8,000 the request p99 broke"},
		// A hold's load ends with its last send, a little before its time.
		{"the answer held 9.97s of 10s", []result.CapacityStep{st(5700, 9.97, true)}, 5700, "up to 5,700 puts/s of 1.0 KiB within its limits, held for 10s; at 8,000 the request p99 broke"},
		{"one step down held", []result.CapacityStep{st(5700, 10, true, limits.RequestP99), st(4000, 10, true)}, 4000,
			"up to 4,000 puts/s of 1.0 KiB within its limits, held for 10s; at 5,700, held for 10s, the request p99 broke"},
		{"none held", []result.CapacityStep{st(5700, 10, true, limits.RequestP99), st(4000, 10, true, limits.RequestP99)}, 2000,
			"up to 2,000 puts/s of 1.0 KiB within its limits, held only for 2s; at 4,000, held for 10s, the request p99 broke"},
		// Held near a limit for the confirm's time still held, as a soak
		// that comes near a limit holds.
		{"the answer held near a limit", []result.CapacityStep{tight(st(5700, 10, true), 0.022)}, 5700,
			"up to 5,700 puts/s of 1.0 KiB within its limits, held for 10s; at 8,000 the request p99 broke"},
		// A hold that held above a short step that broke is the answer;
		// what broke is the lowest rate above it that did.
		{"a hold held above a short step that broke", []result.CapacityStep{st(5700, 10, true), st(6800, 10, true), st(7500, 10, true, limits.RequestP99)}, 6800,
			"up to 6,800 puts/s of 1.0 KiB within its limits, held for 10s; at 7,500, held for 10s, the request p99 broke"},
		// A hold its first interval broke twice over ended there
		// (HoldDecided): the answer says how long it ran.
		{"the hold above ended after 5s", []result.CapacityStep{st(5700, 10, true), st(6800, 5.01, true, limits.RequestP99)}, 5700,
			"up to 5,700 puts/s of 1.0 KiB within its limits, held for 10s; at 6,800, held for 5s, the request p99 broke"},
	} {
		cap := &result.Capacity{ValueSize: 1024, ConfirmSeconds: 15, Steps: append(slices.Clone(sweep), c.confirm...)}
		Capacity(cap, limits.Table)
		if cap.PutsPerS != c.puts || !strings.Contains(cap.Answer, c.answer) {
			t.Errorf("%s: %g puts/s, answer %q; want %g, %q", c.name, cap.PutsPerS, cap.Answer, c.puts, c.answer)
		}
	}
	// The confirmed rate is the answer when a short step held a little
	// above it: the sweep stepped down from 11,000 (broken when held) to
	// 7,800, which held, and past 8,000, which held only 2s.
	high := []result.CapacityStep{st(150, 30, false), st(1000, 2, false), st(2000, 2, false), st(4000, 2, false),
		tight(st(8000, 2, false), 0.021), st(16000, 2, false, limits.RequestP99), st(11000, 2, false),
		st(11000, 10, true, limits.BackendCommitP99), st(7800, 10, true)}
	cap := &result.Capacity{ValueSize: 1024, ConfirmSeconds: 10, Steps: high}
	Capacity(cap, limits.Table)
	if want := "up to 7,800 puts/s of 1.0 KiB within its limits, held for 10s; at 11,000, held for 10s, the backend commit p99"; cap.PutsPerS != 7800 || !strings.Contains(cap.Answer, want) {
		t.Errorf("a short step held above the confirmed rate: %g puts/s, answer %q; want 7800, %q", cap.PutsPerS, cap.Answer, want)
	}
}

// ruleOf names, per case of the tables above, the write-cap rule that
// names its cause (capacityRules, tried in order), or "host" when none
// does and the verdict's cause at the knee stands, refined.
var ruleOf = map[string]string{
	"cgroup cap":                    "cgroup_cap",
	"cgroup cap, device fast":       "cgroup_cap",
	"cgroup cap, host busy":         "cgroup_cap",
	"CPU under a cap barely used":   "host",
	"cgroup cap, first step":        "cgroup_cap",
	"slow device under a cap":       "host",
	"cloud cap":                     "flat_ceiling",
	"slow disk":                     "host",
	"cpu":                           "host",
	"disk climbing":                 "host",
	"commit, device fast":           "host",
	"host CPU saturated":            "host",
	"no knee":                       "",
	"cap at a high knee":            "flat_ceiling",
	"cap at a high knee, 10s steps": "flat_ceiling",
	"cap from the knee's middle step to the break":                                           "flat_ceiling",
	"cap on a busy machine, the CPU named by the steps":                                      "flat_ceiling",
	"cap on a saturated machine, the member waiting for a CPU":                               "flat_ceiling",
	"cap on a saturated machine, the member's disk named":                                    "flat_ceiling",
	"cap at a low knee on a busy machine":                                                    "flat_ceiling",
	"cap at a low knee on a busy machine: the lowest rate's step is not on the ceiling":      "flat_ceiling",
	"writes that collapsed past the knee":                                                    "host",
	"a loop over a virtio disk, no cap":                                                      "queued_below",
	"a loop over a virtio disk, capped below, on a busy machine":                             "queued_below",
	"a loop over a virtio disk, capped below":                                                "flat_ceiling",
	"a loop over a virtio disk, capped below, the first step broke":                          "host",
	"a virtio disk's latency, no cap":                                                        "host",
	"a virtio disk, its commits broke alone, no cap":                                         "host",
	"a virtio disk, its commits broke alone, etcd busy on a busy host":                       "host",
	"a virtio disk, its commits broke alone, the host busy with other work":                  "host",
	"a virtio disk, writes flat while etcd kept a busy host's CPUs busy":                     "host",
	"an uncapped loop, one step broke where holds after it wrote more":                       "host",
	"an uncapped loop, its commits broke alone, etcd at 0.81 CPUs, the host's CPUs 79% busy": "host",
	"a loop capped at 1,500 IOPS below it, its commits broke alone, etcd at 0.16 CPUs":       "host",
	"cap seen in one step":                                                                   "off_device",
	"one step, the host's CPUs busy":                                                         "host",
	"one step, the host's CPUs busy, the member's disk named":                                "off_device",
	"cap with the key space written first":                                                   "flat_ceiling",
	"cap with the key space written first, the writes falling past the knee":                 "flat_ceiling",
	"cap at a low knee with the key space written first":                                     "flat_ceiling",
	"cap at a low knee, its middle step broke":                                               "flat_ceiling",
	"cap at a low knee, its middle step held":                                                "flat_ceiling",
	"etcd batching on a busy host":                                                           "host",
	"a disk bound by its latency":                                                            "host",
	"a ceiling over an idle device, the host's CPUs busy":                                    "host",
	"a ceiling with the host's CPUs busy, no device figures":                                 "flat_ceiling",
}

// checkRule checks that the rule ruleOf names for a case is the one that
// named its cause.
func checkRule(t *testing.T, name string, c *result.Capacity) {
	t.Helper()
	got := concludeSweep(&result.Capacity{ValueSize: c.ValueSize, Steps: slices.Clone(c.Steps)}, diagnose.LevelsIn(limits.Table))
	if want := ruleOf[name]; got != want {
		t.Errorf("%s: the cause came from rule %q, want %q", name, got, want)
	}
}

// A hold is judged on its intervals as a soak is: the medians of its
// intervals' p99s (all of them: a hold has no fresh start to leave out),
// so that one slow interval does not break it, and a queue through most
// of it does; its other limits stand.
func TestHoldIntervals(t *testing.T) {
	commits := func(p99s ...float64) []result.SoakSample {
		var out []result.SoakSample
		for i, c := range p99s {
			out = append(out, result.SoakSample{T: float64(5 * (i + 1)), Seconds: 5, Achieved: 3000, WALFsyncP99: 0.002, BackendCommitP99: c, RequestP99: 0.02})
		}
		return out
	}
	for _, c := range []struct {
		name         string
		intervals    []result.SoakSample
		other        []string // the other limits the whole step broke
		broke, tight []string
		commit       float64
	}{
		{"one slow interval of three", commits(0.030, 0.012, 0.014), nil, nil, nil, 0.014},
		{"a slow interval at its end", commits(0.012, 0.014, 0.030), nil, nil, nil, 0.014},
		{"a queue through most of it", commits(0.012, 0.028, 0.030), nil, []string{limits.BackendCommitP99}, nil, 0.028},
		{"the first interval counts", commits(0.030, 0.026), nil, []string{limits.BackendCommitP99}, nil, 0.028},
		{"one slow of two: near the limit", commits(0.031, 0.012), nil, nil, []string{limits.BackendCommitP99}, 0.0215},
		{"a request past the slowest limit stands", commits(0.030, 0.012, 0.014), []string{limits.SlowestRequest}, []string{limits.SlowestRequest}, nil, 0.014},
		{"no intervals: as the whole step", nil, nil, []string{limits.BackendCommitP99}, nil, 0.031},
	} {
		st := result.CapacityStep{Offered: 3000, Confirm: true, BackendCommitP99: 0.031, Broke: append([]string{limits.BackendCommitP99}, c.other...)}
		hold(&st, c.intervals, limits.Table)
		if !slices.Equal(st.Broke, c.broke) || !slices.Equal(st.Tight, c.tight) || math.Abs(st.BackendCommitP99-c.commit) > 1e-9 || len(st.Intervals) != len(c.intervals) {
			t.Errorf("%s: broke %v, tight %v, commit p99 %g; want %v, %v, %g", c.name, st.Broke, st.Tight, st.BackendCommitP99, c.broke, c.tight, c.commit)
		}
		if st.Failed() != (len(c.broke) > 0) {
			t.Errorf("%s: failed %v", c.name, st.Failed())
		}
	}
}

// doctorSteps completes steps as a default doctor recorded them: the
// verdict's 20s load first, holds from the ninth step; each step's device
// write time, host CPU busy share, etcd's CPUs and backend commit p99 from
// figs, and the storage below the device named where a step broke, as the
// steps' rules named it.
func doctorSteps(steps []result.CapacityStep, figs [][4]float64) []result.CapacityStep {
	steps[0].Seconds = 20
	for i, v := range figs {
		st := &steps[i]
		st.DeviceAwait, st.HostCPUBusy, st.EtcdCPU, st.BackendCommitP99 = v[0], v[1], v[2], v[3]
		if st.Failed() {
			st.Cause = result.CauseDiskOrIOPSCap
		}
		if i >= 8 {
			st.Confirm, st.Seconds = true, 10
		}
	}
	return steps
}
