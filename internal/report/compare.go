package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/etcdperf/etcdperf/internal/result"
)

// Text writes the comparison of `etcdperf compare`: the summary table
// with one column per run, each value's ratio to the first run, and the
// best run on each line; then each run's verdict.
func (rep *Report) Text(w io.Writer) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	t := summaryTable(rep.Runs)
	fmt.Fprintln(tw, strings.Join(t.Header, "\t")+tail(t.Last))
	for _, row := range t.Rows {
		cells := []string{row.Label}
		for _, c := range row.Cells {
			s := c.Text
			if c.Ratio != "" {
				s += " (" + c.Ratio + ")"
			}
			cells = append(cells, s)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+tail(row.Last))
	}
	tw.Flush()
	if t.Last != "" {
		fmt.Fprintf(&buf, "\n(x) is the ratio to %s; better: lower latency and errors, higher throughput and IOPS, with how many times the best beats the worst;\n%s (run-to-run noise).\n", rep.Runs[0].Label, NoiseText())
	}
	if len(rep.Judged) > 0 {
		fmt.Fprintln(&buf)
		for _, j := range rep.Judged {
			r := j.Result
			line := j.Label + ": " + strings.ToUpper(string(r.Verdict))
			if r.Verdict == "" {
				line = j.Label + ": no verdict"
			}
			if r.Summary != "" && r.Verdict != result.Incomplete {
				line += " - " + scrubText(r.Summary)
			}
			if r.Error != "" {
				line += " (ended early: " + scrubText(r.Error) + ")"
			}
			fmt.Fprintln(&buf, line)
		}
	}
	_, err := buf.WriteTo(w)
	return err
}

func tail(s string) string {
	if s == "" {
		return ""
	}
	return "\t" + s
}
