package capacity

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/result"
)

// storage is a storage that carries up to limit puts/s in a step, and
// hold of them for a confirm step's time; its WAL fsyncs follow the rate
// up to fsyncs/s.
type storage struct {
	limit, hold, fsyncs float64
	ran                 []Load
}

func (s *storage) run(_ context.Context, l Load) (*result.CapacityStep, error) {
	s.ran = append(s.ran, l)
	r := l.Profile.Rate
	st := &result.CapacityStep{Offered: r, Clients: l.Profile.Clients, Seconds: l.Duration.Seconds(), Achieved: r, WALFsyncs: min(r, s.fsyncs)}
	limit := s.limit
	if l.Duration >= DefaultConfirm {
		limit = s.hold
	}
	if r > limit {
		st.Broke = []string{check.WALFsyncP99}
	}
	return st, nil
}

// The steps the sweep takes on storages with their knees in different
// places: up the ladder to the first that breaks, one step in the knee's
// geometric middle, one past a lone broken step whose fsyncs fell behind,
// then the answer held for the confirm's time and, when it breaks, √2
// lower.
func TestSweepSteps(t *testing.T) {
	first := &result.CapacityStep{Offered: 150, Achieved: 150, Seconds: 60, WALFsyncs: 150}
	for _, tc := range []struct {
		name string
		st   storage
		want []float64 // the offered rates, in order; a confirm step last
	}{
		{"the knee between 2,000 and 4,000", storage{limit: 3000, hold: 3000, fsyncs: 1e9}, []float64{150, 1000, 2000, 4000, 2800, 2800}},
		{"the middle breaks, the confirm holds", storage{limit: 2500, hold: 2500, fsyncs: 1e9}, []float64{150, 1000, 2000, 4000, 2800, 2000}},
		{"the confirm breaks, √2 lower holds", storage{limit: 3000, hold: 2000, fsyncs: 1e9}, []float64{150, 1000, 2000, 4000, 2800, 2800, 2000}},
		{"writes at a ceiling: one step past the knee", storage{limit: 1500, hold: 1500, fsyncs: 1200}, []float64{150, 1000, 2000, 1400, 2800, 1400}},
		{"nothing breaks", storage{limit: 1e9, hold: 1e9, fsyncs: 1e9}, []float64{150, 1000, 2000, 4000, 8000, 15000, 15000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.st
			s := &sweep{o: Options{Step: DefaultStep, Confirm: DefaultConfirm, Criteria: check.Table, Run: st.run}, c: &result.Capacity{Steps: []result.CapacityStep{*first}}}
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
			last := s.c.Steps[len(s.c.Steps)-1]
			if !last.Confirm || last.Seconds != DefaultConfirm.Seconds() {
				t.Errorf("the last step %+v is not a confirm step of %s", last, DefaultConfirm)
			}
			for i, l := range st.ran {
				if l.Profile.Clients != check.ClientsFor(l.Profile.Rate) {
					t.Errorf("step %d at %.0f puts/s ran %d clients, want check perf's %d", i, l.Profile.Rate, l.Profile.Clients, check.ClientsFor(l.Profile.Rate))
				}
				if i > 0 && l.Target.RunID == st.ran[i-1].Target.RunID {
					t.Errorf("steps %d and %d share the run ID %s", i-1, i, l.Target.RunID)
				}
			}
		})
	}
}

// A step shorter than the sweep's compaction period does not compact; on
// a live cluster no step compacts or overwrites.
func TestSweepCompactsItsOwnEtcd(t *testing.T) {
	own := &sweep{own: true, o: Options{Base: check.Profile{ValSize: 1024}}}
	if own.compactEvery(2*time.Second) != 0 || own.compactEvery(8*time.Second) != compactEvery {
		t.Errorf("own etcd: 2s step compacts every %s, 8s step every %s", own.compactEvery(2*time.Second), own.compactEvery(8*time.Second))
	}
	if n := own.keySpace(); n != keySpace {
		t.Errorf("own etcd, 1 KiB values: %d keys, want %d", n, keySpace)
	}
	live := &sweep{o: Options{Base: check.Profile{ValSize: 1024}}}
	if l := live.load("-cap0", check.Profile{Rate: 1000}, 8*time.Second); l.CompactEvery != 0 || l.Overwrite || l.KeySpace != 0 || l.Compact {
		t.Errorf("a live cluster's step: %+v", l)
	}
}
