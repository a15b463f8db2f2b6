package render

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

func init() { RegisterText("doctor", doctorText) }

// doctorText is `etcdperf doctor`: one block per location (the probe, the
// load, etcd's metrics, the CPUs and the device, the checks, findings and
// verdict), then the locations side by side with their ratios.
func doctorText(w io.Writer, r *result.Result) error {
	fmt.Fprintf(w, "etcdperf doctor: %s\n", doctorLoadLine(r))
	for i := range r.Runs {
		run := &r.Runs[i]
		title := runTitle(run)
		if doctorParams(r).Node != "" && title != run.Name {
			// doctor --node: the member, and its data dir's storage.
			title = run.Name + ": data dir " + title
		}
		fmt.Fprintf(w, "\n== %s ==\n", title)
		targetBlock(w, run, len(r.Runs) > 1, incomplete(r))
	}
	if len(r.Runs) > 1 && r.Doctor != nil {
		fmt.Fprintf(w, "\nSide by side (x: the ratio to %s):\n", r.Runs[0].Name)
		sideBySide(w, r)
	}
	return nil
}

// doctorParams are r's, or none.
func doctorParams(r *result.Result) *result.DoctorParams {
	if p, ok := r.Params.(*result.DoctorParams); ok {
		return p
	}
	return &result.DoctorParams{}
}

func doctorLoadLine(r *result.Result) string {
	p := doctorParams(r)
	s := fmt.Sprintf("profile %s (%d clients at %g puts/s of 1 KiB)", p.Load, p.Clients, p.Rate)
	if p.ObserveOnly != nil && *p.ObserveOnly {
		s = "watching, without load,"
	}
	if p.Duration > 0 {
		s += " for " + units.Seconds(p.Duration)
	}
	switch n := len(r.Runs); {
	case n > 1:
		s += fmt.Sprintf(" on each of %d locations", n)
	case n == 1 && r.Runs[0].Target != nil && r.Runs[0].Target.Kind == "external":
		s += " against " + r.Runs[0].Name
	}
	if p.Noise {
		s += ", then again with a neighbour writing bulk data"
	}
	if p.SimulateFsyncDelay > 0 {
		s += fmt.Sprintf(", on a slow view of the disk (fsync +%s)", units.Seconds(p.SimulateFsyncDelay))
	}
	return s
}

func runTitle(r *result.Result) string {
	if r.Env == nil || r.Env.Dir == "" {
		return r.Name
	}
	return where(r.Env)
}

