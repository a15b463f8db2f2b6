package load

import (
	"context"
	"fmt"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// The put workload writes the caller's objects: their keys, values and
// lease, with KeySize and the key space left out.
func TestPutObjects(t *testing.T) {
	o := base(t, Put)
	o.KeySize, o.KeySpaceSize, o.Total = 0, 0, 60
	lease, err := target.Client().Grant(context.Background(), 60)
	if err != nil {
		t.Fatal(err)
	}
	defer target.Client().Revoke(context.Background(), lease.ID)
	o.Objects = func(i int64, req *pb.PutRequest) {
		req.Key = fmt.Appendf(req.Key[:0], "%sobj/%03d", o.Prefix, i)
		req.Value = append(req.Value[:0], make([]byte, 100+i)...)
		req.Lease = 0
		if i%2 == 1 {
			req.Lease = int64(lease.ID)
		}
	}
	st, err := Run(context.Background(), conns, o)
	checkStats(t, st, err, 60)
	r, err := target.Client().Get(context.Background(), o.Prefix+"obj/", clientv3.WithPrefix())
	if err != nil || len(r.Kvs) != 60 {
		t.Fatalf("%v: %d keys, want 60", err, len(r.Kvs))
	}
	for i, kv := range r.Kvs {
		if string(kv.Key) != fmt.Sprintf("%sobj/%03d", o.Prefix, i) || len(kv.Value) != 100+i || (kv.Lease != 0) != (i%2 == 1) {
			t.Errorf("key %q: %d bytes, lease %x", kv.Key, len(kv.Value), kv.Lease)
		}
	}
	if d := o.Describe(); d != "puts of the caller's objects under "+o.Prefix {
		t.Errorf("describe %q", d)
	}
}

// Stop ends a paced run without cancelling what is in flight: every
// request sent completes and counts, none fails.
func TestStopEndsGracefully(t *testing.T) {
	o := base(t, Put)
	o.Total, o.Duration, o.Rate, o.Clients = 0, time.Minute, 400, 4
	stop := make(chan struct{})
	o.Stop = stop
	time.AfterFunc(300*time.Millisecond, func() { close(stop) })
	start := time.Now()
	st, err := Run(context.Background(), conns, o)
	if err != nil || st.Ops == 0 || len(st.Errors) != 0 {
		t.Fatalf("stopped run: %v, %d ops, errors %v", err, st.Ops, st.Errors)
	}
	// About 120 puts were due in 300ms; none is sent after the stop.
	if el := time.Since(start); el > 2*time.Second || st.Ops > 200 {
		t.Errorf("stopped after %v with %d ops", el, st.Ops)
	}
}

// Making a request (here an Objects generator that takes 200ms) happens
// before the clock starts: the latency is the request's alone.
func TestMakingTheRequestIsNotTimed(t *testing.T) {
	const slow = 200 * time.Millisecond
	o := base(t, Put)
	o.KeySize, o.KeySpaceSize, o.Total, o.Clients = 0, 0, 4, 2
	o.Objects = func(i int64, req *pb.PutRequest) {
		time.Sleep(slow)
		req.Key = fmt.Appendf(req.Key[:0], "%sobj/%d", o.Prefix, i)
		req.Value = append(req.Value[:0], "v"...)
	}
	st, err := Run(context.Background(), conns, o)
	checkStats(t, st, err, 4)
	if p50 := st.Latency.Quantile(50); p50 >= slow {
		t.Errorf("put p50 %v includes making the request (%v)", p50, slow)
	}
	if _, err := target.Client().Delete(context.Background(), o.Prefix, clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
}
