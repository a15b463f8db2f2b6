package render

import (
	"fmt"
	"io"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// upkeepText writes the members' scheduled compactions and
// defragmentations (logs, metrics, prom check).
func upkeepText(w io.Writer, cs []result.Compactions, ds []result.Defrags) {
	if len(cs) > 0 {
		fmt.Fprintln(w, "\nscheduled compactions:")
		for _, c := range cs {
			fmt.Fprintf(w, "  %-20s %s", c.Member, plural(c.Count, "compaction"))
			if c.Period > 0 {
				regular := "irregular, median"
				if c.Regular {
					regular = "every"
				}
				fmt.Fprintf(w, ", %s %s", regular, periodText(c.Period))
			}
			if c.TookMax > 0 {
				fmt.Fprintf(w, ", took %s (longest %s)", units.Seconds(c.TookP50), units.Seconds(c.TookMax))
			}
			fmt.Fprintf(w, "; %d of %s within %s of one\n", c.Near, plural(c.Spikes, "latency spike"), units.Seconds(c.Window))
		}
	}
	if len(ds) > 0 {
		fmt.Fprintln(w, "\ndefragmentations:")
		for _, d := range ds {
			longest := units.Seconds(d.Longest)
			if d.Bucketed {
				longest = fmt.Sprintf("%s-%s", units.Seconds(d.Longest/2), units.Seconds(d.Longest))
			}
			fmt.Fprintf(w, "  %-20s %g, %s in all, longest %s\n", d.Member, d.Count, units.Seconds(d.Seconds), longest)
		}
	}
}

func periodText(s float64) string {
	if s >= 60 {
		return time.Duration(s * float64(time.Second)).Round(time.Second).String()
	}
	return units.Seconds(s)
}