// targetBlock prints one location's figures and its judgement, with its
// own verdict line when there are several. The location where a run ended
// early leaves saying so to the whole run's (ended) line.
func targetBlock(w io.Writer, r *result.Result, verdict, ended bool) {
	if d := r.Disk; d != nil && d.SyncLatency != nil {
		l := d.SyncLatency
		iops := fmt.Sprintf("%.0f IOPS", d.IOPS)
		if d.Rate > 0 {
			iops = fmt.Sprintf("paced at %g/s", d.Rate)
		}
		fmt.Fprintf(w, "  disk probe: fdatasync p50 %s, p99 %s, max %s; %s (%s in %s)\n",
			units.Seconds(l.P50), units.Seconds(l.P99), units.Seconds(l.Max), iops, units.Bytes(float64(d.Bytes)), units.Seconds(d.Seconds))
		if d.Stopped != "" {
			fmt.Fprintf(w, "    stopped early, to leave the device to etcd: %s\n", d.Stopped)
		}
		for _, n := range d.Notes {
			fmt.Fprintf(w, "    note: %s\n", n)
		}
	}
	if s := r.Server; s != nil && r.Bench == nil {
		for _, n := range s.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
	}
	if r.Doctor != nil && len(r.Doctor.Targets) == 1 && r.Doctor.Targets[0].DiskProbe != "" {
		fmt.Fprintf(w, "  disk probe beside the member: %s\n", r.Doctor.Targets[0].DiskProbe)
	}
	if b, pf := r.Bench, r.Perf; b != nil && pf != nil {
		fmt.Fprintf(w, "  %s\n", targetLine(r))
		var lb bytes.Buffer
		loadBlock(&lb, r)
		serverText(&lb, r.Server)
		io.WriteString(w, indent(strings.TrimPrefix(lb.String(), "\n"), "  "))
		for _, n := range append(append([]string{}, b.Notes...), pf.Notes...) {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
	}
	if r.Capacity != nil {
		capacityText(w, r.Capacity, "  ")
	}
	if r.Soak != nil {
		soakText(w, r.Soak, "  ")
	}
	if r.Bench == nil && r.Server != nil {
		// doctor --node without load: what the member did meanwhile.
		var sb bytes.Buffer
		serverText(&sb, r.Server)
		io.WriteString(w, indent(strings.TrimPrefix(sb.String(), "\n"), "  "))
	}
	if r.Cluster != nil {
		var cb bytes.Buffer
		ClusterStateText(&cb, r.Cluster)
		io.WriteString(w, indent(strings.TrimPrefix(cb.String(), "\n"), "  "))
	}
	var lp result.NodeLogParams
	if p, ok := r.Params.(*result.CheckParams); ok {
		lp = p.NodeLogParams
	}
	if l := r.Logs; l != nil {
		var events int64
		for _, n := range l.Classes {
			events += n
		}
		fmt.Fprintf(w, "  log (%s): %s during the run, %s etcd counts against its limits", lp.LogSource(), plural(l.Lines-l.OutsideWindow, "line"), plural(events, "warning"))
		if l.OutsideWindow > 0 {
			fmt.Fprintf(w, " (%s not read)", plural(l.OutsideWindow, "earlier line"))
		}
		fmt.Fprintln(w)
	}
	if lp.LogError != "" {
		fmt.Fprintf(w, "  the member's log could not be read: %s\n", lp.LogError)
	}
	for _, n := range r.Runs {
		noisyLine(w, r, &n)
	}
	var jb bytes.Buffer
	j := *r
	if !verdict || (ended && incomplete(r)) {
		j.Verdict, j.Error = "", ""
	}
	Judgement(&jb, &j)
	io.WriteString(w, indent(jb.String(), "  "))
}

// noisyLine says what the same load did with a neighbour writing.
func noisyLine(w io.Writer, quiet, n *result.Result) {
	if quiet.Doctor == nil || len(quiet.Doctor.Targets) != 1 || quiet.Doctor.Targets[0].Noise == nil {
		return
	}
	e := quiet.Doctor.Targets[0].Noise
	fmt.Fprintf(w, "\n  With a neighbour writing bulk data on the device (%s during the load):\n", units.Bytes(float64(e.BytesWritten)))
	fmt.Fprintf(w, "    etcd's WAL fsync p99 %s (%.1fx), backend commit p99 %s, request p99 %s (%.1fx)",
		units.Seconds(e.WALFsyncP99), e.WALFsyncRatio, units.Seconds(e.BackendCommitP99), units.Seconds(e.RequestP99), e.RequestRatio)
	if n.Bench != nil && n.Perf != nil {
		fmt.Fprintf(w, ", %.0f of %g puts/s", n.Bench.Throughput, n.Perf.TargetRate)
	}
	if e.DeviceUtil > 0 {
		fmt.Fprintf(w, ", device busy %.0f%%", e.DeviceUtil*100)
	}
	fmt.Fprintf(w, ": %s\n", strings.ToUpper(string(n.Verdict)))
}

// indent prefixes every non-empty line of s.
func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			b.WriteString(prefix)
		}
		b.WriteString(l)
	}
	return b.String()
}

// row is one line of the side-by-side table: a text per target, or a
// value (with its ratio to the first target's) and whether it is only an
// upper bound.
type row struct {
	name  string
	value func(t result.DoctorTarget) (float64, bool)
	bound func(t result.DoctorTarget) bool
	unit  string
	text  func(t result.DoctorTarget) string
}

