package capacity

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/loadrun"
	"github.com/etcdperf/etcdperf/internal/result"
)

// DefaultStep is how long each step of doctor's capacity sweep loads
// etcd: at 1,000 puts/s its p99s rest on ~2,000 requests and as many WAL
// fsyncs (fewer when etcd batches them), and the whole sweep stays under
// ~20s.
const DefaultStep = 2 * time.Second

// DefaultConfirm is how long doctor's sweep holds its answer: four default
// steps, which doctor's minute on one location has room for twice. A
// queue that a 2s step ends before shows in it: 8s at 4,000 puts/s rests
// its p99s on 32,000 requests; and it holds two of the sweep's compactions
// (compactEvery), as every 8s of a longer step does.
const DefaultConfirm = 8 * time.Second

// maxConfirms bounds the confirm steps: the answer, then at most one step
// down (a factor of √2) when it breaks.
const maxConfirms = 2

// rates are the offered rates of a sweep after the verdict's own load
// (check perf's s, 150 puts/s): check perf's m, l and xl, with finer steps
// (2x and 4x m) between m and l where most disks' knees lie.
var rates = func() []float64 {
	m, l, xl := profileRate("m"), profileRate("l"), profileRate("xl")
	return []float64{m, 2 * m, 4 * m, l, xl}
}()

// profileRate is the rate of check perf's profile name.
func profileRate(name string) float64 {
	p, err := check.LookupProfile(name)
	if err != nil {
		panic(err) // check.Profiles is the program's own table
	}
	return p.Rate
}

// Load is one load the sweep or the soak asks of its Run function: check
// perf's puts (Profile's rate, clients, key and value sizes) on Target
// for Duration.
type Load struct {
	Target   cluster.TargetOptions
	Profile  check.Profile
	Duration time.Duration
	// Device is the block device under the data (for /proc/diskstats).
	Device string
	// KeySpace bounds the keys the puts write (0: a new key each); with
	// Overwrite, Prefix holds them, written before, and they stay.
	KeySpace  int
	Prefix    string
	Overwrite bool
	// Compact compacts etcd's history after the load; CompactEvery, when
	// positive, during it too.
	Compact      bool
	CompactEvery time.Duration
	// Interval and Tick, when set, mark the load every interval (the
	// soak's samples).
	Interval time.Duration
	Tick     func(loadrun.Tick)
}

// StepFunc runs a step's load and returns the step judged as a check is:
// its figures, the capacity criteria it broke or came near, and what
// limited it (judge.CapacityStep); nil when nothing ran.
type StepFunc func(ctx context.Context, l Load) (*result.CapacityStep, error)

// Options configure a capacity sweep.
type Options struct {
	// Target is where the sweep runs: an embedded etcd (DataDir, Members,
	// Faults) started once for all steps, or a cluster's endpoints.
	Target cluster.TargetOptions
	// Base is check perf's profile whose key and value sizes the steps
	// use; First, when set, is the verdict's own load at Base's rate
	// judged as a step, the sweep's first step.
	Base  check.Profile
	First *result.CapacityStep
	Step  time.Duration
	// Device is the block device under the data (for /proc/diskstats).
	Device   string
	Criteria []check.Criterion
	// Demand, when positive, is the cluster's peak write demand (puts/s)
	// to judge the capacity against, DemandFrom where it came from.
	Demand     float64
	DemandFrom string
	// Confirm, when positive, holds the answer that long after the knee
	// (a confirm step), and a lower rate while it breaks (at most
	// maxConfirms), so that the figure is one that held, not one that a
	// short step's queue had no time to show breaking.
	Confirm time.Duration
	// DBSize, when positive, fills the sweep's own etcd with that many
	// bytes of values before its first step (a database of the size the
	// cluster has: backend commits slow as it grows); the verdict's load,
	// which ran on an empty one, is then not the sweep's first step.
	// Filling, when set, is told before the fill starts.
	DBSize  int64
	Filling func(bytes int64)
	// SizesFrom says where the database's and the values' sizes came from
	// when they are the cluster's (result.Capacity.DBSizeFrom).
	SizesFrom SizesFrom
	// Stepping, when set, is told each step before it starts (confirm is
	// true for a confirm step).
	Stepping func(rate float64, clients int, confirm bool)
	// Run runs each step (and the second of load after a fill).
	Run StepFunc
}

// SizesFrom says where a sweep's database size and value size came from
// when they are the cluster's, read from its metrics, and what each
// assumes; empty: given or by default.
type SizesFrom struct{ DB, Value string }

// Sweep sweeps the offered put rate step by step (open loop, check perf's
// key and value sizes, clients growing with the rate as check perf's
// profiles do) until a step breaks one of etcd's limits, then one step
// between the highest rate that held and the one that broke, then holds
// the answer (Confirm). The steps share one etcd. It returns the steps and
// the settings they ran by, not judged (judge.Capacity concludes them),
// with what it measured when ctx ends or a step fails; nil when the etcd
// could not be started or reached.
func Sweep(ctx context.Context, o Options) (*result.Capacity, error) {
	s := &sweep{o: o, c: &result.Capacity{ValueSize: o.Base.ValSize, KeySize: o.Base.KeySize, StepSeconds: o.Step.Seconds(), Demand: o.Demand, DemandFrom: o.DemandFrom,
		DBSizeFrom: o.SizesFrom.DB, ValueSizeFrom: o.SizesFrom.Value}}
	if o.First != nil && o.DBSize <= 0 {
		// The verdict's load is the first step when no --db-size fill
		// changes the database under the steps (it ran on an empty one,
		// the steps on the sweep's 10 MiB key space, a small difference
		// at its 150 puts/s): when it broke a limit, there is nothing to
		// sweep.
		s.c.Steps = append(s.c.Steps, *o.First)
		if len(o.First.Broke) > 0 {
			return s.c, nil
		}
	}
	t, err := s.open(ctx)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	if s.own {
		if err := s.writeKeys(ctx); err != nil {
			return nil, err
		}
	}
	if o.DBSize > 0 {
		if err := s.fill(ctx); err != nil {
			return nil, err
		}
		// The verdict's load on the filled database: the first step.
		if ok, err := s.step(ctx, o.Base.Rate, o.Step, false); err != nil || !ok {
			return s.c, err
		}
	}
	held, bad, err := s.climb(ctx)
	if err == nil {
		err = s.knee(ctx, held, bad)
	}
	if err == nil {
		err = s.confirm(ctx)
	}
	return s.c, err
}

