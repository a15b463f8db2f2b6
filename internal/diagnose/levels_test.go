package diagnose

import (
	"testing"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
)

// The member rules (from a Result) and the capacity sweep's (from the
// criteria) read one set of levels: a level set with --limit reaches both
// alike.
func TestLevelsOneSet(t *testing.T) {
	criteria, err := limits.Override(limits.Table, []string{limits.IOPSCapUsed + "=70%", limits.FsyncsFlatGrowth + "=1.5", limits.VolumeIOPS + "=3000", limits.HostCPUBusy + "=50%"})
	if err != nil {
		t.Fatal(err)
	}
	r := result.New(result.KindDoctor)
	r.Limits = limits.Changed(criteria)
	of, in := LevelsOf(r), LevelsIn(criteria)
	if of != in {
		t.Errorf("levels from the Result\n%+v\ndiffer from the criteria's\n%+v", of, in)
	}
	if in.CapUsed != 0.7 || in.FlatGrowth != 1.5 || in.VolumeIOPS != 3000 || in.HostCPUBusy != 0.5 {
		t.Errorf("the levels set are not read: %+v", in)
	}
	if d := LevelsIn(limits.Table); d == in || d.VolumeIOPS != 0 || d.WALLimit != limits.LimitOf(limits.Table, limits.WALFsyncP99) {
		t.Errorf("limits.Table's levels: %+v", d)
	}
}

// The write-cap tests, each written once: a cap used to iops_cap_used, a
// spread of writes within fsyncs_flat_growth, the volume's provisioned
// figures as the user states them.
func TestLevelsWriteCap(t *testing.T) {
	lv := Levels{CapUsed: 0.9, FlatGrowth: 1.15}
	for _, c := range []struct {
		limit, wrote float64
		want         bool
	}{{0, 5000, false}, {1000, 899, false}, {1000, 900, true}, {1000, 1200, true}} {
		if got := lv.AtCap(c.limit, c.wrote); got != c.want {
			t.Errorf("AtCap(%g, %g) = %v, want %v", c.limit, c.wrote, got, c.want)
		}
	}
	if !lv.Flat(1000, 1150) || lv.Flat(1000, 1160) || !lv.Flat(1000, 900) {
		t.Error("Flat: 1,000 to 1,150 writes/s is within 1.15x, 1,160 is not, fewer is")
	}
	if figs := lv.Volume(2000, 1<<20); figs != nil {
		t.Errorf("no figure stated: %+v", figs)
	}
	lv.VolumeIOPS, lv.VolumeBPS = 2000, 10<<20
	figs := lv.Volume(1900, 1<<20)
	if len(figs) != 2 || figs[0].Flag != "--volume-iops" || !figs[0].AtCap || figs[0].Used != 0.95 ||
		figs[1].Flag != "--volume-mbps" || figs[1].AtCap || figs[1].Used != 0.1 {
		t.Errorf("1,900 IOPS and 1 MiB/s of 2,000 IOPS and 10 MiB/s: %+v", figs)
	}
}
