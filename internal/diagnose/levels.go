package diagnose

import (
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
)

// Levels are the levels the cause rules judge by, as a run set them
// (limits.Table, --limit applied): the member rules here and the capacity
// sweep's in package judge read the same ones, and the write-cap tests
// below (AtCap, Volume, Flat) are the one place each is written.
type Levels struct {
	// Throttled and ThrottledTime: a member whose cgroup ran out of quota
	// in this share of its periods, stopped this long per second, waits
	// for its CPU limit.
	Throttled, ThrottledTime float64
	// SchedWait: a thread of a healthy member gets a CPU within tens of
	// microseconds of becoming runnable, even on a busy host; a starved
	// one waits milliseconds each time.
	SchedWait float64
	// CPUAtLimit: a member using this share of the CPUs it may use has
	// none to spare.
	CPUAtLimit float64
	// MemberHostBusy: a host whose CPUs are this busy makes every fsync of
	// a member wait for a CPU, in the kernel and in etcd; HostCPUBusy: the
	// host rules' level at which its CPUs are saturated (host_cpu_busy),
	// by which a sweep's step is judged.
	MemberHostBusy, HostCPUBusy float64
	// PeerRTT: a round trip between members this slow is slow.
	PeerRTT float64
	// FastFactor: a device that writes and flushes this many times faster
	// than the fsync p99 is not what etcd waits for (a device fast beside
	// the fsyncs); FastAwait: a device whose mean write time is at most
	// this answered fast whatever etcd saw (device_fast_await), and
	// IdleAwait, looser, one too fast to explain etcd's waits under a
	// member's cgroup cap (device_idle_await).
	FastFactor, FastAwait, IdleAwait float64
	// DeviceIdle: a device busy less than this share of the time has time
	// to spare; DeviceBusy: one busy this share has none.
	DeviceIdle, DeviceBusy float64
	// CapUsed: a member that used this share of a cap on its writes (its
	// cgroup's, or the volume's as the user states it) waits for the cap
	// (a step near its knee spends part of its time below it).
	CapUsed float64
	// VolumeIOPS and VolumeBPS are the volume's provisioned write IOPS and
	// bytes/s as the user states them (--volume-iops, --volume-mbps; 0:
	// not stated); OverStated: a device that wrote this many times every
	// stated figure is not on the volume they state.
	VolumeIOPS, VolumeBPS, OverStated float64
	// FlatGrowth: writes/s that spread under this factor are flat (at a
	// ceiling); OfferedRise: a ceiling shows only across steps whose
	// offered rate rose by at least this factor.
	FlatGrowth, OfferedRise float64
	// Queued: a device whose mean write time rose this many times from a
	// sweep's lowest rate (where it answered fast) to its knee queued the
	// writes, at the device or below it (device_queued_growth).
	Queued float64
	// EtcdCPUBusy: etcd using this share of one CPU did CPU work of its
	// own that a backend commit waits on as much as on the disk.
	EtcdCPUBusy float64
	// WALLimit is the WAL fsync p99's limit; WALFast, the p99 at or under
	// which a step found the disk fast (half the limit).
	WALLimit, WALFast float64
}

// LevelsOf are the levels r was judged by (LimitOf).
func LevelsOf(r *result.Result) Levels {
	return levels(func(id string) float64 { return LimitOf(r, id) })
}

// LevelsIn are the levels of criteria (limits.Table with --limit's
// changes).
func LevelsIn(criteria []limits.Criterion) Levels {
	return levels(func(id string) float64 { return limits.LimitOf(criteria, id) })
}

func levels(of func(id string) float64) Levels {
	return Levels{
		Throttled: of(limits.MemberThrottled), ThrottledTime: of(limits.MemberThrottledTime),
		SchedWait: of(limits.MemberSchedWait), CPUAtLimit: of(limits.MemberCPUAtLimit),
		MemberHostBusy: of(limits.MemberHostBusy), HostCPUBusy: of(limits.HostCPUBusy), PeerRTT: of(limits.PeerRTT),
		FastFactor: of(limits.DeviceFastFactor), FastAwait: of(limits.DeviceFastAwait), IdleAwait: of(limits.DeviceIdleAwait),
		DeviceIdle: of(limits.DeviceIdle), DeviceBusy: of(limits.DeviceBusy),
		CapUsed: of(limits.IOPSCapUsed), VolumeIOPS: of(limits.VolumeIOPS), VolumeBPS: of(limits.VolumeWriteBPS), OverStated: of(limits.VolumeOverStated),
		FlatGrowth: of(limits.FsyncsFlatGrowth), OfferedRise: of(limits.OfferedRise), Queued: of(limits.DeviceQueued),
		EtcdCPUBusy: of(limits.EtcdCPUBusy),
		WALLimit:    of(limits.WALFsyncP99), WALFast: of(limits.WALFsyncFast),
	}
}

// AtCap says whether writes of wrote per second used a cap of limit
// (a cgroup's IOPS, a volume's provisioned figure) to the level CapUsed:
// the writer waited for the cap. No cap (0) is never reached.
func (lv Levels) AtCap(limit, wrote float64) bool {
	return limit > 0 && wrote >= lv.CapUsed*limit
}

// Flat says whether writes/s from lo to hi spread within FlatGrowth: they
// held at a ceiling.
func (lv Levels) Flat(lo, hi float64) bool {
	return hi <= lv.FlatGrowth*lo
}

// VolumeFigure is one of the volume's provisioned figures and what a
// device did of it.
type VolumeFigure struct {
	// Flag is the figure's flag (--volume-iops, --volume-mbps); Unit
	// "IOPS" or "B/s".
	Flag, Unit string
	// Did is what the device wrote per second, Provisioned the figure,
	// Used the share of it; AtCap says it was used to the level CapUsed.
	Did, Provisioned, Used float64
	AtCap                  bool
}

// Volume is what a device that wrote iops and bps did of the volume's
// provisioned figures the user stated (none stated: nil).
func (lv Levels) Volume(iops, bps float64) []VolumeFigure {
	var out []VolumeFigure
	if lv.VolumeIOPS > 0 {
		out = append(out, VolumeFigure{Flag: "--volume-iops", Unit: "IOPS", Did: iops, Provisioned: lv.VolumeIOPS, Used: iops / lv.VolumeIOPS, AtCap: lv.AtCap(lv.VolumeIOPS, iops)})
	}
	if lv.VolumeBPS > 0 {
		out = append(out, VolumeFigure{Flag: "--volume-mbps", Unit: "B/s", Did: bps, Provisioned: lv.VolumeBPS, Used: bps / lv.VolumeBPS, AtCap: lv.AtCap(lv.VolumeBPS, bps)})
	}
	return out
}
