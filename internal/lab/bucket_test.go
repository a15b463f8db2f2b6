package lab

import (
	"os"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/cgroup"
)

// A burst bucket caps at its burst while credits last, falls to its
// baseline once they are spent, stays there under writes at the baseline,
// and bursts again once it has earned a tenth of a second's burst back.
func TestBucket(t *testing.T) {
	b := newBucket(Fault{BurstIOPS: 3000, BaselineIOPS: 300, BurstCredits: 540})
	// 3,000 writes/s spend 2,700 credits a second net: 540 last 0.2s.
	if got := b.spend(300, 0.1); got != 3000 {
		t.Fatalf("after 0.1s at the burst: cap %d, want 3000 (credits %g)", got, b.credits)
	}
	if got := b.spend(300, 0.1); got != 300 {
		t.Fatalf("after 0.2s at the burst: cap %d, want the baseline 300 (credits %g)", got, b.credits)
	}
	for range 50 {
		if got := b.spend(30, 0.1); got != 300 {
			t.Fatalf("writing at the baseline: cap %d, want 300 (credits %g)", got, b.credits)
		}
	}
	// Idle: 300 credits a second come back; 270 (0.1s of 2,700 above
	// the baseline) are earned within a second.
	b.spend(0, 0.5)
	if got := b.spend(0, 0.5); got != 3000 || b.credits != 300 {
		t.Errorf("after 1s idle: cap %d, credits %g; want 3000 and 300", got, b.credits)
	}
	for range 100 {
		b.spend(0, 1)
	}
	if b.credits != 540 {
		t.Errorf("credits %g after a long idle, want the maximum 540", b.credits)
	}
}

func TestParseBurstFaults(t *testing.T) {
	for spec, want := range map[string]string{
		"1:burst-iops=3000,baseline-iops=300,credits=60000":             "",
		"1:burst-iops=3000,baseline-iops=300,credits=60000,volume=true": "",
		"1:volume-burst-iops=3000,baseline-iops=300,credits=60000":      "",
		"1:burst-iops=3000":                                           "baseline",
		"1:burst-iops=300,baseline-iops=300,credits=10":               "above the baseline",
		"1:burst-iops=3000,baseline-iops=300":                         "credits",
		"1:burst-iops=3000,baseline-iops=0,credits=10":                "at least 1",
		"1:burst-iops=fast,baseline-iops=300,credits=10":              "whole number",
		"1:burst-iops=3000,baseline=300,credits=10":                   "unknown setting",
		"1:burst-iops=3000,baseline-iops=300,credits=10,volume=maybe": "true or false",
	} {
		fs, err := ParseFaults([]string{spec}, 1)
		if want == "" {
			if err != nil && os.Geteuid() == 0 && cgroup.Host.CanLimitIO() == nil && (!strings.Contains(spec, "volume") || VolumeSupported() == nil) {
				t.Errorf("%q: %v", spec, err)
			}
			if err == nil {
				f := fs[0]
				if f.BurstIOPS != 3000 || f.BaselineIOPS != 300 || f.BurstCredits != 60000 || f.BurstVolume != strings.Contains(spec, "volume") {
					t.Errorf("%q: %+v", spec, f)
				}
				if args := strings.Join(MemberConfig{Fault: f}.Args(), " "); !strings.Contains(args, "--burst-iops 3000 --baseline-iops 300 --burst-credits 60000") {
					t.Errorf("%q: args %q", spec, args)
				}
				if got, _ := ParseFaults([]string{"1:" + f.String()}, 1); len(got) != 1 || got[0] != f {
					t.Errorf("%q: String %q does not read back", spec, f.String())
				}
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", spec, err, want)
		}
	}
	if _, err := ParseFaults([]string{"1:burst-iops=3000,baseline-iops=300,credits=10", "1:iops-limit=100"}, 1); err == nil || !strings.Contains(err.Error(), "cannot go on the same member") {
		t.Errorf("a bucket and a fixed cap on one member: %v", err)
	}
}
