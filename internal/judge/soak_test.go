package judge

import (
	"slices"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
)

// soakSeries is n 1s intervals at rate achieved, fsync p99 and device IOPS
// from each function of the interval's index.
func soakSeries(n int, f func(i int) (achieved, p99, iops float64)) []result.SoakSample {
	var ss []result.SoakSample
	for i := range n {
		a, p, d := f(i)
		ss = append(ss, result.SoakSample{T: float64(i + 1), Seconds: 1, Achieved: a, WALFsyncP99: p, BackendCommitP99: p, DeviceIOPS: d, DeviceUtil: 0.5})
	}
	return ss
}

func TestSoak(t *testing.T) {
	cases := []struct {
		name      string
		series    []result.SoakSample
		sustained float64
		from      string
		dropAfter float64
		answer    []string
	}{
		{"steady", soakSeries(12, func(int) (float64, float64, float64) { return 2000, 0.002, 1500 }),
			2000, "achieved", 0, []string{"2,000 puts/s offered for 12s, steady", "held every limit", "~2,000 puts/s"}},
		{"burst ran out", soakSeries(15, func(i int) (float64, float64, float64) {
			if i < 6 {
				return 2000, 0.002, 3000
			}
			return 2000, 0.041, 300
		}), 200, "device_iops", 6, []string{"after 6s the device's writes fell from 3,000 to 300 IOPS and the WAL fsync p99 rose from 2ms to 41ms: burst credits or a write cache ran out",
			"broke the WAL fsync p99 (41ms)", "~200 puts/s"}},
		{"rate fell, limits held", soakSeries(12, func(i int) (float64, float64, float64) {
			if i < 5 {
				return 2000, 0.002, 0
			}
			return 1000, 0.004, 0
		}), 1000, "achieved", 5, []string{"the puts etcd served fell from 2,000/s to 1,000/s", "broke the throughput (1,000 of 2,000 puts/s)", "under 2,000 puts/s"}},
		// etcd's CPUs saturated: its disk's p99s well within their
		// limits, each put waiting for it 150ms at p99 (a sweep's step
		// breaks there, and so does a soak).
		{"requests slow, disk fast", func() []result.SoakSample {
			ss := soakSeries(9, func(int) (float64, float64, float64) { return 2000, 0.004, 1500 })
			for i := range ss {
				ss[i].RequestP99 = 0.15
			}
			return ss
		}(), 2000, "achieved", 0, []string{"broke the request p99 (150ms)", "under 2,000"}},
		{"too high throughout", soakSeries(9, func(int) (float64, float64, float64) { return 2000, 0.03, 800 }),
			2000, "achieved", 0, []string{"broke the WAL fsync p99 (30ms) and the backend commit p99 (30ms)", "under 2,000"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &result.Soak{Rate: 2000, Seconds: float64(len(c.series)), IntervalSeconds: 1, Series: c.series}
			Soak(s, limits.Table)
			if s.SustainedPutsPerS != c.sustained || s.SustainedFrom != c.from {
				t.Errorf("sustained %g from %s, want %g from %s: %s", s.SustainedPutsPerS, s.SustainedFrom, c.sustained, c.from, s.Answer)
			}
			if got := 0.0; s.Drop != nil {
				got = s.Drop.After
				if got != c.dropAfter {
					t.Errorf("drop after %gs, want %gs", got, c.dropAfter)
				}
			} else if c.dropAfter > 0 {
				t.Errorf("no drop named, want one after %gs: %s", c.dropAfter, s.Answer)
			}
			for _, w := range c.answer {
				if !strings.Contains(s.Answer, w) {
					t.Errorf("answer %q lacks %q", s.Answer, w)
				}
			}
		})
	}
}

// When the device's writes fell, the sustained figure is scaled by them,
// not by etcd's fsyncs, which fall further as etcd packs more puts into
// each (a soak at 1,000 puts/s whose device fell from 2,255 to 303 IOPS
// served 537 puts/s on 13 fsyncs/s).
func TestSoakSustainedByTheDevice(t *testing.T) {
	ss := soakSeries(15, func(i int) (float64, float64, float64) {
		if i < 6 {
			return 2000, 0.002, 3000
		}
		return 1100, 0.25, 300
	})
	for i := range ss {
		ss[i].WALFsyncs = 1900
		if i >= 6 {
			ss[i].WALFsyncs = 20
		}
	}
	s := &result.Soak{Rate: 2000, Seconds: 15, IntervalSeconds: 1, Series: ss}
	Soak(s, limits.Table)
	if s.SustainedFrom != "device_iops" || s.SustainedPutsPerS != 200 || !slices.Contains(s.Drop.Fell, "wal_fsyncs") {
		t.Errorf("sustained %g from %s (fell %v), want 200 from device_iops: %s", s.SustainedPutsPerS, s.SustainedFrom, s.Drop.Fell, s.Answer)
	}
}

// The device writing less while etcd serves the same rate as fast is no
// drop: etcd asked less of it (a database that stopped growing).
func TestSoakLessAskedIsNoDrop(t *testing.T) {
	ss := soakSeries(9, func(int) (float64, float64, float64) { return 500, 0.001, 1400 })
	for i := range ss {
		ss[i].DeviceWriteBytes = 5.5e6
		if i < 3 {
			ss[i].DeviceWriteBytes = 8.3e6
		}
	}
	s := &result.Soak{Rate: 500, Seconds: 9, IntervalSeconds: 1, Series: ss}
	Soak(s, limits.Table)
	if s.Drop != nil || s.SustainedPutsPerS != 500 {
		t.Errorf("drop %+v, sustained %g: want no drop, 500 puts/s: %s", s.Drop, s.SustainedPutsPerS, s.Answer)
	}
}

