package diagnose

import (
	"fmt"
	"slices"
	"strings"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// A cap on a member's writes is evidence as its CPU throttling is: a
// cgroup that caps its write IOPS (io.max, blkio.throttle) counts the
// writes it lets through, and a member that used most of it waits for the
// cap's next slot, above a device that answers fast; a volume whose
// provisioned IOPS (or throughput) the user states (--volume-iops,
// --volume-mbps) is at its cap when the device under the WAL wrote most
// of them, whatever its latency per write.

// capEvidence is what says that a cap on the member's writes held it:
// its cgroup's cap, or the volume's provisioned figures, used to the
// level capUsed; nil when neither was (or neither is known).
func capEvidence(lv Levels, p *result.MemberProcess) ([]result.Evidence, []string) {
	if !p.Measured() {
		return nil, nil
	}
	var ev []result.Evidence
	var words []string
	if lv.AtCap(p.IOPSCap, p.CappedWriteIOPS) {
		ev = append(ev, result.Evidence{What: fmt.Sprintf("share of the %.0f write IOPS that %s's cgroup allows on %s which it used (%.0f writes/s)",
			p.IOPSCap, p.Name, p.CapDevice, p.CappedWriteIOPS), Observed: p.CappedWriteIOPS / p.IOPSCap, Limit: lv.CapUsed, Unit: "ratio",
			Source: "its I/O cgroup's cap and counters (io.max and io.stat, or blkio.throttle.*) on " + p.Host})
		words = append(words, fmt.Sprintf("its cgroup caps its writes to %s at %.0f IOPS and it wrote %.0f/s (%.0f%% of the cap)",
			p.CapDevice, p.IOPSCap, p.CappedWriteIOPS, 100*p.CappedWriteIOPS/p.IOPSCap))
		if dev, w := deviceSpeed(p); w != "" {
			ev = append(ev, dev...)
			words = append(words, w)
		}
	}
	if p.Device == "" || p.Volatile {
		return ev, words
	}
	for _, v := range volumeUse(lv, p) {
		if v.AtCap {
			ev = append(ev, v.evidence(lv, p))
			words = append(words, v.words())
		}
	}
	return ev, words
}

// cgroupCapUsed says whether the member's own cgroup cap held it (used to
// the level capUsed).
func cgroupCapUsed(lv Levels, p *result.MemberProcess) bool {
	return p.Measured() && lv.AtCap(p.IOPSCap, p.CappedWriteIOPS)
}

// overStated says whether the device under a member's WAL wrote well past
// every provisioned figure the user stated (volume_over_stated of each):
// that figure is not its volume's, and its writes say nothing of a cap.
func overStated(p *result.MemberProcess, lv Levels) bool {
	figs := volumeUse(lv, p)
	for _, v := range figs {
		if v.Used <= lv.OverStated {
			return false
		}
	}
	return len(figs) > 0
}

// deviceSpeed is what the device under a capped member's WAL did: a cap
// above the device holds the writes before it, so the device answers fast.
func deviceSpeed(p *result.MemberProcess) ([]result.Evidence, string) {
	if p.Device == "" || (p.DeviceWriteAwait <= 0 && p.DeviceFlushAwait <= 0) {
		return nil, ""
	}
	src := "/proc/diskstats on " + p.Host
	ev := []result.Evidence{{What: fmt.Sprintf("mean time %s, the device under %s's WAL, completed a write", p.Device, p.Name), Observed: p.DeviceWriteAwait, Unit: "s", Source: src}}
	w := fmt.Sprintf("the device itself (%s) completed a write in %s", p.Device, units.Seconds(p.DeviceWriteAwait))
	if p.DeviceFlushes > 0 {
		ev = append(ev, result.Evidence{What: fmt.Sprintf("mean time %s flushed its cache", p.Device), Observed: p.DeviceFlushAwait, Unit: "s", Source: src})
		w += fmt.Sprintf(" and flushed in %s", units.Seconds(p.DeviceFlushAwait))
	}
	ev = append(ev, result.Evidence{What: fmt.Sprintf("share of the time %s was busy", p.Device), Observed: p.DeviceUtil, Unit: "ratio", Source: src})
	return ev, fmt.Sprintf("%s on average, %.0f%% busy", w, 100*p.DeviceUtil)
}

func (v VolumeFigure) text(x float64) string {
	if v.Unit == "B/s" {
		return units.Bytes(x) + "/s"
	}
	return fmt.Sprintf("%.0f", x)
}

func (v VolumeFigure) words() string {
	what := "IOPS"
	if v.Unit == "B/s" {
		what = "of throughput"
	}
	return fmt.Sprintf("the device wrote %s of the %s %s provisioned (%.0f%%)", v.text(v.Did), v.text(v.Provisioned), what, 100*v.Used)
}

func (v VolumeFigure) evidence(lv Levels, p *result.MemberProcess) result.Evidence {
	what := "write IOPS"
	if v.Unit == "B/s" {
		what = "bytes written per second"
	}
	return result.Evidence{What: fmt.Sprintf("share of the volume's provisioned %s (%s %s, %s) that %s, the device under %s's WAL, did (every writer on it)",
		what, v.Flag, v.text(v.Provisioned), v.Unit, p.Device, p.Name), Observed: v.Used, Limit: lv.CapUsed, Unit: "ratio", Source: "/proc/diskstats on " + p.Host}
}

// volumeUse is what the device under the member's WAL did of the volume's
// provisioned figures the user stated (none stated: nil).
func volumeUse(lv Levels, p *result.MemberProcess) []VolumeFigure {
	return lv.Volume(p.DeviceWriteIOPS, p.DeviceWriteBytes)
}

// volumeAtCap says whether the device under the member's WAL used the
// volume's provisioned figures to the level capUsed.
func volumeAtCap(lv Levels, p *result.MemberProcess) bool {
	if !p.Measured() || p.Device == "" || p.Volatile {
		return false
	}
	for _, v := range volumeUse(lv, p) {
		if v.AtCap {
			return true
		}
	}
	return false
}

// capNote says of a member whose cgroup caps its writes, under the level
// at which the cap is the cause, how much of it it used ("" without a cap).
func capNote(p *result.MemberProcess) string {
	if !p.Measured() || p.IOPSCap <= 0 {
		return ""
	}
	return fmt.Sprintf("its cgroup caps its writes to %s at %.0f IOPS, of which it used %.0f/s (%.0f%%)", p.CapDevice, p.IOPSCap, p.CappedWriteIOPS, 100*p.CappedWriteIOPS/p.IOPSCap)
}

// volumeHeadroom says, when the user stated the volume's provisioned
// figures, what the device under each member's WAL did of them and the
// headroom they leave; a device at its cap is the cause rules' to name.
func volumeHeadroom(r *result.Result) []result.Finding {
	lv := LevelsOf(r)
	if (lv.VolumeIOPS <= 0 && lv.VolumeBPS <= 0) || r.Prom != nil {
		return nil // a history's devices are the prom rules'
	}
	type dev struct {
		host, device string
		members      []string
		figs         []VolumeFigure
	}
	var devs []*dev
	var unseen []string
	for _, v := range etcdMembers(r) {
		p := v.Process
		if !p.Measured() || p.Device == "" || p.Volatile {
			unseen = append(unseen, v.Name)
			continue
		}
		var d *dev
		for _, x := range devs {
			if x.host == p.Host && x.device == p.Device {
				d = x
			}
		}
		if d == nil {
			d = &dev{host: p.Host, device: p.Device, figs: volumeUse(lv, p)}
			devs = append(devs, d)
		}
		d.members = append(d.members, v.Name)
	}
	f := result.Finding{ID: "volume_headroom", Severity: result.Info,
		Recommendation: "The provisioned figures are what the volume lets etcd write per second, whatever its latency per write: keep the writes etcd does at its peak " +
			"(the capacity sweep of etcdperf doctor finds it) well under them, or raise them (AWS EBS volume types; Azure managed disk sizes)."}
	var parts []string
	for _, d := range devs {
		var under []string
		for _, fg := range d.figs {
			if fg.AtCap {
				continue
			}
			under = append(under, fmt.Sprintf("%s: %s to spare", fg.words(), fg.text(fg.Provisioned-fg.Did)))
			f.Evidence = append(f.Evidence, result.Evidence{What: fmt.Sprintf("share of the volume's provisioned %s (%s) that %s on %s, under the WAL of %s, did",
				fg.Unit, fg.Flag, d.device, d.host, strings.Join(d.members, ", ")), Observed: fg.Used, Limit: lv.CapUsed, Unit: "ratio", Source: "/proc/diskstats on " + d.host})
		}
		if len(under) > 0 {
			f.Members = append(f.Members, d.members...)
			parts = append(parts, fmt.Sprintf("under the WAL of %s, %s", strings.Join(d.members, ", "), strings.Join(under, "; ")))
		}
	}
	if len(unseen) > 0 {
		f.Evidence = append(f.Evidence, result.Evidence{What: fmt.Sprintf("the devices under the WAL of %s are not seen from this host: their writes were not compared with the volume's provisioned figures",
			strings.Join(unseen, ", "))})
	}
	if len(parts) == 0 && len(unseen) == 0 {
		return nil
	}
	if len(parts) == 0 {
		f.Title = fmt.Sprintf("The volume's provisioned figures could not be compared with the writes of %s: etcdperf does not see their devices from this host", strings.Join(unseen, ", "))
		return []result.Finding{f}
	}
	f.Title = "Headroom under the volume's provisioned figures: " + strings.Join(parts, "; ")
	return []result.Finding{f}
}

// historyDevice judges what node-exporter says of the busiest device of a
// member's host in a history: with the volume's provisioned IOPS stated,
// a device that wrote iops_cap_used of them is at its cap; without, a
// device busy device_busy of the time whose writes/s held flat (within
// fsyncs_flat_growth across the points at which it was that busy) is at a
// ceiling, a provisioned cap's or the disk's own, which the figures cannot
// tell apart: the words say both and how to tell. Any other device is said
// in words, with no cause (""). Without a device: nothing.
func historyDevice(lv Levels, d *result.PromDisk) (result.Cause, []result.Evidence, string) {
	if d == nil || len(d.WriteIOPS) == 0 {
		return "", nil, ""
	}
	src := fmt.Sprintf("node-exporter's %s and node_disk_io_time_seconds_total (instance %s, device %s)", "node_disk_writes_completed_total", d.Instance, d.Device)
	var peakW, peakB float64
	var atBusy []float64
	for i, w := range d.WriteIOPS {
		peakW, peakB = max(peakW, w), max(peakB, d.Busy[i])
		if d.Busy[i] >= lv.DeviceBusy {
			atBusy = append(atBusy, w)
		}
	}
	which := fmt.Sprintf("the busiest of the %d devices of its host (%s, as node-exporter %s reports it)", d.Devices, d.Device, d.Instance)
	ev := []result.Evidence{
		{What: fmt.Sprintf("highest share of the time %s of node-exporter %s was busy, over %d point(s)", d.Device, d.Instance, len(d.Busy)), Observed: peakB, Limit: lv.DeviceBusy, Unit: "ratio", Source: src},
		{What: fmt.Sprintf("most writes per second %s of node-exporter %s completed", d.Device, d.Instance), Observed: peakW, Unit: "1/s", Source: src},
	}
	words := fmt.Sprintf("%s wrote up to %.0f/s, %.0f%% busy at most", which, peakW, 100*peakB)
	if lv.VolumeIOPS > 0 {
		used := peakW / lv.VolumeIOPS
		ev = append(ev, result.Evidence{What: fmt.Sprintf("share of the volume's provisioned %.0f write IOPS (--volume-iops) that %s wrote at most", lv.VolumeIOPS, d.Device),
			Observed: used, Limit: lv.CapUsed, Unit: "ratio", Source: src})
		if lv.AtCap(lv.VolumeIOPS, peakW) {
			return result.CauseIOPSCap, ev, fmt.Sprintf("%s: the device wrote %.0f of the %.0f IOPS provisioned (%.0f%%)", which, peakW, lv.VolumeIOPS, 100*used)
		}
		return "", ev, fmt.Sprintf("%s; it wrote %.0f of the %.0f IOPS provisioned (%.0f%%): %.0f to spare", words, peakW, lv.VolumeIOPS, 100*used, lv.VolumeIOPS-peakW)
	}
	if len(atBusy) == 0 {
		return "", ev, words
	}
	lo, hi := slices.Min(atBusy), slices.Max(atBusy)
	if !lv.Flat(lo, hi) {
		return "", ev, fmt.Sprintf("%s, its writes/s rising from %.0f to %.0f while it was that busy", words, lo, hi)
	}
	ev = append(ev, result.Evidence{What: fmt.Sprintf("spread of the writes/s of %s across the %d point(s) at which it was busy %.0f%% of the time or more", d.Device, len(atBusy), 100*lv.DeviceBusy),
		Observed: hi / max(lo, 1e-9), Limit: lv.FlatGrowth, Unit: "x", Source: src})
	return result.CauseIOPSCap, ev, fmt.Sprintf("%s was %.0f%% busy at most while it wrote a flat %.0f-%.0f/s: a provisioned-IOPS cap or a disk at its limit "+
		"(compare the writes/s with the volume's provisioned IOPS, or give --volume-iops; a disk at its limit also answers each write slowly: etcdperf disk --dir <the data dir> on that host)",
		which, 100*peakB, lo, hi)
}

// belowDevice says whether a member's slow fsyncs went below the device
// under its WAL: the device, as its host sees it, both completed its
// writes and flushed fast beside the fsync p99, and no provisioned figure
// of the volume was stated (a stated one tells a cap from the storage
// behind it: capEvidence and the disk).
func belowDevice(lv Levels, p *result.MemberProcess, p99 float64) bool {
	if !p.Measured() || p.Device == "" || p.Volatile || inMemory(p) || lv.VolumeIOPS > 0 || lv.VolumeBPS > 0 {
		return false
	}
	return p.DeviceWriteIOPS > 0 && p.DeviceWriteAwait > 0 && p.DeviceWriteAwait*lv.FastFactor <= p99
}

// inMemory says whether a member's WAL is on a RAM disk (zram, brd) whose
// writes no cgroup caps: nothing lies below that device, and each of its
// writes is a copy (and a compression) the CPUs make. A cgroup's cap on
// it holds its writes as it would a disk's, and is the cap rules' to say.
func inMemory(p *result.MemberProcess) bool {
	return p.Measured() && p.RAMDisk && p.IOPSCap <= 0
}

// belowWords says what the device under a member's WAL did, for the
// reader to set against the volume's provisioned figures.
func belowWords(p *result.MemberProcess) string {
	return fmt.Sprintf("the device (%s) wrote %.0f IOPS (%s/s), %.0f%% busy, each write in %s on average: "+
		"near the volume's provisioned IOPS that is its cap, far under them the storage behind it",
		p.Device, p.DeviceWriteIOPS, units.Bytes(p.DeviceWriteBytes), 100*p.DeviceUtil, units.Seconds(p.DeviceWriteAwait))
}

// belowEvidence is the device's writes and busy share behind belowWords.
func belowEvidence(p *result.MemberProcess) []result.Evidence {
	src := "/proc/diskstats on " + p.Host
	return []result.Evidence{
		{What: fmt.Sprintf("write IOPS of %s, the device under %s's WAL (every writer on it)", p.Device, p.Name), Observed: p.DeviceWriteIOPS, Unit: "ops/s", Source: src},
		{What: fmt.Sprintf("mean time %s completed a write", p.Device), Observed: p.DeviceWriteAwait, Unit: "s", Source: src},
		{What: fmt.Sprintf("share of the time %s was busy", p.Device), Observed: p.DeviceUtil, Unit: "ratio", Source: src},
	}
}
