package diagnose

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
)

// capped is a member whose cgroup caps its writes at 150 IOPS on vda, on a
// device that completes a write in 0.1ms and flushes in 135µs.
func capped(wrote float64) *result.MemberProcess {
	return proc(prompt, func(p *result.MemberProcess) {
		p.IOPSCap, p.CapDevice, p.CappedWriteIOPS = 150, "vda", wrote
		p.DeviceFlushAwait, p.DeviceWriteAwait, p.DeviceUtil, p.DeviceWriteIOPS = 135e-6, 100e-6, 0.04, wrote
	})
}

// device is a member on vda that wrote iops/s, each write taking await.
func device(iops, await float64) *result.MemberProcess {
	return proc(prompt, func(p *result.MemberProcess) {
		p.DeviceWriteIOPS, p.DeviceWriteBytes, p.DeviceWriteAwait, p.DeviceFlushAwait, p.DeviceUtil = iops, iops*16384, await, await, 0.9
	})
}

// withLimits sets the run's levels as --limit (and --volume-iops) do.
func withLimits(t *testing.T, r *result.Result, overrides ...string) *result.Result {
	t.Helper()
	criteria, err := limits.Override(limits.Table, overrides)
	if err != nil {
		t.Fatal(err)
	}
	r.Limits = limits.Changed(criteria)
	return r
}

func findingByID(fs []result.Finding, id string) (result.Finding, bool) {
	i := slices.IndexFunc(fs, func(f result.Finding) bool { return f.ID == id })
	if i < 0 {
		return result.Finding{}, false
	}
	return fs[i], true
}

// A member whose cgroup caps its writes and that used the cap is named
// with the cap, not its disk (its device flushed fast); under its limits,
// it is still named, as a warning; a cap it did not use is not named.
func TestIOPSCapNamed(t *testing.T) {
	ok := member{0.003, prompt}
	for _, c := range []struct {
		name      string
		ms        []member
		overrides []string
		want      map[result.Cause]string
		sev       result.Severity
		verdict   result.Verdict
	}{
		{"a cap used, its fsync slow: the cap, not the disk", []member{ok, ok, {0.04, capped(140)}}, nil,
			map[result.Cause]string{result.CauseIOPSCap: "m3"}, result.Critical, result.Fail},
		{"a cap used, its latencies under their limits: named as a warning", []member{ok, ok, {0.004, capped(140)}}, nil,
			map[result.Cause]string{result.CauseIOPSCap: "m3"}, result.Warning, result.Warn},
		{"a cap used on a slow device: both", []member{ok, ok, {0.04, proc(capped(140), func(p *result.MemberProcess) {
			p.DeviceFlushAwait, p.DeviceWriteAwait = 0.03, 0.03
		})}}, nil, map[result.Cause]string{result.CauseIOPSCap: "m3", result.CauseDisk: "m3"}, result.Critical, result.Fail},
		{"a cap not used, its fsync slow on a slow device: the disk", []member{ok, ok, {0.04, proc(capped(30), func(p *result.MemberProcess) {
			p.DeviceFlushAwait, p.DeviceWriteAwait = 0.03, 0.03
		})}}, nil, map[result.Cause]string{result.CauseDisk: "m3"}, result.Critical, result.Fail},
		{"a cap not used, its latencies under their limits: nothing named", []member{ok, ok, {0.004, capped(30)}}, nil,
			map[result.Cause]string{}, "", result.Pass},
		{"--limit iops_cap_used=0.95: 140 of 150 is not used enough", []member{ok, ok, {0.004, capped(140)}}, []string{"iops_cap_used=0.95"},
			map[result.Cause]string{}, "", result.Pass},
		{"--limit iops_cap_used=0.15: 30 of 150 is", []member{ok, ok, {0.004, capped(30)}}, []string{"iops_cap_used=0.15"},
			map[result.Cause]string{result.CauseIOPSCap: "m3"}, result.Warning, result.Warn},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := withLimits(t, metricsOf(c.ms, nil), c.overrides...)
			fs := Run(r)
			if got := causes(fs); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("causes %v, want %v; findings %+v", got, c.want, fs)
			}
			if v := Verdict(r.Checks, fs); v != c.verdict {
				t.Errorf("verdict %s, want %s", v, c.verdict)
			}
			f, ok := findingByID(fs, FindingMemberIOPSCap)
			if !ok {
				return
			}
			if f.Severity != c.sev {
				t.Errorf("severity %s, want %s", f.Severity, c.sev)
			}
			for _, w := range []string{"caps its writes to vda at 150 IOPS", "the device itself (vda) completed a write in "} {
				if !strings.Contains(f.Title, w) {
					t.Errorf("title %q lacks %q", f.Title, w)
				}
			}
			if f.Recommendation == "" || !strings.Contains(f.Recommendation, "provisioned IOPS") {
				t.Errorf("recommendation %q", f.Recommendation)
			}
		})
	}
	// The device's own speed is the cap's evidence: fast, it is not the disk.
	fs := Run(metricsOf([]member{{0.04, capped(140)}}, nil))
	if f, ok := findingByID(fs, FindingMemberIOPSCap); !ok || !strings.Contains(f.Title, "the device itself (vda) completed a write in 100µs and flushed in 135µs on average, 4% busy") {
		t.Errorf("iops cap finding %+v", fs)
	}
	// A cap not used is said beside a disk verdict.
	fs = Run(metricsOf([]member{{0.04, proc(capped(30), func(p *result.MemberProcess) { p.DeviceFlushAwait = 0.03 })}}, nil))
	if f, ok := findingByID(fs, FindingMemberDisk); !ok || !strings.Contains(f.Title, "at 150 IOPS, of which it used 30/s (20%)") {
		t.Errorf("disk finding %+v", fs)
	}
}

