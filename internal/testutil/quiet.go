package testutil

import (
	"bufio"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
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
		idle0, total0, err := cpuTimes()
		if err != nil {
			t.Logf("cannot read this host's CPU times: %v", err)
			return
		}
		time.Sleep(time.Second)
		idle1, total1, err := cpuTimes()
		if err != nil || total1 <= total0 {
			return
		}
		if busy = 1 - float64(idle1-idle0)/float64(total1-total0); busy < 0.5 {
			if waited := time.Since(start); waited > 2*time.Second {
				t.Logf("waited %s for this host's CPUs to be less than half busy", waited.Round(time.Second))
			}
			return
		}
	}
	t.Logf("this host's CPUs were still %.0f%% busy after %s: measuring beside that work", 100*busy, max)
}

// cpuTimes is this host's idle (with I/O wait) and total CPU time, in
// clock ticks, from /proc/stat's first line. (hoststats reads it for the
// commands; it imports what imports this package.)
func cpuTimes() (idle, total uint64, err error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0, 0, errors.New("/proc/stat is empty")
	}
	fields := strings.Fields(sc.Text())
	if len(fields) < 6 || fields[0] != "cpu" {
		return 0, 0, errors.New("/proc/stat: no cpu line first")
	}
	// user, nice, system, idle, iowait, irq, softirq, steal: guest time
	// is counted in user and nice already.
	for i, f := range fields[1:min(len(fields), 9)] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, 0, err
		}
		total += v
		if i == 3 || i == 4 { // idle, iowait
			idle += v
		}
	}
	return idle, total, nil
}
