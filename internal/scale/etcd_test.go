package scale

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/lab"
)

func startEtcd(t *testing.T) *clientv3.Client {
	t.Helper()
	tg, err := lab.Open(context.Background(), lab.TargetOptions{DataDir: t.TempDir(), RunID: "scale-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg.Client().Client
}

// A list reads a resource whole in pages at one revision: keys written
// after its first page are not in it, and it stops at the prefix's end.
func TestListAllPagesAtOneRevision(t *testing.T) {
	c := startEtcd(t)
	ctx := context.Background()
	for i := range 1203 {
		if _, err := c.Put(ctx, fmt.Sprintf("/r/registry/pods/ns/%05d", i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	// A neighbour just past the prefix must not be listed.
	if _, err := c.Put(ctx, "/r/registry/pods0", "x"); err != nil {
		t.Fatal(err)
	}
	l, err := ListAll(ctx, c, "/r/registry/pods/", 500, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if l.Pages != 3 || l.Keys != 1203 || l.Bytes != 1203*int64(len("/r/registry/pods/ns/00000")+1) || l.Took <= 0 || l.SlowestPage > l.Took {
		t.Errorf("list %+v", l)
	}
	l, err = ListAll(ctx, c, "/r/registry/none/", 500, 5*time.Second)
	if err != nil || l.Pages != 1 || l.Keys != 0 {
		t.Errorf("empty list %+v %v", l, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ListAll(cctx, c, "/r/registry/pods/", 500, 5*time.Second); err == nil || !strings.Contains(err.Error(), "/r/registry/pods/ (page 1)") {
		t.Errorf("cancelled list: %v", err)
	}
}

// The watches see every put under their prefixes, measure each put's lag
// from the time in its value, and catch up to a revision.
func TestWatchesMeasureLag(t *testing.T) {
	c := startEtcd(t)
	ctx := context.Background()
	cs, _ := ParseObjects("pods=50,services=10")
	o := NewObjects("/w/", cs, 10, 1)
	w, err := StartWatches(ctx, c, []string{o.KindPrefix(0), o.KindPrefix(1)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var rev int64
	for k, cnt := range cs {
		for idx := range cnt.N {
			// The value says it was put 30ms before it was.
			r, err := c.Put(ctx, string(o.Key(nil, k, idx)), string(o.Value(nil, k, idx, time.Now().Add(-30*time.Millisecond))))
			if err != nil {
				t.Fatal(err)
			}
			rev = r.Header.Revision
		}
	}
	// A key outside the prefixes, and a value that is not etcdperf's.
	if _, err := c.Put(ctx, "/w/other", "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, o.KindPrefix(0)+"foreign", "not ours"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Delete(ctx, string(o.Key(nil, 0, 0))); err != nil {
		t.Fatal(err)
	}
	r, _ := c.Get(ctx, "/w/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if !w.CatchUp(ctx, r.Header.Revision, 10*time.Second) {
		t.Fatalf("the watches did not reach revision %d (last put %d)", r.Header.Revision, rev)
	}
	lag, events, errs := w.Take()
	if events != 60+2 || lag.Count() != 60 || len(errs) != 0 {
		t.Errorf("%d events, %d lags, errors %v", events, lag.Count(), errs)
	}
	if lag.Min() < 30*time.Millisecond || lag.Max() > 5*time.Second {
		t.Errorf("lag from %v to %v, want at least the 30ms the values claim", lag.Min(), lag.Max())
	}
	// Take starts afresh.
	if lag, events, _ := w.Take(); lag.Count() != 0 || events != 0 {
		t.Errorf("second take: %d lags, %d events", lag.Count(), events)
	}
	// A revision nobody reaches: CatchUp gives up in time.
	start := time.Now()
	if w.CatchUp(ctx, r.Header.Revision+1000, 300*time.Millisecond) || time.Since(start) > 2*time.Second {
		t.Errorf("caught up with a future revision, or waited %v", time.Since(start))
	}
}

// The log tail counts the warnings of the lines added since the last
// count, whole lines only, from etcd's real log lines.
func TestLogTailCountsNewLines(t *testing.T) {
	real, err := os.ReadFile(filepath.Join("..", "etcdlog", "testdata", "real", "embed-3.7.3-json.log"))
	if err != nil {
		t.Fatal(err)
	}
	slow := 0
	for _, l := range strings.Split(string(real), "\n") {
		if strings.Contains(l, `"apply request took too long"`) {
			slow++
		}
	}
	if slow == 0 {
		t.Fatal("the real log has no slow apply")
	}
	path := filepath.Join(t.TempDir(), "etcd.log")
	// What was there before the tail started is not counted.
	if err := os.WriteFile(path, real, 0o600); err != nil {
		t.Fatal(err)
	}
	lt := NewLogTail([]string{path})
	if n, err := lt.Count(); err != nil || len(n) != 0 {
		t.Fatalf("nothing new: %v %v", n, err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cut := len(real) - 40 // the last line, half written
	f.Write(real[:cut])
	first, err := lt.Count()
	if err != nil {
		t.Fatal(err)
	}
	f.Write(real[cut:])
	second, err := lt.Count()
	if err != nil {
		t.Fatal(err)
	}
	total := first["slow_apply"] + first["slow_read_only_range"] + first["slow_read_only_txn"] +
		second["slow_apply"] + second["slow_read_only_range"] + second["slow_read_only_txn"]
	if total != int64(slow) {
		t.Errorf("counted %v then %v: %d slow applies, want %d", first, second, total, slow)
	}
	if _, err := NewLogTail([]string{filepath.Join(t.TempDir(), "gone.log")}).Count(); err == nil {
		t.Error("a missing log file counts without error")
	}
}