// With the volume's provisioned IOPS stated, a device that wrote most of
// them is at its cap (named whether its device was fast or slow), and one
// under them has the headroom said.
func TestVolumeIOPS(t *testing.T) {
	ok := member{0.003, device(50, 0.0002)}
	for _, c := range []struct {
		name      string
		ms        []member
		overrides []string
		want      map[result.Cause]string
		title     string
		headroom  string
	}{
		{"not stated: a slow device is the disk", []member{ok, ok, {0.04, device(2900, 0.012)}}, nil,
			map[result.Cause]string{result.CauseDisk: "m3"}, "", ""},
		{"stated and used, the device queued: the cap", []member{ok, ok, {0.04, device(2900, 0.012)}}, []string{"volume_iops=3000"},
			map[result.Cause]string{result.CauseIOPSCap: "m3"}, "the device wrote 2900 of the 3000 IOPS provisioned (97%)",
			"the device wrote 50 of the 3000 IOPS provisioned (2%): 2950 to spare"},
		{"stated and used, the latencies under their limits: a warning", []member{ok, ok, {0.005, device(2900, 0.001)}}, []string{"volume_iops=3000"},
			map[result.Cause]string{result.CauseIOPSCap: "m3"}, "the device wrote 2900 of the 3000 IOPS provisioned (97%)", ""},
		{"stated and not used: the disk, and the headroom", []member{ok, ok, {0.04, device(500, 0.012)}}, []string{"volume_iops=3000"},
			map[result.Cause]string{result.CauseDisk: "m3"}, "", "the device wrote 500 of the 3000 IOPS provisioned (17%): 2500 to spare"},
		{"--limit iops_cap_used=0.1: 500 of 3000 is used", []member{ok, ok, {0.04, device(500, 0.012)}}, []string{"volume_iops=3000", "iops_cap_used=0.1"},
			map[result.Cause]string{result.CauseIOPSCap: "m3"}, "the device wrote 500 of the 3000 IOPS provisioned (17%)", ""},
		{"a member of another volume wrote 4x the stated figure under its limits: not named, while m3's cap is (as measured: m1 and m2 on a RAM disk, m3 on a volume capped at 300)",
			[]member{{0.001, device(1204, 0.00001)}, {0.001, device(1203, 0.00001)}, {0.058, device(394, 0.00004)}}, []string{"volume_iops=300"},
			map[result.Cause]string{result.CauseIOPSCap: "m3"}, "the device wrote 394 of the 300 IOPS provisioned (131%)", ""},
		{"--limit volume_over_stated=5: 4x the stated figure is the volume's, m1 and m2 named too",
			[]member{{0.001, device(1204, 0.00001)}, {0.001, device(1203, 0.00001)}, {0.058, device(394, 0.00004)}}, []string{"volume_iops=300", "volume_over_stated=5"},
			map[result.Cause]string{result.CauseIOPSCap: "m3,m1,m2"}, "m1's disk latencies stayed under their limits", ""},
		{"throughput stated and used", []member{ok, ok, {0.04, device(2000, 0.012)}}, []string{"volume_write_bps=33554432"},
			map[result.Cause]string{result.CauseIOPSCap: "m3"}, "the device wrote 31.2 MiB/s of the 32.0 MiB/s of throughput provisioned (98%)", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			for i := range c.ms {
				c.ms[i].proc = proc(c.ms[i].proc, func(p *result.MemberProcess) { p.Device = fmt.Sprintf("vd%c", 'a'+i) })
			}
			fs := Run(withLimits(t, metricsOf(c.ms, nil), c.overrides...))
			if got := causes(fs); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("causes %v, want %v; findings %+v", got, c.want, fs)
			}
			if c.title != "" {
				if f, ok := findingByID(fs, FindingMemberIOPSCap); !ok || !strings.Contains(f.Title, c.title) {
					t.Errorf("no %s finding saying %q: %+v", FindingMemberIOPSCap, c.title, fs)
				}
			}
			h, ok := findingByID(fs, "volume_headroom")
			if len(c.overrides) == 0 && ok {
				t.Errorf("headroom said without a stated volume: %+v", h)
			}
			if c.headroom != "" && (!ok || !strings.Contains(h.Title, c.headroom) || h.Severity != result.Info) {
				t.Errorf("no headroom saying %q: %+v", c.headroom, h)
			}
		})
	}
}

