package render

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// soakText prints a soak: one line per interval (the last part marked),
// then the one-line conclusion.
func soakText(w io.Writer, s *result.Soak, indent string) {
	if s == nil {
		return
	}
	if len(s.Series) == 0 {
		fmt.Fprintf(w, "%sSoak: %s\n", indent, s.Answer)
		return
	}
	from := "the capacity sweep's answer"
	if s.RateFrom != "capacity" {
		from = s.RateFrom
	}
	fmt.Fprintf(w, "%sSoak: %.0f puts/s (%s) of %s values from %d clients held for %s, a sample every %s (open loop):\n",
		indent, s.Rate, from, units.Bytes(float64(s.ValueSize)), s.Clients, units.Seconds(s.Seconds), units.Seconds(s.IntervalSeconds))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s  t\tachieved/s\tWAL fsync p99\tcommit p99\tfsyncs/s\tdevice IOPS\tMB/s\tutil\tawait\terrors\t\n", indent)
	marked := false
	for _, x := range s.Series {
		dev, mbs, util, await := "-", "-", "-", "-"
		if x.DeviceIOPS > 0 || x.DeviceUtil > 0 {
			dev, mbs = fmt.Sprintf("%.0f", x.DeviceIOPS), fmt.Sprintf("%.1f", x.DeviceWriteBytes/1e6)
			util, await = fmt.Sprintf("%.0f%%", x.DeviceUtil*100), units.Seconds(x.DeviceAwait)
		}
		mark := ""
		if !marked && s.LastFrom > 0 && x.T > s.LastFrom {
			mark, marked = "<- last part", true
		}
		if s.Drop != nil && x.T == s.Drop.After {
			mark = "<- dropped after this"
		}
		fmt.Fprintf(tw, "%s  %.0fs\t%.0f\t%s\t%s\t%.0f\t%s\t%s\t%s\t%s\t%d\t%s\n", indent, x.T, x.Achieved,
			bounded(x.WALFsyncP99, x.WALFsyncBound), bounded(x.BackendCommitP99, x.BackendCommitBound), x.WALFsyncs, dev, mbs, util, await, x.Errors, mark)
	}
	tw.Flush()
	fmt.Fprintf(w, "%s  => %s\n", indent, s.Answer)
}
