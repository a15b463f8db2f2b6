package pipeline

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/load"
	"github.com/etcdperf/etcdperf/internal/loadrun"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// DefaultCapacityStep is how long each step of doctor's capacity sweep
// loads etcd: at 1,000 puts/s its p99s rest on ~2,000 requests and as many
// WAL fsyncs (fewer when etcd batches them), and the whole sweep stays
// under ~20s.
const DefaultCapacityStep = 2 * time.Second

// capacityRates are the offered rates of a sweep after the verdict's own
// load (check perf's s, 150 puts/s): check perf's m, l and xl, with finer
// steps (2x and 4x m) between m and l where most disks' knees lie.
var capacityRates = func() []float64 {
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

// CapacityOptions configure a capacity sweep.
type CapacityOptions struct {
	// Target is where the sweep runs: an embedded etcd (DataDir, Members,
	// Faults) started once for all steps, or a cluster's endpoints.
	Target cluster.TargetOptions
	// Base is check perf's profile whose key and value sizes the steps
	// use; First, when set, is the verdict's own load at Base's rate, the
	// sweep's first step.
	Base  check.Profile
	First *result.Result
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
	// Stepping, when set, is told each step before it starts (confirm
	// is true for a confirm step).
	Stepping func(rate float64, clients int, confirm bool)
}

// DefaultCapacityConfirm is how long doctor's sweep holds its answer: four
// default steps, which doctor's minute on one location has room for
// twice. A queue that a 2s step ends before shows in it: 8s at 4,000
// puts/s rests its p99s on 32,000 requests; and it holds two of the
// sweep's compactions (capacityCompaction), as every 8s of a longer step
// does.
const DefaultCapacityConfirm = 8 * time.Second

// maxConfirms bounds the confirm steps: the answer, then at most one
// step down (a factor of √2) when it breaks.
const maxConfirms = 2

// capacityCompaction is how often the sweep compacts its own etcd's
// history during a step at least that long, keeping none: at 2s into it,
// then every 4s (loadrun.Options.CompactEvery), so that a step of any
// length pays its share of compactions of its own history, an 8s confirm
// step two, as every 8s of a 60s step does. A 2s step pays none. (etcd's
// periodic compactor, which keeps a period of history, compacts nothing
// of a step's own before twice its period into it: a 10s confirm step
// then paid no compaction that a 60s step paid five times.)
const capacityCompaction = 4 * time.Second

// capacityKeySpace is the keys each step on the sweep's own etcd writes
// over and over, as a cluster updates its objects; capacityKeyBytes bounds
// their values (fewer keys for larger values, at least 10). The sweep writes them once
// before its first step (10 MiB of 1 KiB values), so that every step, of
// 2s or 60s, runs on a database of that size from its first put: written
// by the steps themselves, a 10s step filled a third of them and a 60s
// step all, and on a volume capped at 1,500 IOPS the 60s step broke at a
// rate the 10s step held (a sweep of 1,000 keys held it for 60s). With
// its history compacted, the database then holds them and a few seconds'
// revisions, however long a step runs. New keys each (etcdctl check
// perf's) would grow it by the step's every put: 480 MB in a 60s step at
// 8,000 puts/s.
const (
	capacityKeySpace = 10000
	capacityKeyBytes = 10 << 20
)

// keyTxnBytes bounds the puts of one transaction that writes the key
// space, under etcd's 1.5 MiB request limit (--max-request-bytes); at most
// keyTxnOps of them, under its 128 operations (--max-txn-ops).
const (
	keyTxnBytes = 1 << 20
	keyTxnOps   = 100
)

// Capacity sweeps the offered put rate step by step (open loop, check
// perf's key and value sizes, clients growing with the rate as check
// perf's profiles do) until a step breaks one of etcd's limits, then one
// step between the highest rate that held and the one that broke. The
// steps share one etcd. It returns the sweep judged (judge.Capacity),
// with what it measured when ctx ends or a step fails.
func Capacity(ctx context.Context, o CapacityOptions) (*result.Capacity, error) {
	s := &sweep{o: o, c: &result.Capacity{ValueSize: o.Base.ValSize, KeySize: o.Base.KeySize, StepSeconds: o.Step.Seconds(), Demand: o.Demand, DemandFrom: o.DemandFrom,
		DBSizeFrom: o.SizesFrom.DB, ValueSizeFrom: o.SizesFrom.Value}}
	if s.verdictBroke() {
		return s.judged(nil)
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
		if ok, err := s.step(ctx, len(capacityRates)+4, o.Base.Rate, o.Step, false); err != nil || !ok {
			return s.judged(err)
		}
	}
	held, bad, err := s.climb(ctx)
	if err == nil {
		err = s.knee(ctx, held, bad)
	}
	if err == nil {
		err = s.confirm(ctx)
	}
	return s.judged(err)
}

// sweep is a capacity sweep under way: its options, its steps so far, and
// the etcd its steps reach (conn, under runID).
type sweep struct {
	o     CapacityOptions
	c     *result.Capacity
	conn  cluster.ConnOptions
	runID string
	// own: the etcd is the sweep's own, which it compacts; its steps
	// overwrite the keys under prefix.
	own    bool
	prefix string
}

// keySpace is the keys a step's puts overwrite on the sweep's own etcd
// (0 on a live cluster: a new key each, deleted after the step).
func (s *sweep) keySpace() int {
	if !s.own {
		return 0
	}
	return max(10, min(capacityKeySpace, capacityKeyBytes/max(s.o.Base.ValSize, 1)))
}

// writeKeys writes the key space the steps overwrite, once, before the
// first step, in transactions; then compacts (a compaction commits what it
// deleted in batches of 1,000 revisions, at once) and waits for the
// compaction, so that the first step does not commit the last of those
// writes (a 2s step right after them broke the commit p99 at 28.6ms in 5
// of 5 runs on a RAM disk).
func (s *sweep) writeKeys(ctx context.Context) error {
	b, n := s.o.Base, s.keySpace()
	ops := max(1, min(keyTxnOps, keyTxnBytes/max(b.KeySize+b.ValSize, 1)))
	txns := int64((n + ops - 1) / ops)
	res, _, err := loadrun.Run(ctx, loadrun.Options{
		Target: cluster.TargetOptions{Conn: s.conn, RunID: s.runID + "-keys"},
		Load: load.Options{Workload: load.TxnPut, TxnOps: ops, Clients: 4, Total: txns,
			KeySize: b.KeySize, ValSize: b.ValSize, KeySpaceSize: n, Prefix: s.prefix, CommandTimeout: s.conn.CommandTimeout},
		Conns:     2,
		Overwrite: true,
		Compact:   true,
	})
	if err == nil && res != nil && res.Bench != nil {
		if failed := result.ErrorTotal(res.Bench.Errors); failed > 0 {
			why, _ := result.TopError(res.Bench.Errors)
			err = fmt.Errorf("%d of its %d transactions failed (%s)", failed, txns, why)
		}
	}
	if err != nil {
		return fmt.Errorf("capacity sweep: write the %d keys its steps overwrite: %w", n, err)
	}
	return nil
}

// compactEvery is how often a step of d compacts the sweep's own etcd (0
// on a live cluster, whose history is its own, and in a step shorter than
// the period).
func (s *sweep) compactEvery(d time.Duration) time.Duration {
	if s.own && d >= capacityCompaction {
		return capacityCompaction
	}
	return 0
}

// judged concludes the sweep from its steps so far (judge.Capacity).
func (s *sweep) judged(err error) (*result.Capacity, error) {
	judge.Capacity(s.c, s.o.Criteria)
	return s.c, err
}

// verdictBroke takes the verdict's own load as the sweep's first step,
// judged as a check is (doctor judges its target later, as a whole), when
// no --db-size fill changes the database under the steps (the verdict ran
// on an empty one, the steps on the sweep's 10 MiB key space, a small
// difference at its 150 puts/s); it says whether that step broke a limit
// (nothing to sweep).
func (s *sweep) verdictBroke() bool {
	o := s.o
	if o.First == nil || o.First.Bench == nil || o.DBSize > 0 {
		return false
	}
	first := *o.First
	first.Kind, first.Checks, first.Findings, first.Doctor, first.Runs = result.KindCheck, nil, nil, nil, nil
	judge.Judge(&first, o.Criteria)
	st := judge.CapacityStep(&first, o.Base.Rate, o.Base.Clients)
	s.c.Steps = append(s.c.Steps, st)
	return len(st.Broke) > 0
}

// open starts (or reaches) the etcd all steps share; the steps reach an
// embedded one as a cluster on this host, and a member on a capped volume
// through the volume's device.
func (s *sweep) open(ctx context.Context) (*cluster.Target, error) {
	to := s.o.Target
	s.own = len(to.Conn.Endpoints) == 0
	to.Separate = s.own
	if s.own {
		// A put load of 1 KiB values at thousands a second adds megabytes
		// of history a second: uncompacted, a long step measures a
		// database growing by hundreds of megabytes (and, in minutes,
		// etcd's 2 GiB quota: "database space exceeded"), not the
		// storage. The sweep compacts its own etcd during each step as a
		// cluster under such a load must be (kube-apiserver compacts
		// every 5 minutes), and each step's history is compacted away
		// after it.
		s.c.CompactionSeconds = capacityCompaction.Seconds()
	}
	t, err := cluster.Open(ctx, to)
	if err != nil {
		return nil, fmt.Errorf("capacity sweep: %w", err)
	}
	if d := t.VolumeDevice(); d != "" && s.o.Device != "" {
		// A member on a capped volume writes to the volume's device.
		s.o.Device = d
	}
	s.conn, s.runID = to.Conn, to.RunID
	if s.own {
		s.prefix = "/etcdperf/" + s.runID + "-keys/"
	}
	if len(s.conn.Endpoints) == 0 {
		for _, m := range t.Members() {
			s.conn.Endpoints = append(s.conn.Endpoints, m.ClientURL)
		}
	}
	return t, nil
}

// step runs one step (the i-th, for its run ID) at rate r for d, judged
// as a check, and says whether it held every limit.
func (s *sweep) step(ctx context.Context, i int, r float64, d time.Duration, confirm bool) (bool, error) {
	o := s.o
	clients := check.ClientsFor(r)
	if o.Stepping != nil {
		o.Stepping(r, clients, confirm)
	}
	prof := o.Base
	prof.Name, prof.Rate, prof.Clients = fmt.Sprintf("%.0f/s", r), r, clients
	res, err := runCheck(ctx, CheckOptions{
		Target:  cluster.TargetOptions{Conn: s.conn, RunID: fmt.Sprintf("%s-cap%d", s.runID, i)},
		Profile: prof, Duration: d, Criteria: o.Criteria, Device: o.Device, AutoCompact: s.own, KeySpace: s.keySpace(), CompactEvery: s.compactEvery(d),
		Prefix: s.prefix, Overwrite: s.own,
	})
	if res == nil {
		return false, err
	}
	res.Kind = result.KindCheck
	judge.Judge(res, o.Criteria)
	st := judge.CapacityStep(res, r, clients)
	st.Confirm = confirm
	s.c.Steps = append(s.c.Steps, st)
	return !st.Failed(), err
}

// fill fills the sweep's etcd with o.DBSize bytes of values, then runs a
// second of the verdict's load, not judged.
func (s *sweep) fill(ctx context.Context) error {
	o := s.o
	if o.Filling != nil {
		o.Filling(o.DBSize)
	}
	start := time.Now()
	if err := fill(ctx, s.conn, s.runID, o.Base.KeySize, o.DBSize); err != nil {
		return fmt.Errorf("capacity sweep: fill etcd with %s first: %w", units.Bytes(float64(o.DBSize)), err)
	}
	s.c.DBSize, s.c.FillSeconds = o.DBSize, time.Since(start).Seconds()
	// The fill's last commits, and bbolt remapping the file it grew,
	// land in the seconds after it (a 2s step right after a 16 MiB
	// fill broke the commit p99 at 28.6ms on tmpfs once in three
	// runs): a second of the verdict's load, not judged, lets them
	// pass before the first step.
	warm := o.Base
	warm.Clients = check.ClientsFor(warm.Rate)
	if _, err := runCheck(ctx, CheckOptions{Target: cluster.TargetOptions{Conn: s.conn, RunID: s.runID + "-warm"},
		Profile: warm, Duration: time.Second, Criteria: o.Criteria}); err != nil {
		return fmt.Errorf("capacity sweep: a second of load after the fill: %w", err)
	}
	return nil
}

// climb steps through capacityRates above the first step's until one
// breaks: the highest rate that held and the one that broke (0: none).
func (s *sweep) climb(ctx context.Context) (held, bad float64, err error) {
	if len(s.c.Steps) > 0 {
		held = s.c.Steps[0].Offered
	}
	for i, r := range capacityRates {
		if r <= held {
			continue // the first step's load was at least this
		}
		ok, err := s.step(ctx, i, r, s.o.Step, false)
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
// broke is alone past the knee with its fsyncs behind the offered rate.
func (s *sweep) knee(ctx context.Context, held, bad float64) error {
	if bad <= 0 || held <= 0 {
		return nil
	}
	mid := twoDigits(math.Sqrt(held * bad))
	midHeld := false
	if mid > held && mid < bad {
		ok, err := s.step(ctx, len(capacityRates), mid, s.o.Step, false)
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
	if over := twoDigits(bad * math.Sqrt2); brokeAt != nil && over <= capacityRates[len(capacityRates)-1] &&
		brokeAt.WALFsyncs*check.LimitOf(s.o.Criteria, check.FsyncsFlatGrowth) <= bad {
		if _, err := s.step(ctx, len(capacityRates)+3, over, s.o.Step, false); err != nil {
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
		ok, err := s.step(ctx, len(capacityRates)+1+n, r, o.Confirm, true)
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

// SizesFrom says where a sweep's database size and value size came
// from when they are the cluster's, read from its metrics, and what each
// assumes (ClusterDBSize, ClusterMeanWrite); empty: given or by default.
type SizesFrom struct{ DB, Value string }

// fillValue is the value size of the fill: large values fill a database
// in few requests (the B-tree's size is what slows the commits).
const fillValue = 32 << 10

// fill writes size bytes of values under a prefix of the sweep's own in
// the etcd at conn, as fast as 8 clients can, and keeps them there (the
// sweep's etcd is its own, removed at its end).
func fill(ctx context.Context, conn cluster.ConnOptions, runID string, keySize int, size int64) error {
	n := max(size/fillValue, 1)
	_, _, err := loadrun.Run(ctx, loadrun.Options{
		Target:   cluster.TargetOptions{Conn: conn, RunID: runID + "-fill"},
		Load:     load.Options{Workload: load.Put, Clients: 8, Total: n, KeySize: max(keySize, 16), ValSize: fillValue, KeySpaceSize: int(n), SequentialKeys: true},
		Conns:    2,
		KeepKeys: true,
	})
	return err
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
