package diagnose

import (
	"slices"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
)

// Rule inspects a Result and returns the findings it supports, if any.
type Rule struct {
	ID    string
	Apply func(r *result.Result) []result.Finding
}

// rules is every registered rule, in registration order. Each file of this
// package registers the rules of its domain (disk, server, logs, ...) from
// an init function.
var rules []Rule

// Register adds rules; it is meant for init functions.
func Register(rs ...Rule) { rules = append(rules, rs...) }

// Rules returns the registered rules.
func Rules() []Rule { return append([]Rule(nil), rules...) }

// Run applies every rule to r and returns the findings, most severe first
// (rule order among equals).
func Run(r *result.Result) []result.Finding {
	var out []result.Finding
	for _, rule := range rules {
		out = append(out, rule.Apply(r)...)
	}
	sortBySeverity(out)
	return out
}

func sortBySeverity(fs []result.Finding) {
	rank := map[result.Severity]int{result.Critical: 0, result.Warning: 1, result.Info: 2}
	slices.SortStableFunc(fs, func(a, b result.Finding) int { return rank[a.Severity] - rank[b.Severity] })
}

// Verdict combines the checks with the findings: a critical finding fails,
// a warning warns.
func Verdict(checks []result.Check, findings []result.Finding) result.Verdict {
	v := limits.Verdict(checks)
	for _, f := range findings {
		switch f.Severity {
		case result.Critical:
			v = result.Worse(v, result.Fail)
		case result.Warning:
			v = result.Worse(v, result.Warn)
		}
	}
	return v
}

// FindCheck returns the check with the given name from r.
func FindCheck(r *result.Result, id string) (result.Check, bool) {
	for _, c := range r.Checks {
		if c.Name == id {
			return c, true
		}
	}
	return result.Check{}, false
}

// LimitOf returns the limit r's check or level id was judged by (set with
// --limit), or limits.Table's when r holds neither.
func LimitOf(r *result.Result, id string) float64 { return Level(r, id).Limit }

// Level returns the criterion id as r was judged by it: its check's limit,
// warning level and source, or the level r records (set with --limit),
// else limits.Table's.
func Level(r *result.Result, id string) limits.Criterion {
	c, _ := limits.Lookup(limits.Table, id)
	if ch, ok := FindCheck(r, id); ok {
		c.Limit, c.Warn, c.Source = ch.Limit, ch.Warn, ch.Source
		return c
	}
	for _, l := range r.Limits {
		if l.Name == id {
			c.Limit, c.Warn, c.Source = l.Limit, l.Warn, l.Source
		}
	}
	return c
}

// EvidenceOf turns a check into evidence for a finding.
func EvidenceOf(c result.Check) result.Evidence {
	return result.Evidence{What: c.Title, Observed: c.Observed, Limit: c.Limit, Unit: c.Unit, Source: c.Source}
}
