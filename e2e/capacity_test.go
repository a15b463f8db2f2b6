package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/pipeline"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// capacityRun runs doctor on dir with its capacity sweep (short steps) and
// returns the location's Result; the text view must hold the sweep's
// table and its answer, and nothing may be left in dir.
func capacityRun(t *testing.T, dir string, extra ...string) *result.Result {
	t.Helper()
	cwd := t.TempDir()
	text := filepath.Join(cwd, "out.txt")
	start := time.Now()
	// doctor (and the etcd it embeds) runs above the rest of the machine's
	// work, as the cause matrix's members do: what the sweep finds is then
	// the storage's, not the CPU other tests take (a CI run beside other
	// work found the plain directory CPU-bound at its first step).
	testutil.WaitForQuietCPUs(t, 30*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "nice", append([]string{"-n", "-10", testutil.Binary(t), "doctor", "--data-dir", dir, "--duration", "3s", "--disk-runtime", "1s",
		"--capacity-step", "2s", "--capacity-confirm", "0", "--no-report", "-o", "json", "-o", text}, extra...)...)
	cmd.Dir = cwd
	r := testutil.Wait(t, cmd, ctx)
	if r.Code != 0 && r.Code != 1 {
		t.Fatalf("doctor %v: exit %d, stderr %q", extra, r.Code, r.Stderr)
	}
	res := decodeResult(t, r.Stdout)
	if len(res.Runs) != 1 || res.Runs[0].Capacity == nil || len(res.Runs[0].Capacity.Steps) == 0 {
		t.Fatalf("doctor %v: no capacity sweep: %+v", extra, res.Runs)
	}
	run := &res.Runs[0]
	c := run.Capacity
	var steps []string
	for _, s := range c.Steps {
		steps = append(steps, fmt.Sprintf("%.0f/s: achieved %.0f, fsync p99 %.2gs (%.0f/s), commit p99 %.2gs, request p99 %.2gs, broke %v (%s), cap %.0f used %.0f, device %.0f IOPS %.0f%% writes %.2gs, etcd %.2f cores",
			s.Offered, s.Achieved, s.WALFsyncP99, s.WALFsyncs, s.BackendCommitP99, s.RequestP99, s.Broke, s.Cause, s.IOPSCap, s.CappedWriteIOPS, s.DeviceIOPS, s.DeviceUtil*100, s.DeviceAwait, s.EtcdCPU))
	}
	t.Logf("doctor %v in %s:\n  %s\n  => %s (cause %s)", extra, time.Since(start).Round(time.Second), strings.Join(steps, "\n  "), c.Answer, c.Cause)
	b, err := os.ReadFile(text)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "Capacity: puts of 1.0 KiB values, offered step by step (2s each") || !strings.Contains(string(b), "=> "+c.Answer) {
		t.Errorf("the text view lacks the sweep:\n%s", b)
	}
	if c.Steps[0].Offered != 150 || c.ValueSize != 1024 || c.StepSeconds != 2 {
		t.Errorf("sweep %+v: want its first step the verdict's load (150 puts/s of 1 KiB)", c)
	}
	assertEmptyDir(t, dir)
	return run
}

