package capacity

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/loadrun"
	"github.com/etcdperf/etcdperf/internal/profile"
	"github.com/etcdperf/etcdperf/internal/result"
)

// DefaultStep is how long each step of doctor's capacity sweep loads
// etcd: at 1,000 puts/s its p99s rest on ~2,000 requests and as many WAL
// fsyncs (fewer when etcd batches them), and the whole sweep stays under
// ~20s.
const DefaultStep = 2 * time.Second

// DefaultConfirm is how long doctor's sweep holds a rate (a hold) at
// most: three of a soak's intervals (DefaultSoakInterval). A queue that a
// 2s step ends before shows in it, and each interval's backend commit p99
// rests on as many commits (some fifty: etcd commits about ten times a
// second) as a soak's does. A hold is judged on the median of its
// intervals' p99s, as a soak is: of two, the median is their mean, which
// one interval past the limit decides (over a real disk one often is, at
// rates a minute of the same writes holds); of three, one cannot. A hold
// ends once its intervals decide it (the StepFunc's; judge.HoldDecided):
// after two when both held their limits or both broke one, after one
// when it broke a limit twice over.
const DefaultConfirm = 15 * time.Second

// maxConfirms bounds the confirm steps (holds): the first, then at most
// four placed above or under it (nextHold); after a second climb (stale),
// at least two more. When the first, at the
// verdict's rate, breaks on the sweep's writes, the next three run at half
// of it, a quarter and between (150, 75, 38 and 58 puts/s), and a fifth
// brings the rate that broke closer to the answer. Most sweeps take two:
// one HoldResolution above the highest rate a short step held, and one
// HoldResolution above or under it.
const maxConfirms = 5

// fallConfirms is how many holds a sweep runs past maxConfirms when the
// last left no hold that held within Resolution under the lowest that
// broke: most often every hold broke (a neighbour's load over the
// sweep's minute, a volume that slowed), and the answer would be a short
// step's, a rate no hold tried and that may not hold either, far under
// the holds that broke. Each is placed as before (nextHold: Resolution
// under the lowest that broke while none held), until one holds within
// Resolution of it.
const fallConfirms = 3

// holdInterval is the span of a hold of length d's intervals, on which it
// is judged as a soak's series is (judge.CapacityStep): as near a soak's
// as whole intervals allow, so that each interval's p99 rests on as many
// backend commits as a soak's (docs/doctor.md: a p99 over 2s is about
// its slowest commit).
func holdInterval(d time.Duration) time.Duration {
	n := max(1, int(math.Round(float64(d)/float64(DefaultSoakInterval))))
	return d / time.Duration(n)
}

// rates are the offered rates of a sweep after the verdict's own load
// (check perf's s, 150 puts/s): check perf's m, l and xl, with one step
// (4x m) between m and l. A knee between m and 4x m takes as many short
// steps as with a rung at 2x m (2x m itself is the knee's first), one
// more when it lies under 2x m; a knee above 4x m (a directory of a
// virtio disk, a RAM disk and an uncapped loop over that disk in
// docs/doctor.md's bench, every run), one fewer.
var rates = func() []float64 {
	m, l, xl := profileRate("m"), profileRate("l"), profileRate("xl")
	return []float64{m, 4 * m, l, xl}
}()

// profileRate is the rate of check perf's profile name.
func profileRate(name string) float64 {
	p, err := profile.Lookup(name)
	if err != nil {
		panic(err) // profile.Profiles is the program's own table
	}
	return p.Rate
}