var doctorRows = []row{
	{name: "file system", text: func(t result.DoctorTarget) string {
		s := t.FSType
		switch {
		case t.Volatile:
			s += " (memory, not durable)"
		case t.Device != "":
			s += " on " + t.Device
		}
		if t.SimulatedFsyncDelay > 0 {
			s += fmt.Sprintf(" +%s/fsync", units.Seconds(t.SimulatedFsyncDelay))
		}
		return s
	}},
	{name: "verdict", text: func(t result.DoctorTarget) string { return strings.ToUpper(string(t.Verdict)) }},
	{name: "limited by", text: func(t result.DoctorTarget) string { return string(t.LimitedBy) }},
	{name: "disk fdatasync p99", unit: "s", value: func(t result.DoctorTarget) (float64, bool) { return t.DiskSyncP99, t.DiskSyncP99 > 0 }},
	{name: "disk IOPS", unit: "ops/s", value: func(t result.DoctorTarget) (float64, bool) { return t.DiskIOPS, t.DiskIOPS > 0 }},
	{name: "etcd WAL fsync p99", unit: "s", value: func(t result.DoctorTarget) (float64, bool) { return t.WALFsyncP99, t.WALFsyncP99 > 0 },
		bound: func(t result.DoctorTarget) bool { return t.WALFsyncBound }},
	{name: "etcd commit p99", unit: "s", value: func(t result.DoctorTarget) (float64, bool) { return t.BackendCommitP99, t.BackendCommitP99 > 0 },
		bound: func(t result.DoctorTarget) bool { return t.BackendCommitBound }},
	{name: "fsync headroom", text: func(t result.DoctorTarget) string {
		if t.FsyncHeadroom <= 0 {
			return "-"
		}
		return Ratio(t.FsyncHeadroom)
	}},
	{name: "request p99", unit: "s", value: func(t result.DoctorTarget) (float64, bool) { return t.RequestP99, t.RequestP99 > 0 }},
	{name: "capacity (puts/s)", unit: "ops/s", value: func(t result.DoctorTarget) (float64, bool) { return t.Capacity, t.CapacityCause != "" }},
	{name: "capacity limited by", text: func(t result.DoctorTarget) string { return string(t.CapacityCause) }},
	{name: "throughput", unit: "ops/s", value: func(t result.DoctorTarget) (float64, bool) { return t.Throughput, t.TargetRate > 0 }},
	{name: "device busy", unit: "ratio", value: func(t result.DoctorTarget) (float64, bool) { return t.DeviceUtil, t.Device != "" && t.TargetRate > 0 }},
	{name: "etcd CPU (cores)", unit: "cores", value: func(t result.DoctorTarget) (float64, bool) { return t.ServerCPU, t.ServerCPU > 0 }},
	{name: "client CPU (cores)", unit: "cores", value: func(t result.DoctorTarget) (float64, bool) { return t.ClientCPU, t.ClientCPU > 0 }},
	{name: "noisy WAL fsync p99", unit: "s", value: func(t result.DoctorTarget) (float64, bool) {
		if t.Noise == nil {
			return 0, false
		}
		return t.Noise.WALFsyncP99, t.Noise.WALFsyncP99 > 0
	}},
	{name: "noisy request p99", unit: "s", value: func(t result.DoctorTarget) (float64, bool) {
		if t.Noise == nil {
			return 0, false
		}
		return t.Noise.RequestP99, t.Noise.RequestP99 > 0
	}},
}

// sideBySide prints the targets in columns, each value with its ratio to
// the first target's.
func sideBySide(w io.Writer, r *result.Result) {
	ts := r.Doctor.Targets
	cells := [][]string{append([]string{""}, names(ts)...)}
	for _, rw := range doctorRows {
		line := []string{rw.name}
		any := false
		for i, t := range ts {
			if rw.text != nil {
				// An empty text is a line no target has (no sweep).
				txt := rw.text(t)
				any = any || txt != ""
				if txt == "" {
					txt = "-"
				}
				line = append(line, txt)
				continue
			}
			v, ok := rw.value(t)
			if !ok {
				line = append(line, "-")
				continue
			}
			any = true
			s := sideValue(v, rw.unit)
			if rw.bound != nil && rw.bound(t) {
				s = "<= " + s
			} else if base, bok := rw.value(ts[0]); i > 0 && bok && base > 0 && (rw.bound == nil || !rw.bound(ts[0])) {
				s += " (" + Ratio(v/base) + ")"
			}
			line = append(line, s)
		}
		if any {
			cells = append(cells, line)
		}
	}
	widths := make([]int, len(cells[0]))
	for _, l := range cells {
		for i, c := range l {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	for _, l := range cells {
		var b strings.Builder
		b.WriteString(" ")
		for i, c := range l {
			b.WriteString(" ")
			b.WriteString(c)
			if i < len(l)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-len([]rune(c))+1))
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

func names(ts []result.DoctorTarget) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

func sideValue(v float64, unit string) string {
	if unit == "cores" {
		return fmt.Sprintf("%.2f", v)
	}
	return formatValue(v, unit)
}

// Ratio prints a ratio as every text of etcdperf does (units.Ratio).
func Ratio(r float64) string { return units.Ratio(r) }
