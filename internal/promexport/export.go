package promexport

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
)

// ErrNoData is returned when no query returned any series.
var ErrNoData = errors.New("no data in Prometheus")

// Fetch runs every query over r, in order, and returns their answers. It
// stops at the first query Prometheus cannot run (a *QueryError for a bad
// query). It returns an error wrapping ErrNoData when no query returned a
// series.
func (c *Client) Fetch(ctx context.Context, qs []Query, r Resolved) ([]Answer, error) {
	answers := make([]Answer, 0, len(qs))
	series := 0
	for _, q := range qs {
		m, warns, err := c.Range(ctx, q, r)
		if err != nil {
			return nil, err
		}
		answers = append(answers, Answer{Query: q, Matrix: m, Warnings: warns})
		series += len(m)
	}
	if series == 0 {
		names := make([]string, len(qs))
		for i, q := range qs {
			names[i] = q.Name
		}
		return answers, fmt.Errorf("%w at %s for %s between %s and %s: check the time range, and that the server scrapes etcd (a --selector that matches nothing gives this too)",
			ErrNoData, c.url, strings.Join(names, ", "), r.Start.UTC().Format(time.RFC3339), r.End.UTC().Format(time.RFC3339))
	}
	return answers, nil
}

// Section returns the prom section of a Result for the answers: the
// queries, the aligned table and notes on queries that returned nothing.
func Section(url string, r Resolved, answers []Answer) (*result.Prom, error) {
	p := &result.Prom{URL: url, Start: r.Start.UTC(), End: r.End.UTC(), Step: r.Step.Seconds()}
	for _, a := range answers {
		p.Queries = append(p.Queries, result.PromQuery{Name: a.Query.Name, Expr: a.Query.Expr, Unit: a.Query.Unit, Series: len(a.Matrix), Warnings: a.Warnings})
		if len(a.Matrix) == 0 {
			p.Notes = append(p.Notes, fmt.Sprintf("query %s returned no series (the metric may not exist on this etcd, e.g. peer metrics on a single member)", a.Query.Name))
		}
		for _, w := range a.Warnings {
			p.Notes = append(p.Notes, fmt.Sprintf("query %s: Prometheus warns: %s", a.Query.Name, w))
		}
	}
	t, err := Table(answers)
	if err != nil {
		return nil, err
	}
	p.Table = t
	return p, nil
}
