package pipeline

import (
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/render"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// limitWords says what limits etcd, for a volatile target's summary.
var limitWords = map[string]string{
	diagnose.LimitCPU:     "the CPU limits it",
	diagnose.LimitClient:  "the load generator's machine was saturated",
	diagnose.LimitNetwork: "the network between the members limits it",
	diagnose.LimitEtcd:    "it could not keep up with the load",
}

// targetSummary says in one sentence what a doctor target's run means.
func targetSummary(r *result.Result) string {
	t := r.Doctor.Targets[0]
	head := verdictHead(r.Verdict, t)
	if strings.HasSuffix(t.Name, " + noise") {
		head = "with a neighbour writing bulk data on the device: " + head
	}
	figs := targetFigures(r, t)
	if len(figs) == 0 {
		return head + "."
	}
	return head + " (" + strings.Join(figs, ", ") + ")."
}

// verdictHead says what a target's verdict means, by what limits etcd.
func verdictHead(v result.Verdict, t result.DoctorTarget) string {
	what := "this storage"
	if t.Dir == "" {
		what = "this cluster"
	}
	if t.Volatile {
		s := fmt.Sprintf("%s is %s, in memory: fast but not durable (fsync never reaches a disk and the data is lost on reboot), for throw-away CI clusters only", t.Dir, t.FSType)
		if v == result.Fail {
			s += "; etcd still failed here"
			if w, ok := limitWords[t.LimitedBy]; ok {
				s += ": " + w
			}
		}
		return s
	}
	switch v {
	case result.Fail:
		switch t.LimitedBy {
		case diagnose.LimitDisk:
			if t.Noise != nil && t.Noise.Verdict == result.Fail && t.FsyncHeadroom >= 1 {
				return what + " is fast enough for etcd alone, but not with a neighbour writing bulk data on the same device: the disk limits it under contention"
			}
			return what + " is too slow for etcd: the disk limits it"
		case diagnose.LimitCPU:
			return "etcd fails here, but not because of the storage: the CPU limits it"
		case diagnose.LimitClient:
			return "the load generator's machine, not etcd, was saturated: this run cannot judge etcd"
		case diagnose.LimitNetwork:
			return "etcd fails here: the network between the members limits it"
		case diagnose.LimitEtcd:
			return "etcd could not keep up with the load"
		}
		return "etcd fails here"
	case result.Warn:
		switch t.LimitedBy {
		case diagnose.LimitDisk:
			return "etcd runs on " + what + " with little headroom: the disk is close to its limit"
		case diagnose.LimitCPU:
			return "the storage is fast enough, but the CPU limits etcd here"
		case diagnose.LimitClient:
			return "the load generator's machine, not etcd, was saturated"
		case diagnose.LimitNetwork:
			return "etcd runs here with little headroom: the network between the members limits it"
		}
		return "etcd runs on " + what + " with little headroom"
	}
	return what + " is fast enough for etcd"
}

// targetFigures are the figures behind a target's verdict.
func targetFigures(r *result.Result, t result.DoctorTarget) []string {
	var figs []string
	switch {
	case t.WALFsyncP99 > 0:
		figs = append(figs, "etcd's WAL fsync p99 "+render.LatencyValue(*r.Server.WALFsync, t.WALFsyncP99)+headroomText(t.FsyncHeadroom))
	case t.DiskSyncP99 > 0:
		figs = append(figs, "fdatasync p99 "+units.Seconds(t.DiskSyncP99)+headroomText(t.FsyncHeadroom))
	}
	if t.TargetRate > 0 {
		figs = append(figs, fmt.Sprintf("%.0f of %.0f puts/s, request p99 %s", t.Throughput, t.TargetRate, units.Seconds(t.RequestP99)))
	}
	if r.Host != nil && r.Host.Device != "" && r.Perf != nil {
		figs = append(figs, fmt.Sprintf("device %s busy %.0f%% of the time", r.Host.Device, t.DeviceUtil*100))
	}
	if pf := r.Perf; pf != nil && pf.ServerCPU > 0 && pf.CPUs > 0 {
		figs = append(figs, fmt.Sprintf("etcd used %.0f%% of the %d CPUs", pf.ServerCPU/float64(pf.CPUs)*100, pf.CPUs))
	}
	if n := t.Noise; n != nil && n.WALFsyncRatio > 0 {
		figs = append(figs, fmt.Sprintf("with a neighbour's bulk writes WAL fsync p99 %s (%.1fx), request p99 %s (%.1fx)",
			units.Seconds(n.WALFsyncP99), n.WALFsyncRatio, units.Seconds(n.RequestP99), n.RequestRatio))
	}
	return figs
}

// headroomText says how far a fsync p99 is from its limit.
func headroomText(h float64) string {
	switch {
	case h <= 0:
		return ""
	case h >= 2:
		return fmt.Sprintf(", %.0fx under the limit", h)
	case h > 1:
		return fmt.Sprintf(", %.0f%% under the limit", (1-1/h)*100)
	}
	return fmt.Sprintf(", %.1fx the limit", 1/h)
}

// doctorSummary sums up a doctor run: the one target's summary, or each
// target's verdict and the ratios between the fastest and the slowest.
func doctorSummary(top *result.Result) string {
	ts := top.Doctor.Targets
	if len(top.Runs) == 1 {
		return top.Runs[0].Summary
	}
	var parts []string
	for _, t := range ts {
		s := fmt.Sprintf("%s%s: %s", t.Name, fsWord(t), strings.ToUpper(string(t.Verdict)))
		switch {
		case t.Volatile:
			s += " (fast but not durable)"
		case t.LimitedBy != "" && t.LimitedBy != diagnose.LimitNone:
			s += " (limited by " + limitNoun(t.LimitedBy) + ")"
		}
		parts = append(parts, s)
	}
	out := strings.Join(parts, "; ")
	if c := compareTargets(ts); c != "" {
		out += "; " + c
	}
	return out + "."
}

func fsWord(t result.DoctorTarget) string {
	if t.FSType == "" {
		return ""
	}
	return " (" + t.FSType + ")"
}

func limitNoun(l string) string {
	switch l {
	case diagnose.LimitClient:
		return "the load generator"
	case diagnose.LimitCPU:
		return "the CPU"
	case diagnose.LimitEtcd:
		return "etcd itself"
	}
	return "the " + l
}

// compareTargets says how many times the fastest target beats the
// slowest, by the fsync p99 (the probe's, which resolves below etcd's 1ms
// floor, when every target has it) and the request p99.
func compareTargets(ts []result.DoctorTarget) string {
	fsync := func(t result.DoctorTarget) float64 { return t.DiskSyncP99 }
	what := "fdatasync p99"
	for _, t := range ts {
		if t.DiskSyncP99 <= 0 {
			fsync, what = func(t result.DoctorTarget) float64 { return t.WALFsyncP99 }, "WAL fsync p99"
			break
		}
	}
	best, worst := -1, -1
	for i, t := range ts {
		if fsync(t) <= 0 {
			return ""
		}
		if best < 0 || fsync(t) < fsync(ts[best]) {
			best = i
		}
		if worst < 0 || fsync(t) > fsync(ts[worst]) {
			worst = i
		}
	}
	if best == worst {
		return ""
	}
	b, w := ts[best], ts[worst]
	s := fmt.Sprintf("%s's %s is %s, %s lower than %s's %s", b.Name, what, units.Seconds(fsync(b)), render.Ratio(fsync(w)/fsync(b)), w.Name, units.Seconds(fsync(w)))
	if b.RequestP99 > 0 && w.RequestP99 > 0 {
		s += fmt.Sprintf("; request p99 %s against %s", units.Seconds(b.RequestP99), units.Seconds(w.RequestP99))
	}
	if b.Volatile {
		s += fmt.Sprintf(", but %s is %s: not durable", b.Name, b.FSType)
	}
	return s
}
