package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/etcdperf/etcdperf/internal/dbfile"
	"github.com/etcdperf/etcdperf/internal/diskprobe"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// rehearsalTimeout bounds the rehearsal: a storage that copies 64 MiB
// that slowly would stall a 2 GiB database for minutes.
const rehearsalTimeout = 30 * time.Second

// rehearse measures what a defragmentation costs on the location, after
// the disk probe, with the capacity sweep (diskprobe.RehearseDefrag): a
// database of 64 MiB of the load's values copied as etcd defragments, in
// files of its own, removed at once. The stall is stated for the
// database the sweep fills (--db-size) or, without one, for etcd's
// default quota: the largest a database grows to under it. A rehearsal
// that fails says so in the Result; it does not stop the run.
func (d *doctorRun) rehearse(ctx context.Context) error {
	if d.dir == "" || d.o.SkipDisk || d.live || !d.o.Capacity {
		return nil
	}
	d.o.Progress.set("rehearsing a defragmentation on %s (%s)", d.dir, units.Bytes(diskprobe.DefaultRehearsalSize))
	value := d.o.Profile.ValSize
	if value <= 0 {
		value = diskprobe.DefaultRehearsalValue
	}
	size, from := float64(dbfile.DefaultQuota), "etcd's default --quota-backend-bytes (2 GiB), the largest a database grows to under it; --db-size states another"
	if d.o.DBSize > 0 {
		size, from = float64(d.o.DBSize), "--db-size"
		if d.o.SizesFrom.DB != "" {
			from = "--db-size from-prometheus: " + d.o.SizesFrom.DB
		}
	}
	rctx, cancel := context.WithTimeout(ctx, rehearsalTimeout)
	defer cancel()
	reh, err := diskprobe.RehearseDefrag(rctx, d.storage, diskprobe.DefaultRehearsalSize, value)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("it did not finish within %s", rehearsalTimeout)
		}
		d.r.ExpectedDefrag = &result.ExpectedDefrag{DBSize: size, DBSizeFrom: from,
			Missing: fmt.Sprintf("The defragmentation rehearsal on %s failed (%v): rerun doctor with free space for 3 times 64 MiB there, or time a defragmentation of a copy of the database on this storage.", d.dir, err)}
		return nil
	}
	rate := reh.Rate()
	d.r.ExpectedDefrag = &result.ExpectedDefrag{
		DBSize: size, DBSizeFrom: from, Rate: rate, Seconds: size / rate,
		RateFrom: fmt.Sprintf("a defragmentation rehearsed on this storage: a %s bbolt database of %d values of %d bytes copied as etcd does, in %s",
			units.Bytes(float64(reh.Bytes)), reh.Keys, reh.Value, units.Seconds(reh.Elapsed.Seconds())),
		Rehearsal: &result.DefragRehearsal{Bytes: reh.Bytes, Keys: reh.Keys, Value: reh.Value, Seconds: reh.Elapsed.Seconds()},
	}
	return nil
}