// A member whose fsyncs were slow while the device under its WAL answered
// fast and its CPU was free: the time went below the device its host sees
// (as measured: a volume capped at 300 IOPS below a loop device, which
// completed a write in 0.94ms and flushed in 37µs while etcd's WAL fsync
// p99 was 59.8ms). Both a cap and the storage behind the volume are said;
// the volume's stated figures then tell them apart.
func TestBelowDevice(t *testing.T) {
	ok := member{0.001, device(1193, 0.00002)}
	below := proc(device(391, 0.00094), func(p *result.MemberProcess) {
		p.DeviceFlushAwait, p.DeviceFlushes, p.DeviceUtil, p.DeviceWriteBytes = 37e-6, 130, 0.40, 1.5e6
	})
	for _, c := range []struct {
		name      string
		m3        member
		overrides []string
		want      result.Cause
		title     string
	}{
		{"not stated: below the device, both said", member{0.0598, below}, nil, result.CauseDiskOrIOPSCap,
			"the device (vdc) wrote 391 IOPS (1.4 MiB/s), 40% busy, each write in 940µs on average: near the volume's provisioned IOPS that is its cap"},
		{"stated, and near them: the cap", member{0.0598, below}, []string{"volume_iops=400"}, result.CauseIOPSCap,
			"the device wrote 391 of the 400 IOPS provisioned (98%)"},
		{"stated, and far under them: the storage behind it", member{0.0598, below}, []string{"volume_iops=3000"}, result.CauseDisk, "the time went to its storage"},
		{"a device whose writes took a tenth of the p99: the disk", member{0.0598, proc(below, func(p *result.MemberProcess) { p.DeviceWriteAwait = 0.006 })}, nil,
			result.CauseDisk, "the time went to its storage"},
		// A RAM disk (zram, brd) has nothing below it: its writes are
		// copies the CPUs make, fast or slow.
		{"a RAM disk, fast: the CPU", member{0.0598, proc(below, func(p *result.MemberProcess) { p.RAMDisk, p.DeviceWriteAwait = true, 10e-6 })}, nil,
			result.CauseCPU, "in memory: its writes are copies the CPUs make"},
		{"a RAM disk, slow: the CPU", member{0.0598, proc(below, func(p *result.MemberProcess) { p.RAMDisk, p.DeviceWriteAwait = true, 0.02 })}, nil,
			result.CauseCPU, "in memory: its writes are copies the CPUs make"},
		// A cgroup's cap on a RAM disk's writes, not used up: as on any
		// device, below it or a cap.
		{"a RAM disk capped by a cgroup", member{0.0598, proc(below, func(p *result.MemberProcess) {
			p.RAMDisk, p.DeviceWriteAwait, p.IOPSCap, p.CapDevice, p.CappedWriteIOPS = true, 10e-6, 1000, "zram2", 391
		})}, nil, result.CauseDiskOrIOPSCap, "near the volume's provisioned IOPS that is its cap"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ms := []member{ok, ok, c.m3}
			for i := range ms {
				ms[i].proc = proc(ms[i].proc, func(p *result.MemberProcess) {
					if p.Device = fmt.Sprintf("vd%c", 'a'+i); p.RAMDisk {
						p.Device = fmt.Sprintf("zram%d", i)
					}
				})
			}
			fs := Run(withLimits(t, metricsOf(ms, nil), c.overrides...))
			want := map[result.Cause]string{c.want: "m3"}
			if got := causes(fs); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("causes %v, want %v; findings %+v", got, want, fs)
			}
			f, found := findingByID(fs, c.want.Info().Finding.ID)
			if !found || !strings.Contains(f.Title, c.title) || f.Severity != result.Critical {
				t.Errorf("no critical %s finding saying %q: %+v", c.want.Info().Finding.ID, c.title, fs)
			}
		})
	}
}

