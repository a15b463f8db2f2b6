package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// Func renders a Result to w.
type Func func(w io.Writer, r *result.Result) error

// textRenderers holds the text view of each kind; commands register theirs.
var textRenderers = map[string]Func{}

// RegisterText sets the text renderer of a Result kind.
func RegisterText(kind string, f Func) { textRenderers[kind] = f }

// Text writes the human view of r: the kind's own layout, then the checks,
// the findings and the verdict.
func Text(w io.Writer, r *result.Result) error {
	ew := &errWriter{w: w}
	if f, ok := textRenderers[r.Kind]; ok {
		if err := f(ew, r); err != nil {
			return err
		}
	}
	Judgement(ew, r)
	return ew.err
}

// JSON writes r as the Result document.
func JSON(w io.Writer, r *result.Result) error { return result.Encode(w, r) }

// Judgement writes the checks, findings, error and verdict of r.
func Judgement(w io.Writer, r *result.Result) {
	if len(r.Checks) > 0 {
		fmt.Fprintln(w)
		for _, c := range r.Checks {
			v := formatValue(c.Observed, c.Unit)
			if c.Bound {
				v = "<= " + v
			}
			name := c.Name
			// The API checks are made once per call: each says which.
			if crit, ok := limits.Lookup(limits.Table, c.Name); ok && strings.HasPrefix(c.Name, "api_") && c.Title != "" && c.Title != crit.Title {
				name += " [" + c.Title + "]"
			}
			fmt.Fprintf(w, "%s %s: %s (%s)\n", statusWord(c.Status), name, v, formatLimit(c))
		}
	}
	if len(r.Findings) > 0 {
		fmt.Fprintln(w)
		for _, f := range r.Findings {
			fmt.Fprintf(w, "[%s] %s\n", f.Severity, f.Title)
			for _, e := range f.Evidence {
				fmt.Fprintf(w, "    evidence: %s\n", formatEvidence(e))
			}
			if f.Recommendation != "" {
				fmt.Fprintf(w, "    do: %s\n", f.Recommendation)
			}
		}
	}
	tuningText(w, r.Tuning)
	if incomplete(r) {
		// What ended the run, once, and no verdict: the figures above are
		// part of a run.
		fmt.Fprintf(w, "\nIncomplete: %s. The figures above cover only what came before, too little for a verdict.\n", incompleteWhy(r))
		return
	}
	if r.Verdict != "" {
		fmt.Fprintf(w, "\nVerdict: %s", strings.ToUpper(string(r.Verdict)))
		if r.Summary != "" {
			fmt.Fprintf(w, " - %s", r.Summary)
		}
		fmt.Fprintln(w)
	}
}

// incomplete reports a run that ended early, also one written before
// such runs had the verdict Incomplete.
func incomplete(r *result.Result) bool {
	return r.EndedEarly() || r.Verdict == result.Incomplete
}

func incompleteWhy(r *result.Result) string {
	if r.Error == "" {
		return "the run ended early"
	}
	return strings.TrimSuffix(r.Error, ".")
}

func statusWord(s result.Status) string {
	switch s {
	case result.StatusPass:
		return "PASS"
	case result.StatusWarn:
		return "WARN"
	}
	return "FAIL"
}

func formatValue(v float64, unit string) string { return units.Value(v, unit) }

func formatLimit(c result.Check) string {
	s := "limit " + c.Op + " " + formatValue(c.Limit, c.Unit)
	if c.Warn != nil {
		s += ", warn at " + formatValue(*c.Warn, c.Unit)
	}
	return s
}

func formatEvidence(e result.Evidence) string {
	if e.Unit == "" && e.Observed == 0 && e.Limit == 0 {
		return e.What
	}
	s := e.What + ": " + formatValue(e.Observed, e.Unit)
	if e.Limit != 0 {
		s += " (limit " + formatValue(e.Limit, e.Unit) + ")"
	}
	if e.Source != "" {
		s += " [" + e.Source + "]"
	}
	return s
}

// errWriter remembers the first write error so that renderers can use
// fmt.Fprintf freely and check once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// FormatValue prints a value in its unit as the text view does ("s",
// "ops/s", "ratio", "bytes", "count").
func FormatValue(v float64, unit string) string { return formatValue(v, unit) }

// FormatLimit prints a check's limit as the text view does.
func FormatLimit(c result.Check) string { return formatLimit(c) }

// FormatEvidence prints a finding's evidence as the text view does.
func FormatEvidence(e result.Evidence) string { return formatEvidence(e) }
