package diagnose

import (
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

func init() {
	Register(Rule{ID: "server_disk_slow", Apply: serverDiskSlow})
}

// serverDiskSlow names the disk as the cause when etcd's own disk
// histograms (WAL fsync, backend commit) are over or close to their
// limits: the storage under etcd's data dir is what etcd waited for. It
// reads the checks of a Result with a server section (etcd's metrics over
// a run); a Prometheus history has rules of its own, and so have check and
// doctor (their Perf section), which tell a slow disk from starved CPUs.
// Storage in memory, or CPUs saturated while the device kept up, is not
// the disk: the host rules speak then.
func serverDiskSlow(r *result.Result) []result.Finding {
	if r.Server == nil || r.Perf != nil {
		return nil
	}
	var over []result.Check
	severity := result.Warning
	for _, id := range []string{check.WALFsyncP99, check.BackendCommitP99} {
		c, ok := FindCheck(r, id)
		if !ok || c.Status == result.StatusPass {
			continue
		}
		over = append(over, c)
		if c.Status == result.StatusFail {
			severity = result.Critical
		}
	}
	if len(over) == 0 || cpuStarved(r, over[0].Observed) {
		return nil
	}
	var parts []string
	var ev []result.Evidence
	for _, c := range over {
		parts = append(parts, fmt.Sprintf("%s is %s (limit %s)", c.Title, units.Seconds(c.Observed), units.Seconds(c.Limit)))
		ev = append(ev, EvidenceOf(c))
	}
	for _, m := range r.Server.Members {
		if m.WALFsync != nil && m.WALFsync.Count > 0 {
			ev = append(ev, result.Evidence{What: "WAL fsync p99 of member " + m.Name, Observed: m.WALFsync.P99, Unit: "s",
				Source: "etcd_disk_wal_fsync_duration_seconds"})
		}
	}
	where := "the members' data dirs"
	if r.Env != nil && r.Env.Dir != "" && r.Target != nil && r.Target.Kind == "embedded" {
		where = r.Env.Dir
		if r.Env.FSType != "" {
			where += " (" + r.Env.FSType
			if r.Env.Device != "" {
				where += " on " + r.Env.Device
			}
			where += ")"
		}
	}
	f := result.Finding{
		ID:       "server_disk_slow",
		Severity: severity,
		Evidence: ev,
		Recommendation: "etcd waits for this disk on every write: measure it alone with `etcdperf disk --dir <etcd's data dir>` on each member. " +
			diskAdvice,
	}
	if severity == result.Critical {
		f.Title = fmt.Sprintf("etcd's own metrics point to the disk: %s; the storage under %s is too slow for etcd", strings.Join(parts, ", "), where)
	} else {
		f.Title = fmt.Sprintf("etcd's own metrics show little headroom on the disk: %s; the storage under %s is close to too slow for etcd", strings.Join(parts, ", "), where)
	}
	return []result.Finding{f}
}