// Load is one load the sweep or the soak asks of its Run function: check
// perf's puts (Profile's rate, clients, key and value sizes) on Target
// for Duration.
type Load struct {
	Target   lab.TargetOptions
	Profile  profile.Profile
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
	Target lab.TargetOptions
	// Base is check perf's profile whose key and value sizes the steps
	// use; First, when set, is the verdict's own load at Base's rate
	// judged as a step, the sweep's first step.
	Base  profile.Profile
	First *result.CapacityStep
	Step  time.Duration
	// Device is the block device under the data (for /proc/diskstats).
	Device   string
	Criteria []limits.Criterion
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
// profiles do) until a step breaks one of etcd's limits, then steps
// between the highest rate that held and the lowest that broke until they
// are within Resolution (knee), then holds rates for longer, from the
// answer up while they hold and down once one breaks (confirm). The steps
// share one etcd. It returns the steps and the settings they ran by, not
// judged (judge.Capacity concludes them),
// with what it measured when ctx ends or a step fails; nil when the etcd
// could not be started or reached.
func Sweep(ctx context.Context, o Options) (*result.Capacity, error) {
	s := &sweep{o: o, c: &result.Capacity{ValueSize: o.Base.ValSize, KeySize: o.Base.KeySize, StepSeconds: o.Step.Seconds(), Demand: o.Demand, DemandFrom: o.DemandFrom,
		DBSizeFrom: o.SizesFrom.DB, ValueSizeFrom: o.SizesFrom.Value}}
	if o.First != nil && o.DBSize <= 0 {
		s.first = true
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
	sp, t, err := openSpace(ctx, "capacity sweep", o.Target, o.Base, o.Device)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	s.sp = sp
	s.c.CompactionSeconds = sp.compactionSeconds()
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
// the etcd its steps share.
type sweep struct {
	o  Options
	c  *result.Capacity
	sp *space
	// first says that the first step is the verdict's own load, which
	// wrote new keys and compacted nothing, not the sweep's writes.
	first bool
}

// step runs one step at rate r for d, and says whether it held every
// limit.
func (s *sweep) step(ctx context.Context, r float64, d time.Duration, confirm bool) (bool, error) {
	o := s.o
	clients := profile.ClientsFor(r)
	if o.Stepping != nil {
		o.Stepping(r, clients, confirm)
	}
	prof := o.Base
	prof.Name, prof.Rate, prof.Clients = fmt.Sprintf("%.0f/s", r), r, clients
	l := s.sp.load(prof, d)
	if confirm {
		l.Interval = holdInterval(d)
	}
	st, err := o.Run(ctx, l)
	if st == nil {
		return false, err
	}
	st.Confirm = confirm
	s.c.Steps = append(s.c.Steps, *st)
	return !st.Failed(), err
}

// climb steps through rates above the first step's until one breaks: the
// highest rate that held and the one that broke (0: none).
func (s *sweep) climb(ctx context.Context) (held, bad float64, err error) {
	if len(s.c.Steps) > 0 {
		held = s.c.Steps[0].Offered
	}
	return s.climbFrom(ctx, held)
}

// climbFrom steps through the ladder's rates above held until one breaks:
// the highest rate that held (held when none did) and the one that broke
// (0: none).
func (s *sweep) climbFrom(ctx context.Context, held float64) (_, bad float64, err error) {
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

// Resolution is the most by which the rate that broke may exceed the
// answer: the sweep places steps between the highest rate that held and
// the lowest that broke until they are that close, or its steps run out.
const Resolution = 1.3

// maxKneeSteps bounds the short steps that narrow the knee: from a factor
// of 2 between two rungs of the ladder, two bring it within Resolution;
// from a factor of 4 (1,000 to 4,000) or the verdict's 150 puts/s to the
// first rung's 1,000, three.
const maxKneeSteps = 3

// knee narrows the knee between held and bad with short steps
// (between), then runs one √2 past bad when the step that broke there is
// alone past the knee with its fsyncs behind the offered rate
// (CapacityStep.FsyncsBehind: a ceiling its steps past the knee would
// show).
func (s *sweep) knee(ctx context.Context, held, bad float64) error {
	if bad <= 0 || held <= 0 {
		return nil
	}
	_, low, err := s.between(ctx, held, bad, maxKneeSteps)
	if err != nil {
		return err
	}
	// The steps past the knee show a ceiling of etcd's writes (a cap) only
	// when two of them reach it.
	if low != bad {
		return nil
	}
	brokeAt := stepAt(s.c.Steps, bad)
	if over := twoDigits(bad * math.Sqrt2); brokeAt != nil && over <= rates[len(rates)-1] &&
		brokeAt.FsyncsBehind(limits.LimitOf(s.o.Criteria, limits.FsyncsFlatGrowth)) {
		if _, err := s.step(ctx, over, s.o.Step, false); err != nil {
			return err
		}
	}
	return nil
}

// between places at most n short steps between held and bad until bad is
// within Resolution of held, each at the next rate (next); it returns the
// highest rate that held and the lowest that broke.
func (s *sweep) between(ctx context.Context, held, bad float64, n int) (float64, float64, error) {
	for ; n > 0 && bad > held*Resolution; n-- {
		r := s.next(held, bad, false)
		if r <= held || r >= bad {
			break
		}
		ok, err := s.step(ctx, r, s.o.Step, false)
		if err != nil {
			return held, bad, err
		}
		if ok {
			held = r
		} else {
			bad = r
		}
	}
	return held, bad, nil
}

// next is the rate to try between held and bad, on two significant
// digits: their geometric middle, or with top Resolution under bad when
// that is higher (a hold that broke under a rate the short steps held is
// most often just under it); or, when the step that broke at bad served
// fewer puts than that (etcd could not take more), what it served: a rate
// placed by what the step measured, not by a rate it could not reach.
func (s *sweep) next(held, bad float64, top bool) float64 {
	r := math.Sqrt(held * bad)
	if top {
		r = max(r, bad/Resolution)
	}
	r = twoDigits(r)
	if st := s.lowestBroken(bad); st != nil && st.Achieved > held*Resolution && twoDigits(st.Achieved) < r {
		r = twoDigits(st.Achieved)
	}
	return r
}

// lowestBroken is the latest step that broke at rate r.
func (s *sweep) lowestBroken(r float64) *result.CapacityStep {
	for i := len(s.c.Steps) - 1; i >= 0; i-- {
		if st := &s.c.Steps[i]; st.Offered == r && st.Failed() {
			return st
		}
	}
	return nil
}

// confirm holds rates for o.Confirm (confirm steps, at most maxConfirms,
// and fallConfirms more while no hold that held is within Resolution
// under the lowest that broke),
// each judged as a soak is, on the medians of its intervals' p99s: first
// HoldResolution above the highest rate a short step held on the sweep's
// own writes, but not past the lowest a short step broke above it (a
// short step's backend commit p99 rests on some twenty commits, and one
// slow commit breaks it: short steps break under what holds hold); with no
// short step held, the verdict's rate, whose load wrote new keys and
// compacted nothing. Then, while the holds hold, rates above them, and
// once one breaks, rates placed under it (nextHold), until the highest
// hold that held and the lowest that broke are within HoldResolution.
// Once per sweep, when a hold held where a short step broke and no short
// step ran above it (stale), short steps climb the ladder again from the
// hold and narrow the knee they find, and the holds go on from there
// (firstHold).
func (s *sweep) confirm(ctx context.Context) error {
	o, c := s.o, s.c
	if o.Confirm <= 0 {
		return nil
	}
	c.ConfirmSeconds = o.Confirm.Seconds()
	r := s.firstHold()
	held, bad, climbed, most, fell := 0.0, 0.0, false, maxConfirms, 0
	for n := 0; n < most && r > 0; n++ {
		ok, err := s.step(ctx, r, o.Confirm, true)
		if err != nil {
			return err
		}
		if ok {
			held = r
		} else {
			bad = r
		}
		if !climbed && bad == 0 && s.stale(held) {
			// Once per sweep: the short steps climb again from the
			// hold, then the holds go on from where they held.
			climbed = true
			h, b, err := s.climbFrom(ctx, held)
			if err == nil {
				err = s.knee(ctx, h, b)
			}
			if err != nil {
				return err
			}
			// At least two holds after it, one to hold above the
			// hold and one to break: a second climb with one hold left
			// answers a rate whose bracket the holds did not narrow.
			most = max(most, n+3)
			if r = s.firstHold(); r > held {
				continue
			}
		}
		r = s.nextHold(held, bad, s.shortHeld() > 0)
		if n == most-1 && r > 0 && fell < fallConfirms && (held == 0 || bad > held*Resolution) {
			// The holds the budget allows ran out with no answer a
			// hold placed within Resolution: one more (fallConfirms).
			fell++
			most++
		}
	}
	return nil
}

// firstHold is the rate of the first hold: HoldResolution above the
// highest rate a short step held on the sweep's own writes, but not past
// the lowest a short step broke above it; with no short step held, the
// verdict's rate.
func (s *sweep) firstHold() float64 {
	r := s.shortHeld()
	if r <= 0 {
		if len(s.c.Steps) > 0 {
			return s.c.Steps[0].Offered
		}
		return 0
	}
	if up := s.shortBrokeAbove(r); up > 0 {
		r = min(holdAbove(r), up)
	}
	return r
}

// stale says that a hold held at rate held where a short step broke and
// no short step ran above it: the storage carried for a hold's time what
// it did not for 2s earlier in the sweep (a new volume's first writes; a
// neighbour's burst that ended). The
// knee the short steps found is then not the storage's, and the holds
// would climb from it HoldResolution at a time.
func (s *sweep) stale(held float64) bool {
	return held > 0 && s.shortBrokeAbove(0) > 0 && s.shortBrokeAbove(held) == 0 && held < rates[len(rates)-1]
}

// HoldResolution is the most by which the lowest hold that broke may
// exceed the answer, a rate that held for the confirm's time: finer than
// the short steps' Resolution, so that the answer lies within 15 % under
// the rate where holds begin to break, and a soak of the same writes at
// 1.25x of it runs past that rate (docs/doctor.md).
const HoldResolution = 1.15

// holdAbove is the rate HoldResolution above r, on two significant
// digits: the next hold up from a rate that held, and the highest rate
// that may break for r to be the answer.
func holdAbove(r float64) float64 {
	// In hundredths, so that 3,000 is 3,450 and rounds up to 3,500 as the
	// product of 1.15 would not.
	return twoDigits(r * math.Round(HoldResolution*100) / 100)
}

// shortHeld is the highest rate a short step held on the sweep's own
// writes (not the verdict's load); 0 when none did.
func (s *sweep) shortHeld() float64 {
	r := 0.0
	for i, st := range s.c.Steps {
		if !st.Confirm && !st.Failed() && !(i == 0 && s.first) {
			r = max(r, st.Offered)
		}
	}
	return r
}

// shortBrokeAbove is the lowest rate above r that a short step broke; 0
// when none did.
func (s *sweep) shortBrokeAbove(r float64) float64 {
	up := 0.0
	for _, st := range s.c.Steps {
		if !st.Confirm && st.Failed() && st.Offered > r && (up == 0 || st.Offered < up) {
			up = st.Offered
		}
	}
	return up
}

// nextHold is the rate of the next hold after holds that held up to held
// and broke from bad (0 when none did), or 0 when no hold is left to run.
// With none broken: HoldResolution above held, or the middle of held and
// the lowest rate above it that a short step broke when that is higher;
// with no short step broken above held (one broke at held or under it),
// HoldResolution above held, so that an answer is bracketed by a rate
// that broke; 0 once held is the ladder's top. With none held: the
// highest rate a short step held when the hold that broke was above it;
// else Resolution under bad (a hold broke at a rate a short step held: the
// holds break well under the short steps), or half of it when no short
// step held on the sweep's own writes (short false: nothing places it).
// With both, their middle as the knee's (next), until bad is within
// HoldResolution of held.
func (s *sweep) nextHold(held, bad float64, short bool) float64 {
	switch {
	case bad == 0:
		if held >= rates[len(rates)-1] {
			return 0
		}
		up := s.shortBrokeAbove(held)
		if up == 0 {
			return min(holdAbove(held), rates[len(rates)-1])
		}
		return max(holdAbove(held), s.next(held, up, false))
	case held == 0 && !short:
		return twoDigits(bad / 2)
	case held == 0:
		if hs := s.shortHeld(); bad > hs {
			return hs
		}
		return twoDigits(bad / Resolution)
	case bad <= holdAbove(held):
		return 0
	}
	if r := s.next(held, bad, true); r > held && r < bad {
		return r
	}
	return 0
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