// Fewer WAL fsyncs for as many puts served is no drop of the storage:
// etcd put more puts in each fsync while the CPUs were busy. A 60s soak
// at 7,200 puts/s on a RAM disk, as recorded: it served 7,200 puts/s
// throughout while its fsyncs fell from ~2,800/s to ~1,100/s and its
// backend commit p99 broke; the WAL fsync p99 stayed near 2 ms. It broke,
// and sustains the rate it served, not the rate scaled by the fsyncs.
func TestSoakBatchingIsNoDrop(t *testing.T) {
	rec := [][5]float64{ // achieved, WAL fsyncs/s, WAL fsync p99 (ms), backend commit p99 (ms), device IOPS
		{7166, 2085, 1.56, 15.4, 10511}, {7192, 2728, 1.49, 15.9, 13028}, {7221, 2924, 1.00, 15.8, 13572},
		{7192, 3016, 1.07, 14.7, 13853}, {7198, 2597, 1.19, 14.9, 12977}, {7231, 2875, 1.08, 15.1, 13529},
		{7159, 2185, 1.63, 25.4, 11944}, {7182, 1831, 1.60, 23.0, 11009}, {7222, 934, 3.23, 27.6, 8221},
		{7210, 1229, 2.03, 29.6, 9084}, {7197, 1164, 2.26, 28.7, 8723}, {7199, 3319, 1.00, 13.4, 14693},
	}
	var ss []result.SoakSample
	for i, r := range rec {
		ss = append(ss, result.SoakSample{T: float64(5 * (i + 1)), Seconds: 5, Achieved: r[0], WALFsyncs: r[1], WALFsyncP99: r[2] / 1000,
			BackendCommitP99: r[3] / 1000, RequestP99: 0.05, DeviceIOPS: r[4], DeviceUtil: 0.07})
	}
	s := &result.Soak{Rate: 7200, Seconds: 60, IntervalSeconds: 5, Series: ss}
	Soak(s, limits.Table)
	if s.Drop != nil || !slices.Contains(s.Broke, limits.BackendCommitP99) || s.SustainedPutsPerS < 7000 {
		t.Errorf("drop %+v, broke %v, sustained %g: want no drop, the backend commit p99 broken, ~7,200 puts/s sustained: %s", s.Drop, s.Broke, s.SustainedPutsPerS, s.Answer)
	}
}

// A hold ends once the intervals it measured decide it whatever the rest
// measure: broken when the median of its intervals' p99s with the rest at
// 0 is past a limit, or its first interval is at twice one; held when the
// medians with the rest unbounded are within every limit (of three, two
// within them). Never with every interval in (the whole hold judges it
// then).
func TestHoldDecided(t *testing.T) {
	iv := func(wal, commit, request float64) result.SoakSample {
		return result.SoakSample{Seconds: 5, WALFsyncP99: wal, BackendCommitP99: commit, RequestP99: request}
	}
	quiet := iv(0.002, 0.010, 0.030)
	const open, held, broke = 0, 1, 2
	for _, c := range []struct {
		name      string
		intervals []result.SoakSample
		n         int
		want      int
	}{
		{"none measured", nil, 2, open},
		{"the first of two, its commit p99 at twice the limit", []result.SoakSample{iv(0.002, 0.050, 0.030)}, 2, broke},
		{"the first of two, its commit p99 just under twice the limit", []result.SoakSample{iv(0.002, 0.049, 0.030)}, 2, open},
		{"the first of two, its WAL fsync p99 at twice the limit", []result.SoakSample{iv(0.021, 0.010, 0.030)}, 2, broke},
		{"the first of two, its request p99 at twice the limit", []result.SoakSample{iv(0.002, 0.010, 0.200)}, 2, broke},
		{"the first of two, within every limit: the second could break it", []result.SoakSample{quiet}, 2, open},
		{"both of two, broken: the hold is over anyway", []result.SoakSample{iv(0.002, 0.060, 0.030), iv(0.002, 0.060, 0.030)}, 2, open},
		{"two of three past the limit", []result.SoakSample{iv(0.002, 0.030, 0.030), iv(0.002, 0.026, 0.030)}, 3, broke},
		{"two of three within every limit", []result.SoakSample{quiet, iv(0.002, 0.024, 0.030)}, 3, held},
		{"two of three, one past the commit limit, one within: the third decides", []result.SoakSample{iv(0.002, 0.030, 0.030), quiet}, 3, open},
		{"two of three, within the commit limit, one past the WAL fsync's", []result.SoakSample{quiet, iv(0.012, 0.010, 0.030)}, 3, open},
		{"the first of three, its commit p99 at twice the limit", []result.SoakSample{iv(0.002, 0.090, 0.030)}, 3, broke},
		{"the first of three, past the limit but not twice", []result.SoakSample{iv(0.002, 0.040, 0.030)}, 3, open},
		{"the first of three, within every limit", []result.SoakSample{quiet}, 3, open},
		{"three of four within every limit", []result.SoakSample{quiet, quiet, quiet}, 4, held},
		{"two of four within every limit", []result.SoakSample{quiet, quiet}, 4, open},
	} {
		decided, b := HoldDecided(c.intervals, c.n, limits.Table)
		got := open
		switch {
		case decided && b:
			got = broke
		case decided:
			got = held
		case b:
			t.Errorf("%s: broke but not decided", c.name)
		}
		if got != c.want {
			t.Errorf("%s: %d, want %d (0 open, 1 held, 2 broke)", c.name, got, c.want)
		}
	}
}
