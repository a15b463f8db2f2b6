package capacity

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/profile"
	"github.com/etcdperf/etcdperf/internal/result"
)

// storage is a storage that carries up to limit puts/s in a step, and
// hold of them for a confirm step's time; its WAL fsyncs follow the rate
// up to fsyncs/s, and it serves at most serves puts/s (0: every put). Its
// first cold loads carry coldLimit puts/s (a fresh volume's first writes).
type storage struct {
	limit, hold, fsyncs, serves float64
	cold                        int
	coldLimit                   float64
	ran                         []Load
}

func (s *storage) run(_ context.Context, l Load) (*result.CapacityStep, error) {
	s.ran = append(s.ran, l)
	r := l.Profile.Rate
	st := &result.CapacityStep{Offered: r, Clients: l.Profile.Clients, Seconds: l.Duration.Seconds(), Achieved: r, WALFsyncs: min(r, s.fsyncs)}
	if s.serves > 0 {
		st.Achieved = min(r, s.serves)
	}
	limit := s.limit
	if l.Duration >= DefaultConfirm {
		limit = s.hold
	}
	if len(s.ran) <= s.cold {
		limit = s.coldLimit
	}
	if r > limit {
		st.Broke = []string{limits.WALFsyncP99}
	}
	return st, nil
}

