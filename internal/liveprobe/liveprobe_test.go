package liveprobe

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/diskprobe"
	"github.com/etcdperf/etcdperf/internal/result"
)

// The probe's own decision: the fewest WAL fsyncs of a watched member
// judge whether it runs; with enough of them nothing is written beside
// the member unless the user asked for the probe by name.
func TestBesideSkipsWhenTheMemberJudgesItsDisk(t *testing.T) {
	srv := &result.Server{WALFsync: &result.Latency{Count: 900}, Members: []result.MemberServer{
		{Name: "a", WALFsync: &result.Latency{Count: 600}}, {Name: "b", WALFsync: &result.Latency{Count: 450}}, {Name: "c"}}}
	if n, ok := memberFsyncs(srv); !ok || n != 450 {
		t.Errorf("memberFsyncs = %d, %v; want the fewest, 450", n, ok)
	}
	if n, ok := memberFsyncs(&result.Server{WALFsync: &result.Latency{Count: 12}}); !ok || n != 12 {
		t.Errorf("one member: %d, %v; want 12", n, ok)
	}
	if _, ok := memberFsyncs(&result.Server{}); ok {
		t.Error("no histogram read, yet known")
	}

	o := Options{Window: 30 * time.Second, Probe: func(context.Context, diskprobe.Options) (*result.Result, error) {
		t.Fatal("the probe ran beside a member whose fsyncs judge its disk")
		return nil, nil
	}}
	r := &result.Result{Server: srv}
	var row result.DoctorTarget
	if err := Beside(context.Background(), o, r, &row, t.TempDir(), ""); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(row.DiskProbe, "not run: the member's own 450 WAL fsyncs in 30s judge its disk") || r.Disk != nil {
		t.Errorf("row %q, disk %+v", row.DiskProbe, r.Disk)
	}
}