// The capacity sweep in doctor: on a plain directory it climbs past the
// verdict's load; a member on a volume capped at 600 or 1,500 write IOPS
// below it (as a gp2 volume caps them) carries less, and is named the cap
// or the storage below the device, never a slow disk; a RAM disk is never limited by the disk; a disk 15ms slower per
// fsync does not carry even the verdict's load, and the disk is named.
func TestDoctorCapacity(t *testing.T) {
	// The plain and capped locations are a disk with time to spare (ext4 on
	// a RAM-backed loop device, where this machine can make one), as the
	// cause matrix's members have: on the machine's own disk, a moment of
	// another writer's made the verdict's own load break in a CI run.
	// The plain location's answer is held for 4s after the knee (a
	// confirm step; the other locations' sweeps hold none, to keep the
	// test short).
	plain := capacityRun(t, testutil.QuietDirOr(t, "1G"), "--capacity-confirm", "4s").Capacity
	if len(plain.Steps) < 2 || plain.PutsPerS < 150 || plain.Cause == result.CauseIOPSCap {
		t.Errorf("plain directory: %g puts/s, cause %s, %d steps; want past 150 puts/s and no IOPS cap", plain.PutsPerS, plain.Cause, len(plain.Steps))
	}
	if plain.PutsPerS > 150 {
		// The answer's rate held for the confirm step's 4s, or a confirm
		// step broke above it (the sweep stepped down from it).
		held := slices.ContainsFunc(plain.Steps, func(s result.CapacityStep) bool {
			return s.Confirm && s.Offered == plain.PutsPerS && len(s.Broke) == 0 && s.Seconds >= 3.5
		})
		brokeAbove := slices.ContainsFunc(plain.Steps, func(s result.CapacityStep) bool {
			return s.Confirm && s.Offered > plain.PutsPerS && len(s.Broke) > 0
		})
		if plain.ConfirmSeconds != 4 || !held && !brokeAbove {
			t.Errorf("plain directory: %g puts/s, confirm %gs, steps %+v: want its rate held by a confirm step", plain.PutsPerS, plain.ConfirmSeconds, plain.Steps)
		}
	}

	// A cgroup's cap on the member's writes is named in the sweep from the
	// cgroup's own counters (judge's TestCapacityCause, on steps measured
	// so) and by every live command (TestCauseMatrix's "iops cap" row):
	// here, the caps no cgroup of the member shows.

	// A volume capped below its file system, as a cloud volume is: no
	// cgroup of the member shows the cap, its device shows the writes
	// queued. At 600 IOPS the knee is under 1,000 puts/s (at 400, the
	// verdict's own 150 puts/s already make the loop device write ~505
	// times a second: its first step sits near the cap). Each is named
	// from etcd's behaviour alone: the IOPS cap where the steps past the
	// knee show the device's writes flat at a ceiling, else (the backend's
	// bursts of commits delayed by the cap before the writes reach it, as
	// at 1,500) the storage below the device, its cap or the storage
	// behind it, which nothing on the host tells apart; never a slow disk.
	t.Run("volume caps", func(t *testing.T) {
		if err := lab.VolumeSupported(); err != nil {
			t.Skipf("skipped: %v", err)
		}
		for _, iops := range []float64{600, 1500} {
			capped := capacityRun(t, testutil.QuietDirOr(t, "1G"), "--fault", fmt.Sprintf("1:volume-iops=%.0f", iops)).Capacity
			for _, st := range capped.Steps {
				if st.IOPSCap > 0 {
					t.Errorf("volume capped at %.0f: a cgroup cap of %.0f seen on the member's device", iops, st.IOPSCap)
				}
			}
			if busy, why := busyWithOthers(t, capped); busy {
				// The loop device's and the file system's kernel workers
				// wait for a CPU as everything else does: what the sweep
				// measured there is the CPU, and it must say so.
				t.Logf("volume capped at %.0f IOPS: %s", iops, why)
				if !namesCPU(capped.Cause) || capped.PutsPerS >= iops {
					t.Errorf("volume capped at %.0f IOPS, %s: %g puts/s, cause %s: %s; want the CPU named", iops, why, capped.PutsPerS, capped.Cause, capped.Answer)
				}
			} else if capped.Cause == result.CauseIOPSCap && !strings.Contains(capped.Answer, "at its IOPS limit") ||
				capped.Cause == result.CauseDiskOrIOPSCap && !strings.Contains(capped.Answer, "a cap on the volume's IOPS or the storage behind it") ||
				!slices.Contains([]result.Cause{result.CauseIOPSCap, result.CauseDiskOrIOPSCap}, capped.Cause) || capped.PutsPerS >= iops {
				t.Errorf("volume capped at %.0f IOPS: %g puts/s, cause %s: %s; want under %.0f puts/s, limited by the IOPS cap or the storage below the device", iops, capped.PutsPerS, capped.Cause, capped.Answer, iops)
			}
			if plain.PutsPerS <= capped.PutsPerS && !slices.Contains([]result.Cause{"cpu", "client"}, plain.Cause) {
				t.Errorf("plain %g puts/s (%s) against a volume capped at %.0f: %g; want the plain directory to carry more", plain.PutsPerS, plain.Cause, iops, capped.PutsPerS)
			}
		}
	})

	t.Run("tmpfs", func(t *testing.T) {
		// The sweep's etcd filled with 16 MiB first (--db-size): its first
		// step is the verdict's load again, on the filled database.
		ram := capacityRun(t, tmpfsDir(t), "--db-size", "16m")
		if c := ram.Capacity; slices.Contains([]result.Cause{"disk", "disk_or_cpu", result.CauseIOPSCap}, c.Cause) || c.PutsPerS < 150 {
			t.Errorf("tmpfs: %g puts/s, cause %s: %s; want past 150 and never the disk", c.PutsPerS, c.Cause, c.Answer)
		}
		if c := ram.Capacity; c.DBSize != 16<<20 || c.FillSeconds <= 0 || !strings.Contains(c.Answer, "on a database of 16.0 MiB") {
			t.Errorf("tmpfs with --db-size 16m: db_size %d, filled in %gs, answer %q", c.DBSize, c.FillSeconds, c.Answer)
		}
	})

	t.Run("slow disk", func(t *testing.T) {
		if err := pipeline.CanMountFUSE(); err != nil {
			t.Skipf("skipped: %v", err)
		}
		slow := capacityRun(t, t.TempDir(), "--simulate-fsync-delay", "15ms")
		want := []result.Cause{result.CauseDisk}
		if busy, why := busyWithOthers(t, slow.Capacity); busy {
			// The disk is still named, beside the CPU.
			t.Logf("15ms slower fsync: %s", why)
			want = append(want, result.CauseDiskOrCPU)
		}
		if c := slow.Capacity; c.PutsPerS != 0 || !slices.Contains(want, c.Cause) || len(c.Steps) != 1 || !slices.Contains(c.LimitedBy, "wal_fsync_p99") {
			t.Errorf("15ms slower fsync: %g puts/s, cause %s, limited by %v, %d steps; want 0, the disk, at the first step", c.PutsPerS, c.Cause, c.LimitedBy, len(c.Steps))
		}
	})
}