// The steps the sweep takes on storages with their knees in different
// places: up the ladder to the first that breaks, steps in the knee until
// the rate that broke is within Resolution of the one that held (placed
// by what a broken step served), one past a lone broken step whose fsyncs
// fell behind, then holds from HoldResolution above the highest rate a
// short step held, climbing while they hold and placed under the lowest
// that broke once one does, until the answer (the highest hold that held)
// is within HoldResolution of the lowest hold that broke above it, within
// maxConfirms (fallConfirms more when none held within Resolution under
// one that broke); and once, when a hold held where a short step broke and none
// ran above it, short steps up the ladder again from the hold.
func TestSweepSteps(t *testing.T) {
	first := &result.CapacityStep{Offered: 150, Achieved: 150, Seconds: 60, WALFsyncs: 150}
	for _, tc := range []struct {
		name string
		st   storage
		want []float64 // the offered rates, in order; a confirm step last
	}{
		{"the knee between 2,000 and 4,000", storage{limit: 3000, hold: 3000, fsyncs: 1e9}, []float64{150, 1000, 4000, 2000, 2800, 3300, 3200, 2800}},
		{"a knee near the rung below", storage{limit: 2200, hold: 2200, fsyncs: 1e9}, []float64{150, 1000, 4000, 2000, 2800, 2400, 2300, 2000}},
		{"the hold breaks: the next placed under it", storage{limit: 3000, hold: 2000, fsyncs: 1e9}, []float64{150, 1000, 4000, 2000, 2800, 3300, 3200, 2800, 2200, 1700, 1900}},
		{"the hold breaks far under the short steps: holds past maxConfirms until one holds", storage{limit: 3000, hold: 700, fsyncs: 1e9}, []float64{150, 1000, 4000, 2000, 2800, 3300, 3200, 2800, 2200, 1700, 1300, 1000, 770, 590}},
		{"a step that served less places the next", storage{limit: 2700, hold: 2700, fsyncs: 1e9, serves: 2700}, []float64{150, 1000, 4000, 2000, 2700, 3300, 3100, 2700}},
		{"writes at a ceiling: 4,000 and the knee's 2,000 broke past it, no step past them", storage{limit: 1900, hold: 1900, fsyncs: 1200}, []float64{150, 1000, 4000, 2000, 1400, 1700, 2000, 1700}},
		{"writes at a ceiling over a rung: one step past it", storage{limit: 7000, hold: 7000, fsyncs: 4500}, []float64{150, 1000, 4000, 8000, 5700, 6800, 11000, 7800, 6800}},
		{"writes at a ceiling, two steps past the knee", storage{limit: 1500, hold: 1500, fsyncs: 1200}, []float64{150, 1000, 4000, 2000, 1400, 1700, 1600, 1400}},
		{"holds hold above the short steps: they climb", storage{limit: 2200, hold: 3000, fsyncs: 1e9}, []float64{150, 1000, 4000, 2000, 2800, 2400, 2300, 2600, 3000, 3500}},
		{"only the verdict's load held: holds from its rate, then half", storage{limit: 100, hold: 80, fsyncs: 1e9}, []float64{150, 1000, 390, 240, 190, 150, 75, 120, 95, 84}},
		{"only the verdict's load held, far under its rate", storage{limit: 100, hold: 40, fsyncs: 1e9}, []float64{150, 1000, 390, 240, 190, 150, 75, 38, 58, 47}},
		{"a hold held where a short step broke, none above: the short steps climb again, then the holds", storage{limit: 900, hold: 1200, fsyncs: 1e9}, []float64{150, 1000, 390, 620, 790, 910, 1000, 4000, 2000, 1400, 1200, 1200, 1400}},
		{"a fresh volume: its first step broke, the holds above it held", storage{limit: 5000, hold: 4500, fsyncs: 1e9, cold: 1, coldLimit: 900}, []float64{150, 1000, 390, 620, 790, 910, 1000, 4000, 8000, 5700, 4800, 5500, 4200, 4800}},
		{"the short steps broke under what the holds held, the fourth hold above them all: two holds after the second climb", storage{limit: 8500, hold: 7500, fsyncs: 3000, cold: 6, coldLimit: 3500},
			[]float64{150, 1000, 4000, 2000, 2800, 3300, 5700, 3800, 4400, 5100, 5900, 8000, 15000, 11000, 9400, 9200, 7400}},
		{"nothing breaks", storage{limit: 1e9, hold: 1e9, fsyncs: 1e9}, []float64{150, 1000, 4000, 8000, 15000, 15000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.st
			s := &sweep{o: Options{Step: DefaultStep, Confirm: DefaultConfirm, Criteria: limits.Table, Run: st.run}, c: &result.Capacity{Steps: []result.CapacityStep{*first}}, sp: &space{}, first: true}
			held, bad, err := s.climb(context.Background())
			if err == nil {
				err = s.knee(context.Background(), held, bad)
			}
			if err == nil {
				err = s.confirm(context.Background())
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []float64
			for _, x := range s.c.Steps {
				got = append(got, x.Offered)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("steps %v, want %v", got, tc.want)
			}
			held, bad, holds := 0.0, 0.0, 0
			for _, x := range s.c.Steps {
				if x.Confirm {
					holds++
					if !x.Failed() {
						held = max(held, x.Offered)
					}
				}
			}
			for _, x := range s.c.Steps {
				if x.Confirm && x.Failed() && x.Offered > held && (bad == 0 || x.Offered < bad) {
					bad = x.Offered
				}
			}
			if held == 0 || held > st.hold {
				t.Errorf("the holds' answer %.0f; the storage holds %.0f: want a hold that held, at most that", held, st.hold)
			}
			if holds < maxConfirms && held > 0 && bad > holdAbove(held) {
				t.Errorf("the answer %.0f, a hold held it, is bracketed by %.0f, which broke: %.2fx, more than %.2fx", held, bad, bad/held, HoldResolution)
			}
			last := s.c.Steps[len(s.c.Steps)-1]
			if !last.Confirm || last.Seconds != DefaultConfirm.Seconds() {
				t.Errorf("the last step %+v is not a confirm step of %s", last, DefaultConfirm)
			}
			for i, l := range st.ran {
				if l.Profile.Clients != profile.ClientsFor(l.Profile.Rate) {
					t.Errorf("step %d at %.0f puts/s ran %d clients, want check perf's %d", i, l.Profile.Rate, l.Profile.Clients, profile.ClientsFor(l.Profile.Rate))
				}
				if i > 0 && l.Target.RunID == st.ran[i-1].Target.RunID {
					t.Errorf("steps %d and %d share the run ID %s", i-1, i, l.Target.RunID)
				}
			}
		})
	}
}

// A load shorter than the compaction period does not compact, a 2s step
// does; on a live
// cluster no load compacts or overwrites, and each has a run ID of its
// own.
func TestSpaceLoads(t *testing.T) {
	own := &space{own: true, base: profile.Profile{ValSize: 1024}, prefix: "/etcdperf/x-keys/"}
	short, long := own.load(profile.Profile{Rate: 1000}, compactEvery/2), own.load(profile.Profile{Rate: 1000}, 2*time.Second)
	if short.CompactEvery != 0 || long.CompactEvery != compactEvery || !long.Overwrite || long.KeySpace != keySpace || long.Prefix != own.prefix {
		t.Errorf("own etcd, 1 KiB values: a ½s load %+v, a 2s load %+v", short, long)
	}
	if short.Target.RunID == long.Target.RunID {
		t.Errorf("two loads share the run ID %s", long.Target.RunID)
	}
	if n := (&space{own: true, base: profile.Profile{ValSize: 4 << 20}}).keySpace(); n != 10 {
		t.Errorf("own etcd, 4 MiB values: %d keys, want at least 10", n)
	}
	live := &space{base: profile.Profile{ValSize: 1024}}
	if l := live.load(profile.Profile{Rate: 1000}, 8*time.Second); l.CompactEvery != 0 || l.Overwrite || l.KeySpace != 0 || l.Compact || live.compactionSeconds() != 0 {
		t.Errorf("a live cluster's load: %+v", l)
	}
}

// A hold is sampled on intervals as long as a soak's, as many as fit, and
// the sweep's holds carry them; short steps are not sampled.
func TestHoldInterval(t *testing.T) {
	for _, c := range []struct{ hold, want time.Duration }{
		{DefaultConfirm, DefaultSoakInterval},
		{8 * time.Second, 4 * time.Second},
		{15 * time.Second, 5 * time.Second},
		{2 * time.Second, 2 * time.Second},
		{time.Minute, 5 * time.Second},
	} {
		if got := holdInterval(c.hold); got != c.want {
			t.Errorf("a hold of %s: intervals of %s, want %s", c.hold, got, c.want)
		}
	}
	st := storage{limit: 3000, hold: 3000, fsyncs: 1e9}
	s := &sweep{o: Options{Step: DefaultStep, Confirm: DefaultConfirm, Criteria: limits.Table, Run: st.run}, c: &result.Capacity{}, sp: &space{}}
	held, bad, err := s.climb(context.Background())
	if err != nil || held != 1000 || bad != 4000 {
		t.Fatalf("climb: held %.0f, broke %.0f, %v", held, bad, err)
	}
	if err := s.confirm(context.Background()); err != nil {
		t.Fatal(err)
	}
	holds := 0
	for _, l := range st.ran {
		if l.Duration == DefaultConfirm {
			holds++
			if l.Interval != DefaultSoakInterval {
				t.Errorf("a hold at %.0f puts/s sampled every %s, want %s", l.Profile.Rate, l.Interval, DefaultSoakInterval)
			}
		} else if l.Interval != 0 {
			t.Errorf("a short step at %.0f puts/s sampled every %s", l.Profile.Rate, l.Interval)
		}
	}
	if holds == 0 {
		t.Error("no hold ran")
	}
}
