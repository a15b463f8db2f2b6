package limits

import (
	"math"
	"strings"
	"testing"
)

// FuzzOverride feeds --limit/--threshold values (durations, rates, counts,
// percentages, with a warning level): bad ones are refused with a message,
// never a panic, and accepted ones are finite and not negative.
func FuzzOverride(f *testing.F) {
	for _, s := range []string{"disk_sync_p99=5ms", "disk_sync_p99=0.005,0.004", "disk_iops=500", "throughput=80%",
		"wal_fsync_p99=1h", "leader_changes=0", "disk_sync_p99=NaN", "disk_iops=-1", "disk_iops=Inf", "x", "=", "throughput=%",
		"request_p99=1e309", "disk_sync_p99=-5ms", "disk_sync_p99= 15ms , 10ms"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, setting string) {
		out, err := Override(Table, []string{setting})
		if err != nil {
			if err.Error() == "" || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one line", err)
			}
			return
		}
		if len(out) != len(Table) {
			t.Fatalf("%d criteria, want %d", len(out), len(Table))
		}
		for _, c := range out {
			if math.IsNaN(c.Limit) || math.IsInf(c.Limit, 0) || c.Limit < 0 {
				t.Errorf("%q accepted as limit %v of %s", setting, c.Limit, c.ID)
			}
			if c.Warn != nil && (math.IsNaN(*c.Warn) || math.IsInf(*c.Warn, 0) || *c.Warn < 0) {
				t.Errorf("%q accepted as warning level %v of %s", setting, *c.Warn, c.ID)
			}
		}
	})
}
