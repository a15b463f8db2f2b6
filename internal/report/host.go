package report

import (
	"strconv"

	"gonum.org/v1/plot/plotter"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// The host section: the USE metrics of the device under test and of the
// CPUs while the run lasted (/proc/diskstats and /proc/stat, as iostat and
// node-exporter read them).
func init() {
	// host makes a row of the run's summary; present tells whether the
	// run has the value (device figures need a device, flush figures a
	// kernel that counts flushes).
	host := func(label, unit string, better Better, get func(s result.HostSample) float64, present func(h *result.Host) bool) Metric {
		return Metric{Label: label, Unit: unit, Better: better, Get: func(r *result.Result) (Value, bool) {
			return Value{V: get(r.Host.Summary)}, present(r.Host)
		}}
	}
	device := func(h *result.Host) bool { return h.Device != "" }
	flushes := func(h *result.Host) bool { return h.Device != "" && h.Summary.FlushIOPS > 0 }
	always := func(*result.Host) bool { return true }
	Register(Section{
		ID: "host", Title: "Host: the device and the CPUs during the run", Order: 15,
		Has: func(r *result.Result) bool { return r.Host != nil },
		Metrics: []Metric{
			host("device util", "ratio", Neither, func(s result.HostSample) float64 { return s.Util }, device),
			host("device write await", "s", Lower, func(s result.HostSample) float64 { return s.WriteAwait }, device),
			host("device flush await", "s", Lower, func(s result.HostSample) float64 { return s.FlushAwait }, flushes),
			host("device queue depth", "number", Neither, func(s result.HostSample) float64 { return s.QueueDepth }, device),
			host("CPU iowait", "ratio", Lower, func(s result.HostSample) float64 { return s.IOWait }, always),
			host("CPU busy", "ratio", Neither, func(s result.HostSample) float64 { return s.CPUBusy }, always),
			host("CPU steal", "ratio", Lower, func(s result.HostSample) float64 { return s.Steal }, always),
		},
		Build: hostBlock,
	})
}

func hostBlock(runs []Run) Block {
	var b Block
	var busy, await, cpu []line
	for _, r := range runs {
		h := r.Result.Host
		if len(h.Series) == 0 {
			continue
		}
		var util, iowait, wAwait, fAwait, cpuBusy, steal plotter.XYs
		for _, s := range h.Series {
			cpuBusy = append(cpuBusy, plotter.XY{X: s.T, Y: s.CPUBusy * 100})
			steal = append(steal, plotter.XY{X: s.T, Y: s.Steal * 100})
			util = append(util, plotter.XY{X: s.T, Y: s.Util * 100})
			iowait = append(iowait, plotter.XY{X: s.T, Y: s.IOWait * 100})
			wAwait = append(wAwait, plotter.XY{X: s.T, Y: s.WriteAwait})
			fAwait = append(fAwait, plotter.XY{X: s.T, Y: s.FlushAwait})
		}
		if h.Device != "" {
			busy = append(busy, line{Label: r.Label + " " + h.Device + " util", Run: r.Index, Pts: util})
			if len(positive(wAwait)) > 0 {
				await = append(await, line{Label: r.Label + " " + h.Device + " write", Run: r.Index, Pts: wAwait})
			}
			if len(positive(fAwait)) > 0 {
				await = append(await, line{Label: r.Label + " " + h.Device + " flush", Run: r.Index, Pts: fAwait, Dashed: true})
			}
		}
		busy = append(busy, line{Label: r.Label + " CPU iowait", Run: r.Index, Pts: iowait, Dashed: true})
		cpu = append(cpu, line{Label: r.Label + " busy", Run: r.Index, Pts: cpuBusy},
			line{Label: r.Label + " steal", Run: r.Index, Pts: steal, Dashed: true})
	}
	var short shortCharts
	percent := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + "%" }
	if c, ok := timeChart("host-util", "device utilisation and CPU iowait over time",
		"How busy the device under test was (iostat %util, solid) and how much CPU time waited for I/O (dashed), each second.",
		"percent", busy, percent, false); ok {
		b.Charts = append(b.Charts, c)
	} else {
		short.add("device utilisation and CPU iowait", busy)
	}
	if c, ok := timeChart("host-await", "device write and flush await over time",
		"Mean time a write (solid) or a cache flush, what fdatasync sends (dashed), spent queued and serviced, each second.",
		"await", await, units.Seconds, spansDecades(await)); ok {
		b.Charts = append(b.Charts, c)
	} else {
		short.add("device write and flush await", await)
	}
	if c, ok := timeChart("host-cpu", "CPU busy and steal over time",
		"Share of all CPUs' time spent working (solid) and taken by the hypervisor for other guests (dashed), each second: a busy CPU delays fdatasync as much as a slow disk.",
		"percent", cpu, percent, false); ok {
		b.Charts = append(b.Charts, c)
	} else {
		short.add("CPU busy and steal", cpu)
	}
	if n := short.note(); n != "" {
		b.Notes = append(b.Notes, n)
	}
	return b
}
