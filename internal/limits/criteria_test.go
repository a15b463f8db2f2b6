package limits

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/result"
)

func TestEvaluate(t *testing.T) {
	sync, _ := Lookup(Table, DiskSyncP99)
	iops, _ := Lookup(Table, DiskIOPS)
	leader, _ := Lookup(Table, LeaderChanges)
	slowest, _ := Lookup(Table, SlowestRequest)
	cases := []struct {
		c    Criterion
		v    float64
		want result.Status
	}{
		{sync, 0.0004, result.StatusPass},
		{sync, 0.0079, result.StatusPass},
		{sync, 0.008, result.StatusWarn},
		{sync, 0.0099, result.StatusWarn},
		{sync, 0.010, result.StatusFail}, // "< 10ms": exactly 10ms fails
		{sync, 0.0198, result.StatusFail},
		{iops, 5000, result.StatusPass},
		{iops, 500, result.StatusPass},
		{iops, 499, result.StatusWarn},
		{iops, 50, result.StatusWarn},
		{iops, 49, result.StatusFail},
		{leader, 0, result.StatusPass},
		{leader, 1, result.StatusFail},
		{slowest, 0.5, result.StatusPass}, // "<= 0.5s"
		{slowest, 0.5001, result.StatusFail},
	}
	for _, c := range cases {
		got := Evaluate(c.c, c.v)
		if got.Status != c.want {
			t.Errorf("%s at %v: %s, want %s", c.c.ID, c.v, got.Status, c.want)
		}
		if got.Name != c.c.ID || got.Limit != c.c.Limit || got.Op != string(c.c.Op) || got.Observed != c.v || got.Source == "" {
			t.Errorf("%s: check does not carry its criterion: %+v", c.c.ID, got)
		}
	}
}

func TestTableIsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Table {
		if seen[c.ID] {
			t.Errorf("duplicate criterion %s", c.ID)
		}
		seen[c.ID] = true
		if c.Source == "" || c.Title == "" || c.Unit == "" {
			t.Errorf("criterion %s lacks a title, unit or source", c.ID)
		}
		if c.Warn != nil && !passes(c.Op, *c.Warn, c.Limit) {
			t.Errorf("criterion %s warns at %v, beyond its limit %v", c.ID, *c.Warn, c.Limit)
		}
	}
}

func TestVerdict(t *testing.T) {
	mk := func(ss ...result.Status) []result.Check {
		var cs []result.Check
		for _, s := range ss {
			cs = append(cs, result.Check{Status: s})
		}
		return cs
	}
	if v := Verdict(nil); v != result.Pass {
		t.Errorf("no checks: %s", v)
	}
	if v := Verdict(mk(result.StatusPass, result.StatusWarn)); v != result.Warn {
		t.Errorf("pass+warn: %s", v)
	}
	if v := Verdict(mk(result.StatusFail, result.StatusWarn, result.StatusPass)); v != result.Fail {
		t.Errorf("fail+warn+pass: %s", v)
	}
}

func TestOverride(t *testing.T) {
	tab, err := Override(Table, []string{"disk_sync_p99=5ms", "throughput=80%", "disk_iops=100,1000"})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := Lookup(tab, DiskSyncP99)
	if s.Limit != 0.005 || s.Warn != nil {
		t.Errorf("disk_sync_p99 = %v warn %v, want 0.005 and no warning", s.Limit, s.Warn)
	}
	th, _ := Lookup(tab, Throughput)
	if th.Limit != 0.8 {
		t.Errorf("throughput = %v, want 0.8", th.Limit)
	}
	io, _ := Lookup(tab, DiskIOPS)
	if io.Limit != 100 || io.Warn == nil || *io.Warn != 1000 {
		t.Errorf("disk_iops = %v/%v", io.Limit, io.Warn)
	}
	orig, _ := Lookup(Table, DiskSyncP99)
	if orig.Limit != 0.010 {
		t.Error("Override changed the shared table")
	}
	for _, bad := range []string{"nosuch=1", "disk_sync_p99", "disk_sync_p99=fast", "throughput=x%", "disk_iops=1,y"} {
		if _, err := Override(Table, []string{bad}); err == nil {
			t.Errorf("Override(%q) accepted", bad)
		}
	}
}

