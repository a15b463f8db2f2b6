package capacity

import (
	"context"
	"fmt"
	"time"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/load"
	"github.com/etcdperf/etcdperf/internal/loadrun"
	"github.com/etcdperf/etcdperf/internal/profile"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// compactEvery is how often the loads on an etcd of their own compact its
// history, keeping none: at ½s into a load, then every second
// (loadrun.Options.CompactEvery), so that a load of any length, a 2s step
// or a 60s soak, pays its share of the compactions of its own history
// from its first second. etcd deletes a compaction's revisions in
// batches of 1,000, each a backend commit of its own: at R puts/s that is
// R/1,000 batch commits a second whatever the schedule, and these spread
// them over the load as evenly as they come. (A compaction every 4s made
// a 2s step pay none and an 8s hold two, each of 4s of revisions back to
// back: a hold broke the backend commit p99 where the short steps held
// twice its rate.)
const compactEvery = time.Second

// keySpace is the keys each step on the sweep's own etcd writes over and
// over, as a cluster updates its objects; keySpaceBytes bounds their
// values (fewer keys for larger values, at least 10). The sweep writes
// them once before its first step (10 MiB of 1 KiB values), so that every
// step, of 2s or 60s, runs on a database of that size from its first put
// (written by the steps themselves, a short step would fill a part of
// them and a long one all). With its history compacted, the database then
// holds them and a few seconds' revisions, however long a step runs. New
// keys each (etcdctl check perf's) would grow it by the step's every put:
// 480 MB in a 60s step at 8,000 puts/s.
const (
	keySpace      = 10000
	keySpaceBytes = 10 << 20
)

// keyTxnBytes bounds the puts of one transaction that writes the key
// space, under etcd's 1.5 MiB request limit (--max-request-bytes); at most
// keyTxnOps of them, under its 128 operations (--max-txn-ops).
const (
	keyTxnBytes = 1 << 20
	keyTxnOps   = 100
)

// fillValue is the value size of a --db-size fill: large values fill a
// database in few requests (the B-tree's size is what slows the commits).
const fillValue = 32 << 10

// space is the etcd a sweep's steps, or a soak's load, share, and how
// they write to it: on an etcd of their own (own), the key space under
// prefix, written once before the first load and overwritten by every
// load, with the history compacted during each (compactEvery); on a
// cluster's endpoints, a new key each, deleted after each load.
type space struct {
	base   profile.Profile
	device string
	conn   cluster.ConnOptions
	runID  string
	own    bool
	prefix string
	// loads counts the loads run, for their run IDs.
	loads int
}

// openSpace starts (or reaches) the etcd the loads of what (the capacity
// sweep, the soak) share, and writes its key space on an etcd of their
// own. Its loads reach an embedded etcd as a cluster on this host, and a
// member on a capped volume through the volume's device.
func openSpace(ctx context.Context, what string, to lab.TargetOptions, base profile.Profile, device string) (*space, *lab.Target, error) {
	sp := &space{base: base, device: device, own: len(to.Conn.Endpoints) == 0}
	to.Separate = sp.own
	t, err := lab.Open(ctx, to)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	if d := t.VolumeDevice(); d != "" && sp.device != "" {
		// A member on a capped volume writes to the volume's device.
		sp.device = d
	}
	sp.conn, sp.runID = to.Conn, to.RunID
	if len(sp.conn.Endpoints) == 0 {
		for _, m := range t.Members() {
			sp.conn.Endpoints = append(sp.conn.Endpoints, m.ClientURL)
		}
	}
	if sp.own {
		sp.prefix = "/etcdperf/" + sp.runID + "-keys/"
		if err := sp.writeKeys(ctx); err != nil {
			t.Close()
			return nil, nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	return sp, t, nil
}

// compactionSeconds is how often the loads compact the etcd's history
// (0: never, a cluster's history is its own).
func (sp *space) compactionSeconds() float64 {
	if sp.own {
		return compactEvery.Seconds()
	}
	return 0
}

// load is a load of prof for d: on its own etcd, over the key space with
// compactions; under a run ID of its own.
func (sp *space) load(prof profile.Profile, d time.Duration) Load {
	l := Load{Target: lab.TargetOptions{Conn: sp.conn, RunID: fmt.Sprintf("%s-load%d", sp.runID, sp.loads)}, Profile: prof, Duration: d, Device: sp.device,
		Compact: sp.own, KeySpace: sp.keySpace(), CompactEvery: sp.compactEvery(d), Prefix: sp.prefix, Overwrite: sp.own}
	sp.loads++
	return l
}

// keySpace is the keys a load's puts overwrite on an etcd of their own
// (0 on a live cluster: a new key each, deleted after the load).
func (sp *space) keySpace() int {
	if !sp.own {
		return 0
	}
	return max(10, min(keySpace, keySpaceBytes/max(sp.base.ValSize, 1)))
}

// compactEvery is how often a load of d compacts an etcd of its own (0
// on a live cluster, whose history is its own, and in a load shorter than
// the period).
func (sp *space) compactEvery(d time.Duration) time.Duration {
	if sp.own && d >= compactEvery {
		return compactEvery
	}
	return 0
}

// writeKeys writes the key space the loads overwrite, once, before the
// first, in transactions; then compacts (a compaction commits what it
// deleted in batches of 1,000 revisions, at once) and waits for the
// compaction, so that the first load does not commit the last of those
// writes.
func (sp *space) writeKeys(ctx context.Context) error {
	b, n := sp.base, sp.keySpace()
	ops := max(1, min(keyTxnOps, keyTxnBytes/max(b.KeySize+b.ValSize, 1)))
	txns := int64((n + ops - 1) / ops)
	m, err := loadrun.Run(ctx, loadrun.Options{
		Target: lab.TargetOptions{Conn: sp.conn, RunID: sp.runID + "-keys"},
		Load: load.Options{Workload: load.TxnPut, TxnOps: ops, Clients: 4, Total: txns,
			KeySize: b.KeySize, ValSize: b.ValSize, KeySpaceSize: n, Prefix: sp.prefix, CommandTimeout: sp.conn.CommandTimeout},
		Conns:     2,
		Overwrite: true,
		Compact:   true,
	})
	if err == nil && m != nil && m.Bench != nil {
		if failed := result.ErrorTotal(m.Bench.Errors); failed > 0 {
			why, _ := result.TopError(m.Bench.Errors)
			err = fmt.Errorf("%d of its %d transactions failed (%s)", failed, txns, why)
		}
	}
	if err != nil {
		return fmt.Errorf("write the %d keys its loads overwrite: %w", n, err)
	}
	return nil
}

// fill fills the sweep's etcd with o.DBSize bytes of values, then runs a
// second of the verdict's load, not judged.
func (s *sweep) fill(ctx context.Context) error {
	o := s.o
	if o.Filling != nil {
		o.Filling(o.DBSize)
	}
	start := time.Now()
	if err := s.fillValues(ctx); err != nil {
		return fmt.Errorf("capacity sweep: fill etcd with %s first: %w", units.Bytes(float64(o.DBSize)), err)
	}
	s.c.DBSize, s.c.FillSeconds = o.DBSize, time.Since(start).Seconds()
	// The fill's last commits, and bbolt remapping the file it grew, land
	// in the seconds after it: a second of the verdict's load, not
	// judged, lets them pass before the first step.
	warm := o.Base
	warm.Clients = profile.ClientsFor(warm.Rate)
	if _, err := o.Run(ctx, Load{Target: lab.TargetOptions{Conn: s.sp.conn, RunID: s.sp.runID + "-warm"}, Profile: warm, Duration: time.Second}); err != nil {
		return fmt.Errorf("capacity sweep: a second of load after the fill: %w", err)
	}
	return nil
}

// fillValues writes o.DBSize bytes of values under a prefix of the
// sweep's own, as fast as 8 clients can, and keeps them there (the
// sweep's etcd is its own, removed at its end).
func (s *sweep) fillValues(ctx context.Context) error {
	n := max(s.o.DBSize/fillValue, 1)
	_, err := loadrun.Run(ctx, loadrun.Options{
		Target:   lab.TargetOptions{Conn: s.sp.conn, RunID: s.sp.runID + "-fill"},
		Load:     load.Options{Workload: load.Put, Clients: 8, Total: n, KeySize: max(s.o.Base.KeySize, 16), ValSize: fillValue, KeySpaceSize: int(n), SequentialKeys: true},
		Conns:    2,
		KeepKeys: true,
	})
	return err
}