// busyWithOthers says whether this host's CPUs were busy, at the level at
// which the sweep's rules say that they delay the threads that complete
// I/O (host_cpu_busy), at the sweep's first step that broke: on a shared
// machine, with other work than the sweep's own etcd and load (other
// tests). The sweep then measured that work too, and names the CPU. why
// says it with the figures.
func busyWithOthers(t *testing.T, c *result.Capacity) (bool, string) {
	t.Helper()
	lv, ok := limits.Lookup(limits.Table, limits.HostCPUBusy)
	if !ok {
		t.Fatalf("no %s in the table", limits.HostCPUBusy)
	}
	// The step the sweep's cause is judged from, as judge.Capacity picks
	// it: the lowest rate above the answer that broke (a confirm step
	// first at a tie), not the first to break (a sweep breaks at 1,000
	// before it steps down to the knee below it).
	i := -1
	for j := range c.Steps {
		st := &c.Steps[j]
		if st.Failed() && st.Offered > c.PutsPerS && (i < 0 || st.Offered < c.Steps[i].Offered || st.Offered == c.Steps[i].Offered && st.Confirm) {
			i = j
		}
	}
	if i < 0 {
		return false, ""
	}
	st, cpus := c.Steps[i], float64(runtime.NumCPU())
	others := st.HostCPUBusy*cpus - st.EtcdCPU - st.ClientCPU
	return st.HostCPUBusy >= lv.Limit, fmt.Sprintf("at %.0f puts/s this host's CPUs were %.0f%% busy, %.2f of its %.0f cores with other work than the sweep's",
		st.Offered, 100*st.HostCPUBusy, others, cpus)
}

// namesCPU says whether a cause names the CPU (alone or beside another).
func namesCPU(c result.Cause) bool {
	return slices.Contains([]result.Cause{result.CauseCPU, result.CauseDiskOrCPU, result.CauseIOPSCapOrCPU}, c)
}

// check --capacity against a running cluster: the sweep runs on that
// cluster after the profile's load, each step's keys deleted after it;
// without --capacity, check sweeps nothing.
func TestCheckCapacityEndpoints(t *testing.T) {
	ep, cli := startServer(t)
	r := testutil.RunBinary(t, 3*time.Minute, "check", "--endpoints", ep, "--duration", "2s", "--capacity", "--capacity-step", "1s", "--capacity-confirm", "2s", "-o", "json")
	if r.Code != 0 && r.Code != 1 {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
	res := decodeResult(t, r.Stdout)
	c := res.Capacity
	if c == nil || len(c.Steps) == 0 || c.Steps[0].Offered != 150 || c.Answer == "" || c.StepSeconds != 1 {
		t.Fatalf("capacity %+v", c)
	}
	t.Logf("%s", c.Answer)
	if c.PutsPerS > 150 && (c.ConfirmSeconds != 2 || !slices.ContainsFunc(c.Steps, func(s result.CapacityStep) bool { return s.Confirm })) {
		t.Errorf("capacity %g puts/s, confirm %gs: no confirm step held the answer: %+v", c.PutsPerS, c.ConfirmSeconds, c.Steps)
	}
	if len(c.Steps) > 1 && c.Steps[1].Offered != 1000 {
		t.Errorf("second step at %g puts/s, want 1,000", c.Steps[1].Offered)
	}
	if n := keysUnder(t, cli, "/etcdperf/"); n != 0 {
		t.Errorf("%d keys left in the member", n)
	}
	r = testutil.RunBinary(t, time.Minute, "check", "--endpoints", ep, "--duration", "1s", "-o", "json")
	if res := decodeResult(t, r.Stdout); res.Capacity != nil {
		t.Errorf("check without --capacity swept: %+v", res.Capacity)
	}
}