// The levels of the findings are set like the checks' limits, sizes in
// bytes included, and a Result records what differs from the defaults.
func TestOverrideLevels(t *testing.T) {
	tab, err := Override(Table, []string{DBFragmentedSize + "=64m", MemberSchedWait + "=2ms", DBQuotaUsed + "=90%,70%"})
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := Lookup(tab, DBFragmentedSize); c.Limit != 64<<20 {
		t.Errorf("%s = %v, want 64 MiB", DBFragmentedSize, c.Limit)
	}
	if c, _ := Lookup(tab, MemberSchedWait); c.Limit != 0.002 {
		t.Errorf("%s = %v, want 2ms", MemberSchedWait, c.Limit)
	}
	changed := Changed(tab)
	if len(changed) != 3 || changed[0].Name != DBQuotaUsed || *changed[0].Warn != 0.7 || changed[1].Name != MemberSchedWait || changed[2].Name != DBFragmentedSize {
		t.Errorf("Changed = %+v, want the three levels set, in the table's order", changed)
	}
	if got := Changed(Table); got != nil {
		t.Errorf("Changed(Table) = %+v, want none", got)
	}
	back := WithLimits(Table, changed)
	for _, id := range []string{DBFragmentedSize, MemberSchedWait, DBQuotaUsed} {
		a, _ := Lookup(back, id)
		b, _ := Lookup(tab, id)
		if a.Limit != b.Limit || !sameWarn(a.Warn, b.Warn) || a.Source != b.Source {
			t.Errorf("%s read back as %+v, want %+v", id, a, b)
		}
	}
	if _, err := Override(Table, []string{DBFragmentedSize + "=big"}); err == nil || !strings.Contains(err.Error(), "a size like 64m") {
		t.Errorf("a size that is not one: %v", err)
	}
}

// The levels derived from the WAL fsync limit are their shares of it at
// the defaults (today's 2ms and 5ms), follow --limit wal_fsync_p99, are
// recorded in a Result when they moved, and keep a limit set for them
// whichever comes first.
func TestDerivedLevels(t *testing.T) {
	want := map[string]float64{DeviceFastAwait: 0.002, DeviceIdleAwait: 0.005, WALFsyncFast: 0.005}
	for id, v := range want {
		if got := LimitOf(Table, id); got != v {
			t.Errorf("Table's %s = %v, want %v", id, got, v)
		}
	}
	moved, err := Override(Table, []string{WALFsyncP99 + "=20ms"})
	if err != nil {
		t.Fatal(err)
	}
	for id, v := range want {
		if got := LimitOf(moved, id); got != 2*v {
			t.Errorf("with %s=20ms, %s = %v, want %v", WALFsyncP99, id, got, 2*v)
		}
	}
	var names []string
	for _, l := range Changed(moved) {
		names = append(names, l.Name)
	}
	if got := strings.Join(names, " "); got != WALFsyncP99+" "+DeviceFastAwait+" "+DeviceIdleAwait+" "+WALFsyncFast {
		t.Errorf("Changed names %q, want the WAL limit and the levels it moved", got)
	}
	for _, settings := range [][]string{
		{WALFsyncP99 + "=20ms", DeviceFastAwait + "=1ms"},
		{DeviceFastAwait + "=1ms", WALFsyncP99 + "=20ms"},
	} {
		tab, err := Override(Table, settings)
		if err != nil {
			t.Fatal(err)
		}
		if got := LimitOf(tab, DeviceFastAwait); got != 0.001 {
			t.Errorf("%v: %s = %v, want the 1ms set", settings, DeviceFastAwait, got)
		}
		if got := LimitOf(tab, WALFsyncFast); got != 0.01 {
			t.Errorf("%v: %s = %v, want half of 20ms", settings, WALFsyncFast, got)
		}
	}
	// A Result's recorded levels are read back as they were, not derived
	// again: a Result judged before the levels moved keeps its own.
	back := WithLimits(Table, []result.Limit{{Name: WALFsyncP99, Limit: 0.02}})
	if got := LimitOf(back, DeviceFastAwait); got != 0.002 {
		t.Errorf("read back: %s = %v, want the recorded (default) 2ms", DeviceFastAwait, got)
	}
}

// The criteria of check perf are in the table, with etcdctl's limits.
func TestCheckPerfCriteria(t *testing.T) {
	cases := []struct {
		id       string
		pass     float64
		fail     float64
		wantOp   Op
		wantLim  float64
		wantUnit Unit
	}{
		{Throughput, 0.9, 0.89, AtLeast, 0.9, Fraction},
		{SlowestRequest, 0.5, 0.51, AtMost, 0.5, Seconds},
		{LatencyStddev, 0.1, 0.11, AtMost, 0.1, Seconds},
		{RequestErrors, 0, 1, AtMost, 0, Count},
		{RequestP99, 0.049, 0.1, Below, 0.1, Seconds},
		{WALFsyncP99, 0.0079, 0.010, Below, 0.010, Seconds},
		{BackendCommitP99, 0.019, 0.025, Below, 0.025, Seconds},
	}
	for _, c := range cases {
		cr, ok := Lookup(Table, c.id)
		if !ok {
			t.Fatalf("no criterion %s", c.id)
		}
		if cr.Op != c.wantOp || cr.Limit != c.wantLim || cr.Unit != c.wantUnit {
			t.Errorf("%s: %s %v %s", c.id, cr.Op, cr.Limit, cr.Unit)
		}
		if s := Evaluate(cr, c.pass).Status; s != "pass" {
			t.Errorf("%s at %v: %s", c.id, c.pass, s)
		}
		if s := Evaluate(cr, c.fail).Status; s != "fail" {
			t.Errorf("%s at %v: %s", c.id, c.fail, s)
		}
	}
}
