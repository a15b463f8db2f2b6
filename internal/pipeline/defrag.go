package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/etcdperf/etcdperf/internal/dbfile"
	"github.com/etcdperf/etcdperf/internal/diskprobe"
	"github.com/etcdperf/etcdperf/internal/promscrape"
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

// expectedFromMember is the stall a live member's next defragmentation
// would cause, from what its /metrics say, without writing anything: its
// database's size in use and its own past defragmentations
// (etcd_disk_backend_defrag_duration_seconds, since it started). Without
// past ones it says what it would need. nil when the scrape holds no
// database size.
func expectedFromMember(member string, snap promscrape.Snapshot) *result.ExpectedDefrag {
	sig := snap.EtcdSignals()
	size, ok := sig.Values["db_size_in_use"]
	from := sig.Source["db_size_in_use"]
	if !ok || size <= 0 {
		if size, ok = sig.Values["db_size"]; !ok || size <= 0 {
			return nil
		}
		from = sig.Source["db_size"]
	}
	e := &result.ExpectedDefrag{Member: member, DBSize: size, DBSizeFrom: "the member's " + from}
	h, ok := sig.Histograms["defrag"]
	if !ok || h.Count <= 0 {
		e.Missing = "The member has not defragmented since it started (etcd_disk_backend_defrag_duration_seconds is empty), and nothing is written beside a live member to measure its disk: " +
			"run etcdperf doctor --data-dir DIR --db-size " + units.Size(int64(size)) + " with DIR on the same file system as its data dir, while the member is quiet: it rehearses a defragmentation there and states the stall for that size."
		return e
	}
	past := promscrape.DefragsOf(member, sig.Source["defrag"], h)
	mean := past.Seconds / past.Count
	e.Past, e.Seconds, e.Rate = &past, mean, size/mean
	e.RateFrom = fmt.Sprintf("its own %g defragmentation(s) since it started, %s on average (etcd_disk_backend_defrag_duration_seconds), assuming its database was then about as large as now", past.Count, units.Seconds(mean))
	return e
}

// expectedAroundLoad is the stall of member's next defragmentation from
// its scrape before a load (first), the size it had before the load wrote
// anything, or, when that scrape failed, from its scrape after it (last);
// nil when member is "" or answered neither.
func expectedAroundLoad(member string, first, last []promscrape.MemberScrape) *result.ExpectedDefrag {
	if e := expectedOfMember(member, first, "before the load"); e != nil {
		return e
	}
	return expectedOfMember(member, last, "after the load")
}

// expectedOfMember is expectedFromMember of member's scrape among
// scrapes (the only one when there is one); nil when member is "" or has
// no scrape that answered. when, if set, says when the scrape was taken
// in the database size's source.
func expectedOfMember(member string, scrapes []promscrape.MemberScrape, when string) *result.ExpectedDefrag {
	if member == "" {
		return nil
	}
	for _, s := range scrapes {
		if s.Err != nil || (s.Member.Name != member && len(scrapes) != 1) {
			continue
		}
		e := expectedFromMember(member, s.Snap)
		if e != nil && when != "" {
			e.DBSizeFrom += ", " + when
		}
		return e
	}
	return nil
}
