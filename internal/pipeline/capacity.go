package pipeline

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/result"
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
	// Stepping, when set, is told each step before it starts.
	Stepping func(rate float64, clients int)
}

// Capacity sweeps the offered put rate step by step (open loop, check
// perf's key and value sizes, clients growing with the rate as check
// perf's profiles do) until a step breaks one of etcd's limits, then one
// step between the highest rate that held and the one that broke. The
// steps share one etcd. It returns the sweep judged (judge.Capacity),
// with what it measured when ctx ends or a step fails.
func Capacity(ctx context.Context, o CapacityOptions) (*result.Capacity, error) {
	c := &result.Capacity{ValueSize: o.Base.ValSize, KeySize: o.Base.KeySize, StepSeconds: o.Step.Seconds(), Demand: o.Demand, DemandFrom: o.DemandFrom}
	if o.First != nil && o.First.Bench != nil {
		// The verdict's load, judged as a check is (doctor judges its
		// target later, as a whole).
		first := *o.First
		first.Kind, first.Checks, first.Findings, first.Doctor, first.Runs = result.KindCheck, nil, nil, nil, nil
		judge.Judge(&first, o.Criteria)
		st := judge.CapacityStep(&first, o.Base.Rate, o.Base.Clients)
		c.Steps = append(c.Steps, st)
		if len(st.Broke) > 0 {
			judge.Capacity(c, o.Criteria)
			return c, nil
		}
	}
	to := o.Target
	to.Separate = len(to.Conn.Endpoints) == 0
	t, err := cluster.Open(ctx, to)
	if err != nil {
		return nil, fmt.Errorf("capacity sweep: %w", err)
	}
	defer t.Close()
	if d := t.VolumeDevice(); d != "" && o.Device != "" {
		// A member on a capped volume writes to the volume's device.
		o.Device = d
	}
	conn := to.Conn
	if len(conn.Endpoints) == 0 {
		// The steps reach the sweep's own etcd as a cluster on this host.
		for _, m := range t.Members() {
			conn.Endpoints = append(conn.Endpoints, m.ClientURL)
		}
	}
	step := func(i int, r float64) (bool, error) {
		clients := check.ClientsFor(r)
		if o.Stepping != nil {
			o.Stepping(r, clients)
		}
		prof := o.Base
		prof.Name, prof.Rate, prof.Clients = fmt.Sprintf("%.0f/s", r), r, clients
		res, err := runCheck(ctx, CheckOptions{
			Target:  cluster.TargetOptions{Conn: conn, RunID: fmt.Sprintf("%s-cap%d", to.RunID, i)},
			Profile: prof, Duration: o.Step, Criteria: o.Criteria, Device: o.Device,
		})
		if res == nil {
			return false, err
		}
		res.Kind = result.KindCheck
		judge.Judge(res, o.Criteria)
		st := judge.CapacityStep(res, r, clients)
		c.Steps = append(c.Steps, st)
		return len(st.Broke) == 0, err
	}
	held, bad := 0.0, 0.0
	if len(c.Steps) > 0 {
		held = c.Steps[0].Offered
	}
	for i, r := range capacityRates {
		if r <= held {
			continue // the first step's load was at least this
		}
		ok, err := step(i, r)
		if err != nil {
			judge.Capacity(c, o.Criteria)
			return c, err
		}
		if !ok {
			bad = r
			break
		}
		held = r
	}
	if bad > 0 && held > 0 {
		// One step at the geometric middle of the knee, on two
		// significant digits.
		mid := math.Sqrt(held * bad)
		p := math.Pow(10, math.Floor(math.Log10(mid))-1)
		if mid = math.Round(mid/p) * p; mid > held && mid < bad {
			if _, err := step(len(capacityRates), mid); err != nil {
				judge.Capacity(c, o.Criteria)
				return c, err
			}
		}
	}
	judge.Capacity(c, o.Criteria)
	return c, nil
}
