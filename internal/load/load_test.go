package load

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// One embedded etcd serves every test of the package.
var (
	target *lab.Target
	conns  []Conn
)

// asMember makes the test binary act as `etcdperf server`: the embedded
// etcd runs in a process of its own, so that the benchmarks measure the
// client alone.
const asMember = "ETCDPERF_LOAD_TEST_AS_MEMBER"

func TestMain(m *testing.M) {
	if os.Getenv(asMember) == "1" {
		if err := lab.ServeArgs(os.Args[1:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "etcdperf-load-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(asMember, "1") // for the member process only
	target, err = lab.Open(context.Background(), lab.TargetOptions{DataDir: dir, RunID: "load", Separate: true, ServerCommand: []string{os.Args[0]}})
	os.Unsetenv(asMember)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for range 2 {
		ep := target.Members()[0].ClientURL
		c, err := target.Client().NewConn(context.Background(), ep)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		addr, tc, _ := target.Client().Direct(ep)
		conns = append(conns, Conn{Client: c, Addr: addr, TLS: tc})
	}
	code := m.Run()
	for _, c := range conns {
		c.Client.Close()
	}
	target.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}

func prefix(t *testing.T) string { return "/etcdperf/test/" + t.Name() + "/" }

func count(t *testing.T, p string) int64 {
	t.Helper()
	r, err := target.Client().Get(context.Background(), p, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return r.Count
}

func base(t *testing.T, workload string) Options {
	return Options{Workload: workload, Clients: 4, Total: 200, Prefix: prefix(t), KeySize: 8, ValSize: 16,
		KeySpaceSize: 1, CommandTimeout: 5 * time.Second, SampleInterval: 100 * time.Millisecond}
}

func checkStats(t *testing.T, st *Stats, err error, ops int64) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if st.Ops != ops || len(st.Errors) != 0 {
		t.Fatalf("ops %d errors %v, want %d ops and no error", st.Ops, st.Errors, ops)
	}
	if st.Latency.Count() != ops || st.Latency.Quantile(50) <= 0 || st.Latency.Max() < st.Latency.Quantile(99) {
		t.Errorf("latency count %d p50 %v", st.Latency.Count(), st.Latency.Quantile(50))
	}
	var series int64
	for _, s := range st.Series {
		series += s.Ops
	}
	if series != ops {
		t.Errorf("the series counts %d ops, want %d", series, ops)
	}
}

func TestPutSequentialKeys(t *testing.T) {
	o := base(t, Put)
	o.SequentialKeys, o.KeySpaceSize = true, 50
	p := &Progress{}
	o.Progress = p
	st, err := Run(context.Background(), conns, o)
	checkStats(t, st, err, 200)
	if n := count(t, o.Prefix); n != 50 {
		t.Errorf("%d keys under the prefix, want the key space of 50", n)
	}
	if p.Done() != 200 || p.Total() != 200 {
		t.Errorf("progress %d/%d", p.Done(), p.Total())
	}
	r, err := target.Client().Get(context.Background(), KeyName(o.Prefix, 8, 49))
	if err != nil || len(r.Kvs) != 1 || len(r.Kvs[0].Value) != 16 {
		t.Errorf("key 49: %v %v", r, err)
	}
	if st.Service != nil {
		t.Error("a service-time histogram without a rate")
	}
}

func TestRangeOverPrefilledPrefix(t *testing.T) {
	o := base(t, Range)
	o.Prefill, o.Limit, o.Serializable = 20, 10, true
	st, err := Run(context.Background(), conns, o)
	checkStats(t, st, err, 200)
	if n := count(t, o.Prefix); n != 20 {
		t.Errorf("%d keys prefilled, want 20", n)
	}
}

func TestTxnPutAndMixed(t *testing.T) {
	o := base(t, TxnPut)
	o.TxnOps, o.KeySpaceSize = 3, 30
	st, err := Run(context.Background(), conns, o)
	checkStats(t, st, err, 200)
	if n := count(t, o.Prefix); n != 30 {
		t.Errorf("%d keys, want 30", n)
	}

	o = base(t, TxnMixed)
	o.Prefix += "mixed/"
	o.RWRatio, o.KeySpaceSize, o.Limit = 3, 10, 100
	st, err = Run(context.Background(), conns, o)
	checkStats(t, st, err, 200)
	r, w := st.Parts[0], st.Parts[1]
	if r.Name != "read" || w.Name != "write" || r.Ops+w.Ops != 200 || r.Ops < w.Ops {
		t.Errorf("parts %+v %+v: want reads about 3x writes, 200 in all", r, w)
	}
}

func TestWatchLatency(t *testing.T) {
	o := base(t, WatchLatency)
	o.Total, o.Rate, o.Streams, o.WatchersPerStream, o.KeySize, o.ValSize = 40, 200, 2, 3, 32, 32
	st, err := Run(context.Background(), conns, o)
	checkStats(t, st, err, 40*6)
	if st.Parts[0].Name != "put" || st.Parts[0].Ops != 40 {
		t.Errorf("put part %+v", st.Parts[0])
	}
}

func TestLeaseKeepaliveRevokesLeases(t *testing.T) {
	o := base(t, LeaseKeepalive)
	before, err := target.Client().Leases(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	st, err := Run(context.Background(), conns, o)
	checkStats(t, st, err, 200)
	after, err := target.Client().Leases(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Leases) != len(before.Leases) {
		t.Errorf("%d leases before, %d after: the run left leases behind", len(before.Leases), len(after.Leases))
	}
}

func TestRateIsOpenLoop(t *testing.T) {
	o := base(t, Put)
	o.Total, o.Rate, o.Clients = 100, 500, 2
	start := time.Now()
	st, err := Run(context.Background(), conns, o)
	checkStats(t, st, err, 100)
	// 100 requests at 500/s take about 0.2s, not less.
	if el := time.Since(start); el < 190*time.Millisecond {
		t.Errorf("100 requests at 500/s took %v", el)
	}
	if st.Service == nil || st.Service.Count() != 100 {
		t.Fatal("no service time with a rate")
	}
	// Latency from the intended time includes the service time.
	if st.Latency.Mean() < st.Service.Mean() {
		t.Errorf("latency mean %v < service mean %v", st.Latency.Mean(), st.Service.Mean())
	}
}

func TestDurationAndCancel(t *testing.T) {
	o := base(t, Put)
	o.Total, o.Duration = 0, 300*time.Millisecond
	start := time.Now()
	st, err := Run(context.Background(), conns, o)
	if err != nil || st.Ops == 0 {
		t.Fatalf("duration run: %v, %d ops", err, st.Ops)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("a 300ms run took %v", el)
	}
	ctx, cancel := context.WithCancel(context.Background())
	o.Duration = time.Minute
	time.AfterFunc(200*time.Millisecond, cancel)
	st, err = Run(ctx, conns, o)
	if err != context.Canceled || st == nil || st.Ops == 0 || len(st.Errors) != 0 {
		t.Errorf("cancelled run: %v %+v", err, st)
	}
}

func TestCommandTimeoutCountsStalledRequests(t *testing.T) {
	// A connection to a port that accepts and never answers stalls every
	// request: the watchdog fails each after the timeout, and the run ends.
	o := base(t, Put)
	o.Total, o.Clients, o.CommandTimeout = 3, 1, 150*time.Millisecond
	stallAddr := testutil.SilentListener(t)
	stall, err := clientv3.New(clientv3.Config{Endpoints: []string{stallAddr}})
	if err != nil {
		t.Fatal(err)
	}
	defer stall.Close()
	start := time.Now()
	st, err := Run(context.Background(), []Conn{{Client: stall, Addr: stallAddr}}, o)
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("3 stalled requests with a 150ms timeout took %v", el)
	}
	key, n := st.TopError()
	if n != 3 || !strings.Contains(key, "DeadlineExceeded") || st.Ops != 0 {
		t.Errorf("errors %v ops %d", st.Errors, st.Ops)
	}
}

func TestValidate(t *testing.T) {
	good := Options{Workload: Put, Clients: 1, Total: 1, Prefix: "/p/", KeySize: 8, KeySpaceSize: 1}
	cases := map[string]func(o *Options){
		"unknown workload":   func(o *Options) { o.Workload = "delete" },
		"--clients":          func(o *Options) { o.Clients = 0 },
		"--total or":         func(o *Options) { o.Total = 0 },
		"--rate":             func(o *Options) { o.Rate = -1 },
		"empty --prefix":     func(o *Options) { o.Prefix = "" },
		"cannot hold":        func(o *Options) { o.KeySize, o.KeySpaceSize = 2, 1000 },
		"--key-space-size":   func(o *Options) { o.KeySpaceSize = 0 },
		"--txn-ops":          func(o *Options) { o.Workload, o.TxnOps = TxnPut, 2 },
		"--put-rate":         func(o *Options) { o.Workload, o.Streams, o.WatchersPerStream, o.ValSize = WatchLatency, 1, 1, 8 },
		"--val-size must be": func(o *Options) { o.Workload, o.Streams, o.WatchersPerStream, o.Rate = WatchLatency, 1, 1, 5 },
	}
	for want, mod := range cases {
		o := good
		mod(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", want, err)
		}
	}
	if err := good.Validate(); err != nil {
		t.Error(err)
	}
}

func TestKeys(t *testing.T) {
	if k := KeyName("/p/", 8, 0x2a); k != "/p/0000002a" {
		t.Errorf("key %q", k)
	}
	if e := PrefixEnd("/etcdperf/x/"); e != "/etcdperf/x0" {
		t.Errorf("prefix end %q", e)
	}
	if e := PrefixEnd("a\xff"); e != "b" {
		t.Errorf("prefix end %q", e)
	}
}

// A failed request of a mixed workload counts in its part (read or write)
// as well as in the errors.
func TestFailuresCountInTheirPart(t *testing.T) {
	o := base(t, TxnMixed)
	o.Total, o.Clients, o.CommandTimeout, o.RandomState = 6, 1, 100*time.Millisecond, 1
	o.RWRatio, o.KeySpaceSize = 1, 10
	stallAddr := testutil.SilentListener(t)
	stall, err := clientv3.New(clientv3.Config{Endpoints: []string{stallAddr}})
	if err != nil {
		t.Fatal(err)
	}
	defer stall.Close()
	st, err := Run(context.Background(), []Conn{{Client: stall, Addr: stallAddr}}, o)
	if err != nil {
		t.Fatal(err)
	}
	r, w := st.Parts[0], st.Parts[1]
	if st.ErrorCount() != 6 || r.Errors+w.Errors != 6 || r.Errors == 0 || w.Errors == 0 || r.Ops+w.Ops != 0 {
		t.Errorf("errors %v, parts %+v %+v: want the 6 failures split over read and write", st.Errors, r, w)
	}
}
