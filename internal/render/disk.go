package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

func init() { RegisterText("disk", diskText) }

// diskText is the disk probe's layout, close to fio's so that fio users
// find their numbers where they expect them.
func diskText(w io.Writer, r *result.Result) error {
	d := r.Disk
	if d == nil {
		return nil
	}
	fmt.Fprintf(w, "etcdperf disk: %s\n", where(r.Env))
	p, ok := r.Params.(*result.DiskParams)
	if !ok {
		p = &result.DiskParams{}
	}
	fmt.Fprintf(w, "  %s\n", describeParams(p, d.Engine))
	fmt.Fprintf(w, "  write: IOPS=%.0f, BW=%s/s (%s/%s), %d ops\n",
		d.IOPS, units.Bytes(d.Bandwidth), units.Bytes(float64(d.Bytes)), units.Seconds(d.Seconds), d.Ops)
	unit, div := pickUnit(d)
	if d.WriteLatency != nil {
		latLine(w, "write lat", unit, div, d.WriteLatency)
	}
	if d.SyncLatency != nil {
		latLine(w, "sync  lat", unit, div, d.SyncLatency)
		fmt.Fprintf(w, "    sync percentiles (%s):\n", unit)
		l := d.SyncLatency
		fmt.Fprintf(w, "     | 50.00th=[%s], 90.00th=[%s], 99.00th=[%s],\n", pv(l.P50, div), pv(l.P90, div), pv(l.P99, div))
		fmt.Fprintf(w, "     | 99.90th=[%s], 99.99th=[%s]\n", pv(l.P999, div), pv(l.P9999, div))
	}
	for _, j := range d.Jobs {
		if j.SyncLatency != nil {
			fmt.Fprintf(w, "    job %s: %d ops, sync p99=%s\n", j.File, j.Ops, units.Seconds(j.SyncLatency.P99))
		}
	}
	if r.Host != nil {
		HostLine(w, r.Host)
	}
	for _, n := range d.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	return nil
}

func where(env *result.Env) string {
	if env == nil {
		return ""
	}
	s := env.Dir
	var parts []string
	if env.FSType != "" {
		parts = append(parts, env.FSType)
	}
	if env.Device != "" {
		parts = append(parts, "on "+env.Device)
	}
	if env.MountPoint != "" {
		parts = append(parts, "mounted at "+env.MountPoint)
	}
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

func describeParams(p *result.DiskParams, engine string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d-byte", p.BS)
	if p.RW == "randwrite" {
		b.WriteString(" random writes")
	} else {
		b.WriteString(" sequential writes")
	}
	switch p.Sync {
	case "fdatasync", "fsync":
		fmt.Fprintf(&b, ", %s after each", p.Sync)
	case "odsync":
		b.WriteString(" with O_DSYNC")
	case "none":
		b.WriteString(", never synced")
	}
	if p.Direct {
		b.WriteString(", O_DIRECT")
	}
	if p.Prealloc {
		b.WriteString(", pre-allocated")
	}
	if p.Jobs > 1 {
		fmt.Fprintf(&b, ", %d jobs", p.Jobs)
	}
	fmt.Fprintf(&b, "; engine %s", engine)
	return b.String()
}

// pickUnit chooses usec or msec for the latency block, as fio does.
func pickUnit(d *result.Disk) (string, float64) {
	ref := 0.0
	if d.SyncLatency != nil {
		ref = d.SyncLatency.P99
	} else if d.WriteLatency != nil {
		ref = d.WriteLatency.P99
	}
	if ref >= 0.001 {
		return "msec", 1e-3
	}
	return "usec", 1e-6
}

func latLine(w io.Writer, name, unit string, div float64, l *result.Latency) {
	fmt.Fprintf(w, "    %s (%s): min=%s, max=%s, avg=%s, stdev=%s\n", name, unit,
		num(l.Min/div), num(l.Max/div), num(l.Mean/div), num(l.Stddev/div))
}

func pv(v, div float64) string { return fmt.Sprintf("%6s", num(v/div)) }

func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
