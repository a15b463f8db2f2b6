package kubescale

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/etcdperf/etcdperf/internal/hist"
	"github.com/etcdperf/etcdperf/internal/result"
)

// Scopes of a call, as the SLO on API call latency defines them.
const (
	ScopeResource  = "resource"
	ScopeNamespace = "namespace"
	ScopeCluster   = "cluster"
)

// callKey is what the SLO is per: resource and verb (mutating calls), or
// resource and scope (read-only calls).
type callKey struct{ resource, verb, scope string }

type callRecord struct {
	h    *hist.Histogram
	errs map[string]int64
}

// calls times a step's calls, from several goroutines. Every call first
// waits for the run's rate limiter (client-go's QPS and burst), then its
// clock starts.
type calls struct {
	limiter flowcontrol.RateLimiter
	mu      sync.Mutex
	m       map[callKey]*callRecord
}

func newCalls(limiter flowcontrol.RateLimiter) *calls {
	return &calls{limiter: limiter, m: map[callKey]*callRecord{}}
}

// do makes one call and records its latency, or its failure by message.
// It returns the call's error; a wait for the limiter cut by ctx returns
// ctx's error without a record.
func (c *calls) do(ctx context.Context, k callKey, f func(ctx context.Context) error) error {
	if err := c.limiter.Wait(ctx); err != nil {
		return ctx.Err()
	}
	t0 := time.Now()
	err := f(ctx)
	d := time.Since(t0)
	if err != nil && ctx.Err() != nil {
		return ctx.Err() // stopped by the caller: not the server's fault
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.m[k]
	if r == nil {
		r = &callRecord{h: hist.New(), errs: map[string]int64{}}
		c.m[k] = r
	}
	if err != nil {
		r.errs[errorKey(err)]++
	} else {
		r.h.Record(d)
	}
	return err
}

// errorKey names a failed call by what the API server said: its status
// reason and message (e.g. "Timeout: etcdserver: request timed out").
func errorKey(err error) string {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		st := se.Status()
		msg := st.Message
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if st.Reason != "" && !strings.HasPrefix(msg, string(st.Reason)) {
			return string(st.Reason) + ": " + msg
		}
		return msg
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "no response within the call timeout"
	}
	return err.Error()
}

// take returns the step's calls, in order, and starts afresh.
func (c *calls) take() []result.KubeCall {
	c.mu.Lock()
	m := c.m
	c.m = map[callKey]*callRecord{}
	c.mu.Unlock()
	var out []result.KubeCall
	for k, r := range m {
		kc := result.KubeCall{Resource: k.resource, Verb: k.verb, Scope: k.scope}
		if r.h.Count() > 0 {
			l := r.h.Latency(false)
			kc.Client = &l
		}
		if len(r.errs) > 0 {
			kc.Errors = r.errs
		}
		out = append(out, kc)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Resource != b.Resource {
			return a.Resource < b.Resource
		}
		if a.Verb != b.Verb {
			return a.Verb < b.Verb
		}
		return a.Scope < b.Scope
	})
	return out
}