// hostDisk is node-exporter's busiest device of a member's host: writes/s
// and busy share at each point.
func hostDisk(writes, busy []float64) *result.PromDisk {
	d := &result.PromDisk{Instance: "10.0.0.1:9100", Device: "nvme1n1", Devices: 2, WriteIOPS: writes, Busy: busy}
	for i := range writes {
		d.Time = append(d.Time, float64(1700000000+15*i))
	}
	return d
}

// A history with node-exporter's device of the member's host: writes flat
// at a ceiling on a device near always busy, with a slow fsync, is a
// write cap (or a disk at its limit: both said, and how to tell); with
// --volume-iops, the writes are compared with it; writes that rise with a
// busy device, or a device not busy, leave the disk or the CPU.
func TestHistoryIOPSCap(t *testing.T) {
	flat := hostDisk([]float64{3000, 2990, 3010, 2995}, []float64{0.98, 0.99, 0.97, 0.99})
	rising := hostDisk([]float64{1000, 1800, 2600, 3000}, []float64{0.85, 0.9, 0.95, 0.99})
	idle := hostDisk([]float64{140, 150, 148, 150}, []float64{0.03, 0.04, 0.03, 0.04})
	for _, c := range []struct {
		name      string
		fsync     float64
		disk      *result.PromDisk
		overrides []string
		want      result.Cause
		sev       result.Severity
		title     string
	}{
		{"no device joined: the disk or the CPU", 0.02, nil, nil, result.CauseDiskOrCPU, result.Critical, "says nothing of its process"},
		{"writes flat on a busy device: a cap or a disk at its limit", 0.02, flat, nil, result.CauseIOPSCap, result.Critical,
			"a provisioned-IOPS cap or a disk at its limit (compare the writes/s with the volume's provisioned IOPS, or give --volume-iops"},
		{"writes rising on a busy device: the disk or the CPU", 0.02, rising, nil, result.CauseDiskOrCPU, result.Critical, "rising from 1000 to 3000"},
		{"an idle device: the disk or the CPU", 0.02, idle, nil, result.CauseDiskOrCPU, result.Critical, "wrote up to 150/s, 4% busy at most"},
		{"--limit device_busy=0.999: no point that busy", 0.02, flat, []string{"device_busy=0.999"}, result.CauseDiskOrCPU, result.Critical, "99% busy at most"},
		{"--volume-iops 3000, used", 0.02, rising, []string{"volume_iops=3000"}, result.CauseIOPSCap, result.Critical, "the device wrote 3000 of the 3000 IOPS provisioned (100%)"},
		{"--volume-iops 16000, not used: the headroom said", 0.02, flat, []string{"volume_iops=16000"}, result.CauseDiskOrCPU, result.Critical,
			"it wrote 3010 of the 16000 IOPS provisioned (19%): 12990 to spare"},
		{"--volume-iops 3000, used, under the limits: a warning", 0.004, flat, []string{"volume_iops=3000"}, result.CauseIOPSCap, result.Warning, "of the 3000 IOPS provisioned"},
		{"--volume-iops 3000, used, under the limits, iops_cap_used=1.01: nothing", 0.004, flat, []string{"volume_iops=3000", "iops_cap_used=1.01"}, "", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := historyResult(c.fsync, nil, 0)
			r.Prom.Members[0].Disk = c.disk
			fs := Run(withLimits(t, r, c.overrides...))
			got := causes(fs)
			if c.want == "" {
				if len(got) != 0 {
					t.Fatalf("causes %v, want none", got)
				}
				return
			}
			if len(got) != 1 || got[c.want] != "10.0.0.1:2379" {
				t.Fatalf("causes %v, want %s on 10.0.0.1:2379; findings %+v", got, c.want, fs)
			}
			i := slices.IndexFunc(fs, func(f result.Finding) bool { return f.Cause == c.want })
			if f := fs[i]; f.Severity != c.sev || !strings.Contains(f.Title, c.title) {
				t.Errorf("%s %s %q, want %s and %q", f.ID, f.Severity, f.Title, c.sev, c.title)
			}
		})
	}
}
