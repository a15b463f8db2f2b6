package testutil

import (
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/hoststats"
)

// WaitForQuietCPUs waits, up to max, until this host's CPUs were less than
// half busy over a second, and logs how long it waited and how busy they
// stayed when they did not calm down: a test that measures a storage
// through the kernel's own workers (a loop device, a FUSE view), which
// wait for a CPU as any thread does, starts its measurement after another
// package's tests have finished rather than beside them. The test still
// judges what it measured; this only makes a busy start less likely.
func WaitForQuietCPUs(t testing.TB, max time.Duration) {
	t.Helper()
	start := time.Now()
	busy := 1.0
	for time.Since(start) < max {
		a, err := hoststats.ReadCPU()
		if err != nil {
			t.Logf("cannot read this host's CPU times: %v", err)
			return
		}
		time.Sleep(time.Second)
		b, err := hoststats.ReadCPU()
		if err != nil || b.Total() <= a.Total() {
			return
		}
		idle := float64(b.Idle+b.IOWait-a.Idle-a.IOWait) / float64(b.Total()-a.Total())
		if busy = 1 - idle; busy < 0.5 {
			if waited := time.Since(start); waited > 2*time.Second {
				t.Logf("waited %s for this host's CPUs to be less than half busy", waited.Round(time.Second))
			}
			return
		}
	}
	t.Logf("this host's CPUs were still %.0f%% busy after %s: measuring beside that work", 100*busy, max)
}
