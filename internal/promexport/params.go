package promexport

import (
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
)

// Params are the query's options in a Result's params (the user, never a
// password or token): the connection c, the range r resolved to, the
// members' selector, the window of rates and the matrix asked for.
func (c Options) Params(r Resolved, selector string, window time.Duration, matrix []string) *result.PromParams {
	p := &result.PromParams{
		URL:      c.URL,
		Start:    r.Start.UTC().Format(time.RFC3339Nano),
		End:      r.End.UTC().Format(time.RFC3339Nano),
		Step:     r.Step.Seconds(),
		Selector: selector,
		Window:   max(window.Seconds(), 0),
		Matrix:   matrix,
	}
	switch {
	case c.User != "":
		p.Auth, p.User = "basic", c.User
	case c.BearerToken != "":
		p.Auth = "bearer"
	}
	return p
}
