package check

import (
	"testing"
	"time"
)

// The profiles are etcdctl's (etcdctl/ctlv3/command/check.go).
func TestProfilesAreEtcdctls(t *testing.T) {
	want := map[string][2]float64{"s": {50, 150}, "m": {200, 1000}, "l": {500, 8000}, "xl": {1000, 15000}}
	for _, alias := range [][2]string{{"s", "s"}, {"small", "s"}, {"m", "m"}, {"medium", "m"}, {"l", "l"}, {"large", "l"}, {"xl", "xl"}, {"xLarge", "xl"}, {" XL ", "xl"}} {
		p, err := LookupProfile(alias[0])
		if err != nil {
			t.Fatalf("%q: %v", alias[0], err)
		}
		w := want[alias[1]]
		if p.Name != alias[1] || float64(p.Clients) != w[0] || p.Rate != w[1] || p.Duration != time.Minute || p.KeySize != 256 || p.ValSize != 1024 || p.Source == "" {
			t.Errorf("%q: %+v", alias[0], p)
		}
	}
	keys := map[string]int64{"s": 10_000, "m": 100_000, "l": 1_000_000, "xl": 3_000_000}
	for name, n := range keys {
		p, err := LookupScaleProfile(name)
		if err != nil || p.Keys != n || p.KeySize+p.ValSize != 1024 {
			t.Errorf("datascale %s: %+v %v", name, p, err)
		}
	}
	for _, bad := range []string{"", "xxl", "sm"} {
		if _, err := LookupProfile(bad); err == nil {
			t.Errorf("LookupProfile(%q) accepted", bad)
		}
		if _, err := LookupScaleProfile(bad); err == nil {
			t.Errorf("LookupScaleProfile(%q) accepted", bad)
		}
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

// A sweep's clients grow with the rate as check perf's profiles do: the
// profiles' own at their rates, between them on the log of the rate.
func TestClientsFor(t *testing.T) {
	for r, want := range map[float64]int{10: 50, 150: 50, 1000: 200, 2000: 300, 4000: 400, 8000: 500, 15000: 1000, 30000: 1000} {
		if got := ClientsFor(r); got != want {
			t.Errorf("ClientsFor(%g) = %d, want %d", r, got, want)
		}
	}
}
