package render

import (
	"fmt"
	"io"
	"strings"
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
	fmt.Fprintf(w, "%sSoak: %.0f puts/s (%s) of %s values from %d clients offered for %s, a sample every %s (open loop):\n",
		indent, s.Rate, from, units.Bytes(float64(s.ValueSize)), s.Clients, units.Seconds(s.Seconds), units.Seconds(s.IntervalSeconds))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s  t\tachieved/s\trequest p99\tWAL fsync p99\tcommit p99\tfsyncs/s\tdevice IOPS\tMB/s\tutil\tawait\terrors\t\n", indent)
	for _, row := range SoakRows(s) {
		if mark := &row[len(row)-1]; *mark != "" {
			*mark = "<- " + *mark
		}
		fmt.Fprintf(tw, "%s  %s\n", indent, strings.Join(row, "\t"))
	}
	tw.Flush()
	fmt.Fprintf(w, "%s  => %s\n", indent, s.Answer)
}

// SoakRows are a soak's intervals as the text lists them (the report's
// table too): t, achieved/s, request, WAL fsync and commit p99, fsyncs/s, the
// device's IOPS, MB/s, util and await ("-" without a device), errors, and
// a mark: "last part" on the first interval of the last part, "dropped
// after this" on the last before the drop.
func SoakRows(s *result.Soak) [][]string {
	var rows [][]string
	marked := false
	for _, x := range s.Series {
		dev, mbs, util, await := "-", "-", "-", "-"
		if x.DeviceIOPS > 0 || x.DeviceUtil > 0 {
			dev, mbs = fmt.Sprintf("%.0f", x.DeviceIOPS), fmt.Sprintf("%.1f", x.DeviceWriteBytes/1e6)
			util, await = fmt.Sprintf("%.0f%%", x.DeviceUtil*100), units.Seconds(x.DeviceAwait)
		}
		mark := ""
		if !marked && s.LastFrom > 0 && x.T > s.LastFrom {
			mark, marked = "last part", true
		}
		if s.Drop != nil && x.T == s.Drop.After {
			mark = "dropped after this"
		}
		req := "-"
		if x.RequestP99 > 0 {
			req = units.Seconds(x.RequestP99)
		}
		rows = append(rows, []string{fmt.Sprintf("%.0fs", x.T), fmt.Sprintf("%.0f", x.Achieved), req, units.P99(x.WALFsyncP99, x.WALFsyncBound),
			units.P99(x.BackendCommitP99, x.BackendCommitBound), fmt.Sprintf("%.0f", x.WALFsyncs), dev, mbs, util, await, fmt.Sprint(x.Errors), mark})
	}
	return rows
}
