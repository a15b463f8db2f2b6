package capacity

import (
	"context"
	"fmt"
	"time"

	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/load"
	"github.com/etcdperf/etcdperf/internal/loadrun"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// compactEvery is how often the sweep compacts its own etcd's history
// during a step at least that long, keeping none: at 2s into it, then
// every 4s (loadrun.Options.CompactEvery), so that a step of any length
// pays its share of compactions of its own history, an 8s confirm step
// two, as every 8s of a 60s step does. A 2s step pays none. (etcd's
// periodic compactor, which keeps a period of history, compacts nothing of
// a step's own before twice its period into it.)
const compactEvery = 4 * time.Second

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
		s.c.CompactionSeconds = compactEvery.Seconds()
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

// keySpace is the keys a step's puts overwrite on the sweep's own etcd
// (0 on a live cluster: a new key each, deleted after the step).
func (s *sweep) keySpace() int {
	if !s.own {
		return 0
	}
	return max(10, min(keySpace, keySpaceBytes/max(s.o.Base.ValSize, 1)))
}

// compactEvery is how often a step of d compacts the sweep's own etcd (0
// on a live cluster, whose history is its own, and in a step shorter than
// the period).
func (s *sweep) compactEvery(d time.Duration) time.Duration {
	if s.own && d >= compactEvery {
		return compactEvery
	}
	return 0
}

// writeKeys writes the key space the steps overwrite, once, before the
// first step, in transactions; then compacts (a compaction commits what it
// deleted in batches of 1,000 revisions, at once) and waits for the
// compaction, so that the first step does not commit the last of those
// writes.
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
	warm.Clients = check.ClientsFor(warm.Rate)
	if _, err := o.Run(ctx, Load{Target: cluster.TargetOptions{Conn: s.conn, RunID: s.runID + "-warm"}, Profile: warm, Duration: time.Second}); err != nil {
		return fmt.Errorf("capacity sweep: a second of load after the fill: %w", err)
	}
	return nil
}

// fillValues writes o.DBSize bytes of values under a prefix of the
// sweep's own, as fast as 8 clients can, and keeps them there (the
// sweep's etcd is its own, removed at its end).
func (s *sweep) fillValues(ctx context.Context) error {
	n := max(s.o.DBSize/fillValue, 1)
	_, _, err := loadrun.Run(ctx, loadrun.Options{
		Target:   cluster.TargetOptions{Conn: s.conn, RunID: s.runID + "-fill"},
		Load:     load.Options{Workload: load.Put, Clients: 8, Total: n, KeySize: max(s.o.Base.KeySize, 16), ValSize: fillValue, KeySpaceSize: int(n), SequentialKeys: true},
		Conns:    2,
		KeepKeys: true,
	})
	return err
}
