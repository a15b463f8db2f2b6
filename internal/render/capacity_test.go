package render

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/result"
)

// The sweep's text: one line a step (a p99 in etcd's lowest bucket says
// "<= 1ms"), what broke, the answer; and the side-by-side table's
// capacity lines, only when a location was swept.
func TestCapacityText(t *testing.T) {
	c := &result.Capacity{ValueSize: 1024, StepSeconds: 2, Answer: "carries etcd up to 1,000 puts/s", Steps: []result.CapacityStep{
		{Offered: 150, Achieved: 150, Clients: 50, WALFsyncP99: 0.001, WALFsyncBound: true, DeviceIOPS: 500, DeviceUtil: 0.1},
		{Offered: 1000, Achieved: 990, Clients: 200, WALFsyncP99: 0.0449, Broke: []string{"wal_fsync_p99", "request_p99"}, Cause: "disk"},
	}}
	var b strings.Builder
	capacityText(&b, c, "  ")
	out := b.String()
	for _, want := range []string{"Capacity: puts of 1.0 KiB values, offered step by step (2s each, open loop):", "<= 1ms", "44.9ms", "wal_fsync_p99, request_p99", "  => carries etcd up to 1,000 puts/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "(disk)") {
		t.Errorf("a step's own cause in the table (the answer says why):\n%s", out)
	}
	var sb strings.Builder
	r := &result.Result{Doctor: &result.Doctor{Targets: []result.DoctorTarget{{Name: "a", Capacity: 4000, CapacityCause: "disk_or_cpu"}, {Name: "b", Capacity: 390, CapacityCause: "iops_cap"}}}}
	sideBySide(&sb, r)
	if s := sb.String(); !strings.Contains(s, "capacity (puts/s)") || !strings.Contains(s, "390/s (0.10x)") || !strings.Contains(s, "iops_cap") {
		t.Errorf("side by side:\n%s", s)
	}
	sb.Reset()
	r.Doctor.Targets[0].Capacity, r.Doctor.Targets[0].CapacityCause, r.Doctor.Targets[1].Capacity, r.Doctor.Targets[1].CapacityCause = 0, "", 0, ""
	sideBySide(&sb, r)
	if strings.Contains(sb.String(), "capacity") {
		t.Errorf("capacity lines without a sweep:\n%s", sb.String())
	}
}
