package render

import (
	"fmt"
	"io"
	"strings"
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
			cells := CompactionCells(c)
			fmt.Fprintf(w, "  %-20s %s; %s\n", c.Member, joinNonEmpty(cells[:3]), cells[3])
		}
	}
	if len(ds) > 0 {
		fmt.Fprintln(w, "\ndefragmentations:")
		for _, d := range ds {
			fmt.Fprintf(w, "  %-20s %s\n", d.Member, strings.Join(DefragCells(d), ", "))
		}
	}
}

// CompactionCells are a member's scheduled compactions as the text view
// says them: how many ("3 compactions"), how often ("every 5m0s",
// "irregular, median 40s"; "" with fewer than two), what they took
// ("took 3ms (longest 9ms)"; "" when the source does not say) and the
// member's latency spikes near them ("2 of 5 latency spikes within 10s of
// one").
func CompactionCells(c result.Compactions) [4]string {
	var out [4]string
	out[0] = plural(c.Count, "compaction")
	if c.Period > 0 {
		regular := "irregular, median"
		if c.Regular {
			regular = "every"
		}
		out[1] = regular + " " + periodText(c.Period)
	}
	if c.TookMax > 0 {
		out[2] = fmt.Sprintf("took %s (longest %s)", units.Seconds(c.TookP50), units.Seconds(c.TookMax))
	}
	out[3] = fmt.Sprintf("%d of %s within %s of one", c.Near, plural(c.Spikes, "latency spike"), units.Seconds(c.Window))
	return out
}

// DefragCells are a member's defragmentations as the text view says
// them: how many, their time in all ("1.2s in all") and the longest
// ("longest 800ms", or the bucket it fell in: "longest 400ms-800ms").
func DefragCells(d result.Defrags) []string {
	return []string{fmt.Sprintf("%g", d.Count), units.Seconds(d.Seconds) + " in all", "longest " + DefragLongest(d)}
}

// DefragLongest is the longest of a member's defragmentations: its
// duration, or what etcd's histogram tells of it ("400ms-800ms", "up to
// 100ms"; Defrags.LongestBounds).
func DefragLongest(d result.Defrags) string {
	lo, hi := d.LongestBounds()
	switch {
	case lo == hi:
		return units.Seconds(hi)
	case lo <= 0:
		return "up to " + units.Seconds(hi)
	}
	return fmt.Sprintf("%s-%s", units.Seconds(lo), units.Seconds(hi))
}

func joinNonEmpty(parts []string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ", ")
}

func periodText(s float64) string {
	if s >= 60 {
		return time.Duration(s * float64(time.Second)).Round(time.Second).String()
	}
	return units.Seconds(s)
}

// Plural is n and what, with an s unless n is 1: "3 compactions".
func Plural(n int64, what string) string { return plural(n, what) }
