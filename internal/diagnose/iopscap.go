package diagnose

import (
	"fmt"
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
func capEvidence(lv causeLevels, p *result.MemberProcess) ([]result.Evidence, []string) {
	if !p.Measured() {
		return nil, nil
	}
	var ev []result.Evidence
	var words []string
	if p.IOPSCap > 0 && p.CappedWriteIOPS >= lv.capUsed*p.IOPSCap {
		ev = append(ev, result.Evidence{What: fmt.Sprintf("share of the %.0f write IOPS that %s's cgroup allows on %s which it used (%.0f writes/s)",
			p.IOPSCap, p.Name, p.CapDevice, p.CappedWriteIOPS), Observed: p.CappedWriteIOPS / p.IOPSCap, Limit: lv.capUsed, Unit: "ratio",
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
		if v.used >= lv.capUsed {
			ev = append(ev, v.evidence(lv, p))
			words = append(words, v.words())
		}
	}
	return ev, words
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

// volumeFigure is one of the volume's provisioned figures and what the
// device under a member's WAL did of it.
type volumeFigure struct {
	flag, unit       string
	did, provisioned float64
	used             float64
}

func (v volumeFigure) text(x float64) string {
	if v.unit == "B/s" {
		return units.Bytes(x) + "/s"
	}
	return fmt.Sprintf("%.0f", x)
}

func (v volumeFigure) words() string {
	what := "IOPS"
	if v.unit == "B/s" {
		what = "of throughput"
	}
	return fmt.Sprintf("the device wrote %s of the %s %s provisioned (%.0f%%)", v.text(v.did), v.text(v.provisioned), what, 100*v.used)
}

func (v volumeFigure) evidence(lv causeLevels, p *result.MemberProcess) result.Evidence {
	what := "write IOPS"
	if v.unit == "B/s" {
		what = "bytes written per second"
	}
	return result.Evidence{What: fmt.Sprintf("share of the volume's provisioned %s (%s %s, %s) that %s, the device under %s's WAL, did (every writer on it)",
		what, v.flag, v.text(v.provisioned), v.unit, p.Device, p.Name), Observed: v.used, Limit: lv.capUsed, Unit: "ratio", Source: "/proc/diskstats on " + p.Host}
}

// volumeUse is what the device under the member's WAL did of the volume's
// provisioned figures the user stated (none stated: nil).
func volumeUse(lv causeLevels, p *result.MemberProcess) []volumeFigure {
	var out []volumeFigure
	if lv.volumeIOPS > 0 {
		out = append(out, volumeFigure{flag: "--volume-iops", unit: "IOPS", did: p.DeviceWriteIOPS, provisioned: lv.volumeIOPS, used: p.DeviceWriteIOPS / lv.volumeIOPS})
	}
	if lv.volumeBPS > 0 {
		out = append(out, volumeFigure{flag: "--volume-mbps", unit: "B/s", did: p.DeviceWriteBytes, provisioned: lv.volumeBPS, used: p.DeviceWriteBytes / lv.volumeBPS})
	}
	return out
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
	lv := causeLevelsOf(r)
	if (lv.volumeIOPS <= 0 && lv.volumeBPS <= 0) || r.Prom != nil {
		return nil // a history's devices are the prom rules'
	}
	type dev struct {
		host, device string
		members      []string
		figs         []volumeFigure
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
			"(etcdperf capacity finds it) well under them, or raise them (AWS EBS volume types; Azure managed disk sizes)."}
	var parts []string
	for _, d := range devs {
		var under []string
		for _, fg := range d.figs {
			if fg.used >= lv.capUsed {
				continue
			}
			under = append(under, fmt.Sprintf("%s: %s to spare", fg.words(), fg.text(fg.provisioned-fg.did)))
			f.Evidence = append(f.Evidence, result.Evidence{What: fmt.Sprintf("share of the volume's provisioned %s (%s) that %s on %s, under the WAL of %s, did",
				fg.unit, fg.flag, d.device, d.host, strings.Join(d.members, ", ")), Observed: fg.used, Limit: lv.capUsed, Unit: "ratio", Source: "/proc/diskstats on " + d.host})
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
