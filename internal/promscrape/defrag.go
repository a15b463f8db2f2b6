package promscrape

import (
	"fmt"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// ExpectedDefrag is the stall a live member's next defragmentation
// would cause, from what its /metrics say, without writing anything: its
// database's size in use and its own past defragmentations
// (etcd_disk_backend_defrag_duration_seconds, since it started). Without
// past ones it says what it would need. nil when the scrape holds no
// database size.
func ExpectedDefrag(member string, snap Snapshot) *result.ExpectedDefrag {
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
	past := DefragsOf(member, sig.Source["defrag"], h)
	mean := past.Seconds / past.Count
	e.Past, e.Seconds, e.Rate = &past, mean, size/mean
	e.RateFrom = fmt.Sprintf("its own %g defragmentation(s) since it started, %s on average (etcd_disk_backend_defrag_duration_seconds), assuming its database was then about as large as now", past.Count, units.Seconds(mean))
	return e
}

// ExpectedAroundLoad is the stall of member's next defragmentation from
// its scrape before a load (first), the size it had before the load wrote
// anything, or, when that scrape failed, from its scrape after it (last);
// nil when member is "" or answered neither.
func ExpectedAroundLoad(member string, first, last []MemberScrape) *result.ExpectedDefrag {
	if e := ExpectedOfMember(member, first, "before the load"); e != nil {
		return e
	}
	return ExpectedOfMember(member, last, "after the load")
}

// ExpectedOfMember is ExpectedDefrag of member's scrape among
// scrapes (the only one when there is one); nil when member is "" or has
// no scrape that answered. when, if set, says when the scrape was taken
// in the database size's source.
func ExpectedOfMember(member string, scrapes []MemberScrape, when string) *result.ExpectedDefrag {
	if member == "" {
		return nil
	}
	for _, s := range scrapes {
		if s.Err != nil || (s.Member.Name != member && len(scrapes) != 1) {
			continue
		}
		e := ExpectedDefrag(member, s.Snap)
		if e != nil && when != "" {
			e.DBSizeFrom += ", " + when
		}
		return e
	}
	return nil
}
