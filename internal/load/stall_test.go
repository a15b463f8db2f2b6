package load

import (
	"context"
	"errors"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/testutil"
)

func TestStallEndsARunThatOnlyFails(t *testing.T) {
	// Every request stalls and times out: with no success for the stall
	// timeout, the run ends long before its duration, with what it counted.
	o := base(t, Put)
	o.Total, o.Duration, o.Clients = 0, 30*time.Second, 2
	o.CommandTimeout, o.StallTimeout = 150*time.Millisecond, 400*time.Millisecond
	silent := testutil.SilentListener(t)
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{silent}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	st, err := Run(context.Background(), []Conn{{Client: c, Addr: silent}}, o)
	el := time.Since(start)
	var se *StallError
	if !errors.As(err, &se) || se.Timeout != o.StallTimeout || se.Failed < 2 {
		t.Fatalf("err %v, want a StallError after %v with failures", err, o.StallTimeout)
	}
	if errors.Is(err, context.Canceled) {
		t.Error("a stall must not look like an interruption")
	}
	if el < o.StallTimeout || el > 3*time.Second {
		t.Errorf("stalled run ended after %v, want soon after %v", el, o.StallTimeout)
	}
	if st == nil || st.ErrorCount() < 2 || st.Ops != 0 {
		t.Errorf("stats of the stalled run: %+v", st)
	}
}

func TestNoStallWithoutFailures(t *testing.T) {
	// Successes far apart (a low rate) are not a stall: only failures
	// without a success are.
	o := base(t, Put)
	o.Total, o.Rate, o.Clients, o.StallTimeout = 3, 4, 1, 50*time.Millisecond
	st, err := Run(context.Background(), conns, o)
	checkStats(t, st, err, 3)
}

func TestTopError(t *testing.T) {
	for _, c := range []struct {
		errs map[string]int64
		key  string
		n    int64
	}{
		{nil, "", 0},
		{map[string]int64{"b": 2, "a": 1}, "b", 2},
		{map[string]int64{"b": 2, "a": 2, "c": 1}, "a", 2},
	} {
		if key, n := TopError(c.errs); key != c.key || n != c.n {
			t.Errorf("TopError(%v) = %q %d, want %q %d", c.errs, key, n, c.key, c.n)
		}
	}
}
