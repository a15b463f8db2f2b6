package diagnose

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
)

// A soak whose last part broke a limit is a finding: critical at the rate
// the user asked for, a warning at the sweep's own answer; a drop of the
// device's writes during it names the storage below the device or its
// cap, which the figures cannot tell apart. A soak that held is none.
func TestSoakBroke(t *testing.T) {
	broke := func(from string, drop *result.SoakDrop) *result.Result {
		r := result.New(result.KindCheck)
		r.Soak = &result.Soak{Rate: 800, RateFrom: from, Seconds: 90, LastFrom: 60, SustainedPutsPerS: 205, Broke: []string{limits.WALFsyncP99},
			LastWALFsyncP99: 0.115, LastAchieved: 790, Drop: drop}
		return r
	}
	drop := &result.SoakDrop{After: 40, Fell: []string{"device_iops"}, IOPSBefore: 2400, IOPSAfter: 600}
	for _, c := range []struct {
		name     string
		r        *result.Result
		severity result.Severity
		cause    result.Cause
		title    string
	}{
		{"at --soak-rate", broke("--soak-rate", nil), result.Critical, "", "Offered 800 puts/s for 90s, etcd broke the WAL fsync p99 (115ms) over the last 30s: it sustains ~205 puts/s"},
		{"at the sweep's answer", broke(result.SoakRateCapacity, nil), result.Warning, "", "it sustains ~205 puts/s"},
		{"after a drop", broke("--soak-rate", drop), result.Critical, result.CauseDiskOrIOPSCap, "(after 40s the device's writes fell from 2,400 to 600 IOPS)"},
	} {
		fs := soakBroke(c.r)
		if len(fs) != 1 || fs[0].Severity != c.severity || fs[0].Cause != c.cause || !strings.Contains(fs[0].Title, c.title) || len(fs[0].Evidence) == 0 {
			t.Errorf("%s: %+v; want one %s finding, cause %q, titled %q", c.name, fs, c.severity, c.cause, c.title)
		}
	}
	held := broke("--soak-rate", nil)
	held.Soak.Broke = nil
	if fs := soakBroke(held); len(fs) != 0 {
		t.Errorf("a soak that held: %+v", fs)
	}
}
