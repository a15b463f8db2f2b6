package report

import (
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// The disk section: `etcdperf disk` (native probe or fio).
func init() {
	sync := func(r *result.Result) *result.Latency { return r.Disk.SyncLatency }
	write := func(r *result.Result) *result.Latency { return r.Disk.WriteLatency }
	metrics := latencyMetrics("disk sync", sync, "p50", "p99", "p999", "max")
	metrics = append(metrics, latencyMetrics("disk write", write, "p99")...)
	metrics = append(metrics,
		Metric{Label: "disk IOPS", Unit: "ops/s", Better: Higher, Get: func(r *result.Result) (Value, bool) {
			return Value{V: r.Disk.IOPS}, r.Disk.Ops > 0
		}},
		Metric{Label: "disk bandwidth", Unit: "bytes/s", Better: Higher, Get: func(r *result.Result) (Value, bool) {
			return Value{V: r.Disk.Bandwidth}, r.Disk.Ops > 0
		}},
		Metric{Label: "disk ops", Unit: "count", Get: func(r *result.Result) (Value, bool) {
			return Value{V: float64(r.Disk.Ops)}, true
		}},
	)
	Register(Section{
		ID: "disk", Title: "Disk: etcd's WAL pattern", Order: 10,
		Has:     func(r *result.Result) bool { return r.Disk != nil },
		Metrics: metrics,
		Build:   diskBlock,
	})
}

func diskBlock(runs []Run) Block {
	var b Block
	var syncs, writes []curve
	for _, r := range runs {
		d := r.Result.Disk
		syncs = append(syncs, curve{Label: r.Label, Run: r.Index, Lat: d.SyncLatency})
		writes = append(writes, curve{Label: r.Label, Run: r.Index, Lat: d.WriteLatency})
		for _, n := range d.Notes {
			b.Notes = append(b.Notes, r.Label+": "+n)
		}
		if d.Engine == "fio" && d.EngineVersion != "" {
			b.Notes = append(b.Notes, r.Label+": measured by "+d.EngineVersion)
		}
		if r.Result.Env != nil && r.Result.Env.Volatile {
			b.Notes = append(b.Notes, r.Label+": "+r.Result.Env.Dir+" is in memory ("+r.Result.Env.FSType+"): fdatasync does nothing there, so these latencies say nothing about a disk.")
		}
	}
	limits := limitsFor(runs, limits.DiskSyncP99)
	if c, ok := percentileChart("disk-sync-percentiles", "fdatasync latency by percentile", "Each write is followed by fdatasync, as etcd does after every WAL append; etcd needs the 99th percentile under 10ms.", syncs, limits...); ok {
		b.Charts = append(b.Charts, c)
	}
	if c, ok := histogramChart("disk-sync-histogram", "fdatasync latency distribution", "Share of the syncs in each latency band (ten bands per decade).", syncs); ok {
		b.Charts = append(b.Charts, c)
	}
	if c, ok := percentileChart("disk-write-percentiles", "write latency by percentile", "The write call alone, before the sync: it only copies into the page cache.", writes); ok {
		b.Charts = append(b.Charts, c)
	}
	if c, ok := histogramChart("disk-write-histogram", "write latency distribution", "", writes); ok {
		b.Charts = append(b.Charts, c)
	}
	b.Tables = append(b.Tables, diskJobs(runs)...)
	return b
}

// diskJobs lists the writers of multi-job runs.
func diskJobs(runs []Run) []Table {
	var out []Table
	for _, r := range runs {
		if len(r.Result.Disk.Jobs) == 0 {
			continue
		}
		t := Table{Title: r.Label + ": one line per writer", Header: []string{"file", "ops", "bytes", "sync p99"}}
		for _, j := range r.Result.Disk.Jobs {
			p99 := "–"
			if j.SyncLatency != nil && j.SyncLatency.Count > 0 {
				p99 = units.Seconds(j.SyncLatency.P99)
			}
			t.Rows = append(t.Rows, []string{j.File, formatUnit(float64(j.Ops), "count"), units.Bytes(float64(j.Bytes)), p99})
		}
		out = append(out, t)
	}
	return out
}
