package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Discovery is what Discover learnt of a cluster: its members with their
// /metrics URLs, and an HTTP client with the connection's TLS to scrape
// them.
type Discovery struct {
	Members []Member
	// Version is the etcd version of the first member that answered.
	Version string
	// HTTP reaches the members' /metrics with the TLS of the options; its
	// timeout is the command timeout.
	HTTP *http.Client
	// Unreachable holds, for each endpoint given that did not answer, why
	// (a *ConnError).
	Unreachable []error
	// Notes say what could not be learnt: the member list, the leader.
	Notes []string
	// Given are the endpoints given, as client URLs, in their order.
	Given []string
	// dialer opens more clients with the options' TLS and user.
	dialer *Client
}

// Dial opens an etcd client to endpoints with the options the cluster was
// discovered with (TLS, user, timeouts). Requests that name an endpoint
// (Status, HashKV) reach that endpoint whatever the client's list.
func (d *Discovery) Dial(ctx context.Context, endpoints ...string) (*clientv3.Client, error) {
	return d.dialer.newClient(ctx, endpoints)
}

// CommandTimeout is the per-request bound of the options.
func (d *Discovery) CommandTimeout() time.Duration { return d.dialer.opts.commandTimeout() }

// Discover finds the members of the cluster at o.Endpoints to watch their
// /metrics. Unlike Connect it needs one endpoint to answer, not all (a
// member that is down is what one watches a cluster for), and no user:
// /metrics needs none. When the member list cannot be read (etcd's auth is
// on and no user is given), the endpoints given are the members. It fails
// when no endpoint answers as etcd, when one is not etcd's client URL (a
// *NotEtcdError), or when a user is given and etcd rejects it.
func Discover(ctx context.Context, o ConnOptions) (*Discovery, error) {
	eps, tc, err := prepare(o)
	if err != nil {
		return nil, err
	}
	d := &Discovery{}
	for _, ep := range eps {
		d.Given = append(d.Given, ep.url(o.TLSConfigured()))
	}
	var up []endpoint
	for i, err := range probeAll(ctx, eps, o, tc) {
		var ne *NotEtcdError
		if errors.As(err, &ne) {
			return nil, err // a wrong endpoint, not a member that is down
		}
		if err != nil {
			d.Unreachable = append(d.Unreachable, err)
			continue
		}
		up = append(up, eps[i])
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if len(up) == 0 {
		return nil, errors.Join(d.Unreachable...)
	}
	reachable := o
	reachable.Endpoints = nil
	for _, ep := range up {
		reachable.Endpoints = append(reachable.Endpoints, ep.raw)
	}
	c := &Client{opts: reachable, tls: tc, endpoints: up}
	d.dialer = c
	d.HTTP = c.HTTPClient()
	cli, err := c.newClient(ctx, reachable.Endpoints)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	c.Client = cli
	if up, err = c.answering(ctx, up, d); err != nil {
		return nil, err
	}

	// A serializable list is the member's own view: it needs no quorum.
	lctx, cancel := context.WithTimeout(ctx, o.commandTimeout())
	resp, err := cli.MemberList(lctx, clientv3.WithSerializable())
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var ce *ConnError
		cerr := c.explainRPC(ctx, up[0], err)
		if errors.As(cerr, &ce) && ce.Reason == AuthFailed {
			return nil, cerr
		}
		why := err.Error()
		if errors.As(cerr, &ce) && ce.Reason == AuthRequired {
			why = "etcd has authentication enabled and no --user was given"
		}
		d.Notes = append(d.Notes, fmt.Sprintf("could not list the members (%s): watching the endpoints given", why))
		for _, ep := range up {
			d.Members = append(d.Members, Member{Name: ep.raw, ClientURL: ep.url(o.TLSConfigured()), MetricsURL: MetricsURL(ep.url(o.TLSConfigured()))})
		}
	} else {
		for _, m := range resp.Members {
			d.Members = append(d.Members, c.memberOf(m))
		}
	}
	d.status(ctx, c)
	return d, nil
}

// answering asks each endpoint for its status, in parallel, each bounded
// by the dial timeout, and returns those that answer as etcd (etcd's own
// errors, such as authentication, count as an answer). An endpoint that is
// not etcd's client URL is an error (*NotEtcdError), as is none answering;
// the others that do not answer join d.Unreachable.
func (c *Client) answering(ctx context.Context, eps []endpoint, d *Discovery) ([]endpoint, error) {
	errs := make([]error, len(eps))
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sctx, cancel := context.WithTimeout(ctx, c.opts.dialTimeout())
			defer cancel()
			if _, err := c.Status(sctx, ep.raw); err != nil && !errors.As(rpctypes.Error(err), new(rpctypes.EtcdError)) {
				errs[i] = c.explainRPC(ctx, ep, err)
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var ok []endpoint
	var failed []error
	for i, err := range errs {
		var ne *NotEtcdError
		if errors.As(err, &ne) {
			return nil, err
		}
		if err != nil {
			failed = append(failed, err)
			continue
		}
		ok = append(ok, eps[i])
	}
	if len(ok) == 0 {
		return nil, errors.Join(append(d.Unreachable, failed...)...)
	}
	d.Unreachable = append(d.Unreachable, failed...)
	return ok, nil
}

// status asks every member for its version and leader, in parallel, each
// bounded by the dial timeout (a member that is down must not hold up the
// others), and marks the leader.
func (d *Discovery) status(ctx context.Context, c *Client) {
	leaders := make([]uint64, len(d.Members))
	errs := make([]error, len(d.Members))
	var wg sync.WaitGroup
	for i := range d.Members {
		m := &d.Members[i]
		if m.ClientURL == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sctx, cancel := context.WithTimeout(ctx, c.opts.dialTimeout())
			defer cancel()
			st, err := c.Status(sctx, m.ClientURL)
			if err != nil {
				errs[i] = err
				return
			}
			m.Version = st.Version
			leaders[i] = st.Leader
			if m.ID == 0 && st.Header != nil {
				m.ID = st.Header.MemberId
			}
		}()
	}
	wg.Wait()
	var leader uint64
	var firstErr error
	answered := 0
	for i, l := range leaders {
		if d.Version == "" {
			d.Version = d.Members[i].Version
		}
		if leader == 0 {
			leader = l
		}
		if errs[i] == nil {
			answered++
		} else if firstErr == nil {
			firstErr = errs[i]
		}
	}
	switch {
	case answered == 0 && firstErr != nil:
		d.Notes = append(d.Notes, fmt.Sprintf("no member told its status (%v)", firstErr))
		return
	case leader == 0:
		d.Notes = append(d.Notes, "no member reported a leader")
		return
	}
	for i := range d.Members {
		d.Members[i].Leader = d.Members[i].ID == leader
	}
}

// url is the endpoint as a URL: with its scheme, or https when TLS options
// are given for a bare host:port (as etcdctl does).
func (e endpoint) url(tlsConfigured bool) string {
	if e.scheme != "" {
		return strings.TrimRight(e.raw, "/")
	}
	if e.tls(tlsConfigured) {
		return "https://" + e.addr
	}
	return "http://" + e.addr
}
