package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// A member behind a small burst bucket (3,000 IOPS on credits for about
// two seconds of it, a baseline of 300): a sweep of 1s steps carries more
// than the baseline does, while a soak of 12s at 1,000 puts/s (on an etcd
// of its own, the bucket full again) names the drop, and a sustained
// figure near what the baseline carries, well under the rate held.
// Nothing is left behind.
func TestSoakBurstBucket(t *testing.T) {
	skipWithoutIOCap(t)
	// A disk of the test's own (a RAM disk where this machine can make
	// one): the device's writes are then the member's alone.
	dir := testutil.QuietDirOr(t, "1G")
	cwd := t.TempDir()
	text := filepath.Join(cwd, "out.txt")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Above the rest of the machine's work, as capacityRun's doctor: what
	// the sweep finds is then the bucket's, not the CPU other tests take.
	cmd := exec.CommandContext(ctx, "nice", "-n", "-10", testutil.Binary(t), "check", "--data-dir", dir, "--duration", "2s", "--capacity", "--capacity-step", "1s", "--capacity-confirm", "0",
		"--soak", "12s", "--soak-interval", "1s", "--soak-rate", "1000", "--fault", "1:burst-iops=3000,baseline-iops=300,credits=6000", "-o", "json", "-o", text)
	cmd.Dir = cwd
	r := testutil.Wait(t, cmd, ctx)
	if r.Code != 0 && r.Code != 1 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	res := decodeResult(t, r.Stdout)
	b, _ := os.ReadFile(text)
	t.Logf("%s", b)
	c, s := res.Capacity, res.Soak
	if c == nil || s == nil {
		t.Fatalf("capacity %v, soak %v: want both", c, s)
	}
	// The baseline's 300 writes/s carry about 150 puts/s (a WAL write
	// and a share of a backend commit each).
	const baselineCarries = 150
	if c.PutsPerS == 0 && (c.Cause == "cpu" || c.Cause == "client") {
		t.Skipf("skipped: this host's CPU stopped the sweep's first step: %s", c.Answer)
	}
	if c.PutsPerS <= 2*baselineCarries {
		t.Errorf("the sweep carried %g puts/s: want more than the baseline carries (~%d)", c.PutsPerS, baselineCarries)
	}
	if s.Rate != 1000 || s.RateFrom != "--soak-rate" || len(s.Series) < 10 {
		t.Errorf("soak at %g (%s), %d samples: want --soak-rate's 1,000 for 12 samples", s.Rate, s.RateFrom, len(s.Series))
	}
	if s.Drop == nil || s.Drop.After > 8 || !strings.Contains(s.Answer, "burst credits or a write cache ran out") {
		t.Fatalf("soak: %s; want the drop named within 8s", s.Answer)
	}
	if s.SustainedPutsPerS < baselineCarries/3 || s.SustainedPutsPerS > 3*baselineCarries || s.SustainedPutsPerS >= s.Rate/2 {
		t.Errorf("sustained %g puts/s (%s): want near what the baseline carries (~%d), under half the %g held", s.SustainedPutsPerS, s.SustainedFrom, baselineCarries, s.Rate)
	}
	// Each interval has its requests' p99, as a step of the sweep has;
	// an interval of 1s may hold none of the load's one-second samples,
	// and one may hold two.
	timed := 0
	for _, x := range s.Series {
		if x.RequestP99 > 0 {
			timed++
		}
	}
	if timed < len(s.Series)/2 || s.LastRequestP99 <= 0 {
		t.Errorf("soak: %d of %d intervals with a request p99, the last part's %g: want most, and the last part's judged", timed, len(s.Series), s.LastRequestP99)
	}
	if !strings.Contains(string(b), "Soak: ") || !strings.Contains(string(b), "=> "+s.Answer) {
		t.Errorf("the text view lacks the soak")
	}
	// It wrote as the sweep's steps do, and its broken last part at the
	// rate asked is a critical finding: the verdict fails, exit 1.
	if s.KeySpace <= 0 || s.CompactionSeconds != 1 {
		t.Errorf("soak: key space %d, compaction every %gs; want the sweep's", s.KeySpace, s.CompactionSeconds)
	}
	if len(s.Broke) > 0 {
		i := slices.IndexFunc(res.Findings, func(f result.Finding) bool { return f.ID == "soak_broke" })
		if i < 0 || res.Findings[i].Severity != result.Critical || res.Findings[i].Cause != result.CauseDiskOrIOPSCap || r.Code != 1 {
			t.Errorf("a soak that broke %v at --soak-rate: findings %+v, exit %d; want soak_broke, critical, naming the storage below the device or its cap, exit 1", s.Broke, res.Findings, r.Code)
		}
	}
	assertEmptyDir(t, dir)
}

// Bad soak flags are one line, exit 2, before anything runs.
func TestSoakUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--data-dir", dir, "--soak", "-5s"}, "cannot be negative"},
		{[]string{"check", "--data-dir", dir, "--soak", "10s"}, "give the rate to hold with --soak-rate"},
		{[]string{"check", "--data-dir", dir, "--soak-rate", "100"}, "give --soak DURATION"},
		{[]string{"check", "--data-dir", dir, "--soak", "10s", "--soak-rate", "0"}, "positive rate"},
		{[]string{"doctor", "--data-dir", dir, "--no-report", "--soak", "4s"}, "shorter than three --soak-interval"},
		{[]string{"doctor", "--data-dir", dir, "--no-report", "--capacity=false", "--soak", "1m"}, "--soak-rate"},
		{[]string{"doctor", "--data-dir", dir, "--no-report", "--soak", "1m", "--soak-interval", "0s"}, "must be positive"},
	} {
		r := testutil.RunBinary(t, 30*time.Second, c.args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", c.args, r.Code, r.Stderr, c.want)
		}
		assertEmptyDir(t, dir)
	}
}