// sweep is a capacity sweep under way: its options, its steps so far, and
// the etcd its steps reach (conn, under runID).
type sweep struct {
	o     Options
	c     *result.Capacity
	conn  cluster.ConnOptions
	runID string
	// own: the etcd is the sweep's own, which it compacts; its steps
	// overwrite the keys under prefix.
	own    bool
	prefix string
	// loads counts the loads run, for their run IDs.
	loads int
}

// step runs one step at rate r for d, and says whether it held every
// limit.
func (s *sweep) step(ctx context.Context, r float64, d time.Duration, confirm bool) (bool, error) {
	o := s.o
	clients := check.ClientsFor(r)
	if o.Stepping != nil {
		o.Stepping(r, clients, confirm)
	}
	prof := o.Base
	prof.Name, prof.Rate, prof.Clients = fmt.Sprintf("%.0f/s", r), r, clients
	st, err := o.Run(ctx, s.load(fmt.Sprintf("-cap%d", s.loads), prof, d))
	s.loads++
	if st == nil {
		return false, err
	}
	st.Confirm = confirm
	s.c.Steps = append(s.c.Steps, *st)
	return !st.Failed(), err
}

// load is a load of prof for d on the sweep's etcd, under its run ID with
// suffix: on its own etcd, over the key space with compactions.
func (s *sweep) load(suffix string, prof check.Profile, d time.Duration) Load {
	return Load{Target: cluster.TargetOptions{Conn: s.conn, RunID: s.runID + suffix}, Profile: prof, Duration: d, Device: s.o.Device,
		Compact: s.own, KeySpace: s.keySpace(), CompactEvery: s.compactEvery(d), Prefix: s.prefix, Overwrite: s.own}
}

// climb steps through rates above the first step's until one breaks: the
// highest rate that held and the one that broke (0: none).
func (s *sweep) climb(ctx context.Context) (held, bad float64, err error) {
	if len(s.c.Steps) > 0 {
		held = s.c.Steps[0].Offered
	}
	for _, r := range rates {
		if r <= held {
			continue // the first step's load was at least this
		}
		ok, err := s.step(ctx, r, s.o.Step, false)
		if err != nil {
			return held, bad, err
		}
		if !ok {
			return held, r, nil
		}
		held = r
	}
	return held, 0, nil
}

// knee runs one step at the geometric middle of the knee between held and
// bad, on two significant digits, and one √2 past bad when the step that
// broke is alone past the knee with its fsyncs behind the offered rate
// (CapacityStep.FsyncsBehind: a ceiling its steps past the knee would
// show).
func (s *sweep) knee(ctx context.Context, held, bad float64) error {
	if bad <= 0 || held <= 0 {
		return nil
	}
	mid := twoDigits(math.Sqrt(held * bad))
	midHeld := false
	if mid > held && mid < bad {
		ok, err := s.step(ctx, mid, s.o.Step, false)
		if err != nil {
			return err
		}
		midHeld = ok
	}
	// The steps past the knee show a ceiling of etcd's writes (a cap) only
	// when two of them reach it.
	if !midHeld && mid > held && mid < bad {
		return nil
	}
	brokeAt := stepAt(s.c.Steps, bad)
	if over := twoDigits(bad * math.Sqrt2); brokeAt != nil && over <= rates[len(rates)-1] &&
		brokeAt.FsyncsBehind(check.LimitOf(s.o.Criteria, check.FsyncsFlatGrowth)) {
		if _, err := s.step(ctx, over, s.o.Step, false); err != nil {
			return err
		}
	}
	return nil
}

// confirm holds the answer for o.Confirm, and steps down by √2 while it
// breaks (at most maxConfirms steps), never to a rate a step (the
// verdict's own load, or a sweep's of --capacity-step at least as long)
// already held at least as long.
func (s *sweep) confirm(ctx context.Context) error {
	o, c := s.o, s.c
	if o.Confirm <= 0 {
		return nil
	}
	floor, r := 0.0, 0.0
	for _, st := range c.Steps {
		if len(st.Broke) > 0 {
			continue
		}
		r = max(r, st.Offered)
		if st.Seconds >= o.Confirm.Seconds() {
			floor = max(floor, st.Offered)
		}
	}
	for n := 0; n < maxConfirms && r > floor; n++ {
		ok, err := s.step(ctx, r, o.Confirm, true)
		if err != nil {
			return err
		}
		if ok {
			break
		}
		r = twoDigits(r / math.Sqrt2)
	}
	c.ConfirmSeconds = o.Confirm.Seconds()
	return nil
}

// stepAt is the sweep's step at offered rate r, if one ran.
func stepAt(steps []result.CapacityStep, r float64) *result.CapacityStep {
	for i := range steps {
		if steps[i].Offered == r {
			return &steps[i]
		}
	}
	return nil
}

// twoDigits rounds a rate to two significant digits: 1414 is 1,400.
func twoDigits(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v))-1)
	return math.Round(v/p) * p
}
