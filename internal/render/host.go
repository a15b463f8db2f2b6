package render

import (
	"fmt"
	"io"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// HostLine writes the host's USE summary in iostat's terms, named after
// the host it was measured on (the one etcdperf ran on).
func HostLine(w io.Writer, h *result.Host) {
	s := h.Summary
	if h.Hostname != "" {
		fmt.Fprintf(w, "  host %s (where etcdperf ran):\n", h.Hostname)
	}
	if h.Device != "" {
		fmt.Fprintf(w, "  device %s: util=%.0f%%, w/s=%.0f, wMB/s=%.2f, w_await=%s, avg write=%s, aqu-sz=%.2f",
			h.Device, s.Util*100, s.WriteIOPS, s.WriteBytes/1e6, units.Seconds(s.WriteAwait), units.Bytes(s.AvgWriteSize), s.QueueDepth)
		if s.FlushIOPS > 0 {
			fmt.Fprintf(w, ", flush/s=%.0f, f_await=%s", s.FlushIOPS, units.Seconds(s.FlushAwait))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "  cpu: busy=%.0f%%, iowait=%.0f%%, steal=%.0f%%\n", s.CPUBusy*100, s.IOWait*100, s.Steal*100)
}
