package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// capacityText prints a capacity sweep: one line per step, then the
// one-line answer.
func capacityText(w io.Writer, c *result.Capacity, indent string) {
	if c == nil || len(c.Steps) == 0 {
		return
	}
	held := ""
	if c.ConfirmSeconds > 0 {
		held = ", the answer then held for up to " + units.Seconds(c.ConfirmSeconds)
	}
	if c.CompactionSeconds > 0 {
		held += ", etcd compacting its history every " + units.Seconds(c.CompactionSeconds)
	}
	fmt.Fprintf(w, "%sCapacity: puts of %s values, offered step by step (%s each%s, open loop):\n", indent, units.Bytes(float64(c.ValueSize)), units.Seconds(c.StepSeconds), held)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s  offered/s\tachieved/s\tclients\tWAL fsync p99\tcommit p99\trequest p99\tfsyncs/s\tdevice IOPS\tutil\tetcd CPU\tclient CPU\tbroke\n", indent)
	for _, st := range c.Steps {
		dev, util := "-", "-"
		if st.DeviceIOPS > 0 || st.DeviceUtil > 0 {
			dev, util = fmt.Sprintf("%.0f", st.DeviceIOPS), fmt.Sprintf("%.0f%%", st.DeviceUtil*100)
		}
		// What broke; why is the answer's (a step's own cause is the
		// verdict's rules' alone, before the sweep's).
		broke := "-"
		if len(st.Broke) > 0 {
			broke = strings.Join(st.Broke, ", ")
		} else if st.Confirm && len(st.Tight) > 0 {
			// Held near its limits: not confirmed.
			broke = "near " + strings.Join(st.Tight, ", ")
		}
		offered := fmt.Sprintf("%.0f", st.Offered)
		if st.Confirm {
			offered += " (held " + units.Seconds(st.Seconds) + ")"
		}
		fmt.Fprintf(tw, "%s  %s\t%.0f\t%d\t%s\t%s\t%s\t%.0f\t%s\t%s\t%.2f\t%.2f\t%s\n", indent, offered, st.Achieved, st.Clients,
			units.P99(st.WALFsyncP99, st.WALFsyncBound), units.P99(st.BackendCommitP99, st.BackendCommitBound), units.Seconds(st.RequestP99),
			st.WALFsyncs, dev, util, st.EtcdCPU, st.ClientCPU, broke)
	}
	tw.Flush()
	fmt.Fprintf(w, "%s  => %s\n", indent, c.Answer)
}
