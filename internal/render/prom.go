package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

func init() {
	RegisterText("prom", promExportText)
	RegisterText("prom-check", promCheckText)
	RegisterCSV("prom", PromCSV)
	RegisterCSV("prom-check", PromCSV)
}

// PromCSV writes the prom section's table: a header "time,unix,<column
// names>", then one row per timestamp (RFC3339 UTC and unix seconds), one
// column per series. A series without a sample at that time has an empty
// cell; NaN (e.g. a quantile over a window without observations), +Inf and
// -Inf are written as such.
func PromCSV(w io.Writer, r *result.Result) error {
	if r.Prom == nil || r.Prom.Table == nil {
		return fmt.Errorf("this %s result holds no table", r.Kind)
	}
	t := r.Prom.Table
	cw := csv.NewWriter(w)
	header := append([]string{"time", "unix"}, columnNames(t)...)
	if err := cw.Write(header); err != nil {
		return err
	}
	rec := make([]string, len(header))
	for i, row := range t.Rows {
		rec[0] = unixTime(t.Time[i]).Format(time.RFC3339Nano)
		rec[1] = strconv.FormatFloat(t.Time[i], 'f', -1, 64)
		for j, v := range row {
			rec[2+j] = v.String()
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func columnNames(t *result.PromTable) []string {
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	return names
}

func unixTime(s float64) time.Time {
	return time.UnixMilli(int64(math.Round(s * 1000))).UTC()
}

func promHeader(w io.Writer, cmd string, p *result.Prom) {
	fmt.Fprintf(w, "etcdperf %s: %s\n", cmd, p.URL)
	span := p.End.Sub(p.Start).Round(time.Second)
	fmt.Fprintf(w, "  %s to %s (%s), step %s", p.Start.Format(time.RFC3339), p.End.Format(time.RFC3339), span, units.Seconds(p.Step))
	if p.Window > 0 {
		fmt.Fprintf(w, ", rate window %s", units.Seconds(p.Window))
	}
	if p.Selector != "" {
		fmt.Fprintf(w, ", selector {%s}", p.Selector)
	}
	fmt.Fprintln(w)
}

// columnStats summarises one column: samples, cells without a sample, and
// the min, max and last of its numbers.
type columnStats struct {
	samples, gaps, nan int
	min, max, last     float64
}

func statsOf(t *result.PromTable, j int) columnStats {
	s := columnStats{min: math.Inf(1), max: math.Inf(-1)}
	for _, row := range t.Rows {
		v := row[j]
		switch {
		case !v.Present:
			s.gaps++
		case !v.Finite():
			s.samples++
			s.nan++
		default:
			s.samples++
			s.min = math.Min(s.min, v.V)
			s.max = math.Max(s.max, v.V)
			s.last = v.V
		}
	}
	return s
}

// promValue formats a value in a query's unit.
func promValue(v float64, unit string) string {
	switch unit {
	case "bytes/s":
		return units.Bytes(v) + "/s"
	case "ops/s":
		return strconv.FormatFloat(v, 'g', 4, 64) + "/s"
	case "s", "bytes", "count":
		return formatValue(v, unit)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

func promExportText(w io.Writer, r *result.Result) error {
	p := r.Prom
	if p == nil || p.Table == nil {
		return nil
	}
	promHeader(w, "prom export", p)
	t := p.Table
	fmt.Fprintf(w, "  %d queries, %d series, %d timestamps\n\n", len(p.Queries), len(t.Columns), len(t.Time))
	width := len("series")
	for _, c := range t.Columns {
		width = max(width, len(c.Name))
	}
	fmt.Fprintf(w, "  %-*s  %7s  %5s  %10s  %10s  %10s\n", width, "series", "samples", "gaps", "min", "max", "last")
	for j, c := range t.Columns {
		s := statsOf(t, j)
		mn, mx, last := "-", "-", "-"
		if s.samples > s.nan {
			mn, mx, last = promValue(s.min, c.Unit), promValue(s.max, c.Unit), promValue(s.last, c.Unit)
		}
		fmt.Fprintf(w, "  %-*s  %7d  %5d  %10s  %10s  %10s\n", width, c.Name, s.samples, s.gaps, mn, mx, last)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	if len(p.Plots) > 0 {
		fmt.Fprintf(w, "  plot data for %d charts in the JSON Result (-o json)\n", len(p.Plots))
	}
	fmt.Fprintf(w, "\n%s\nThe table: -o csv (or -o FILE.csv); everything: -o json.\n", r.Summary)
	return nil
}

func promCheckText(w io.Writer, r *result.Result) error {
	p := r.Prom
	if p == nil {
		return nil
	}
	promHeader(w, "prom check", p)
	fmt.Fprintf(w, "  %d member(s); values over the whole period:\n", len(p.Members))
	for _, m := range p.Members {
		keys := make([]string, 0, len(m.Observed))
		for k := range m.Observed {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			unit := "count"
			if strings.HasSuffix(k, "_p99") {
				unit = "s"
			}
			parts = append(parts, k+"="+formatValue(m.Observed[k], unit))
		}
		fmt.Fprintf(w, "    %s: %s\n", m.Instance, strings.Join(parts, " "))
	}
	peerRTTsText(w, p.PeerRTTs)
	if d := p.Demand; d != nil {
		fmt.Fprintf(w, "  write demand (the most any member committed per second over %s, at %d points): p99 %.0f proposals/s, max %.0f; puts p99 %.0f/s, max %.0f\n",
			units.Seconds(d.Window), d.Points, d.ProposalsP99, d.ProposalsMax, d.PutsP99, d.PutsMax)
	}
	if len(p.Breaches) == 0 {
		fmt.Fprintf(w, "  no limit passed at any evaluation point\n")
	} else {
		fmt.Fprintf(w, "  breaches (each point judges the %s before it):\n", units.Seconds(p.Window))
		for _, b := range p.Breaches {
			fmt.Fprintf(w, "    %s on %s: %d of %d points (%.1f%%), %d window(s), worst %s\n",
				b.Check, b.Instance, b.Points, b.Total, b.Fraction*100, len(b.Windows), formatValue(b.Worst, b.Unit))
		}
	}
	upkeepText(w, p.Compactions, p.Defrags)
	for _, n := range p.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	return nil
}
