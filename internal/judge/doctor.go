package judge

import (
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// Doctor judges a doctor run: each target (a storage location, a cluster,
// a node's member) with its load under noise, then the run as a whole
// (the worst target, and how the targets compare).
func Doctor(r *result.Result, criteria []limits.Criterion) {
	r.Limits = limits.Changed(criteria)
	if !isDoctorTop(r) {
		target(r, criteria)
		return
	}
	for i := range r.Runs {
		target(&r.Runs[i], criteria)
	}
	DoctorRun(r)
}

// DoctorRun judges the top of a doctor run from its targets, which must be
// judged: their rows, the worst verdict, and how they compare.
func DoctorRun(r *result.Result) {
	r.Verdict = ""
	r.Doctor = &result.Doctor{}
	for _, t := range r.Runs {
		if t.Doctor != nil && len(t.Doctor.Targets) > 0 {
			r.Doctor.Targets = append(r.Doctor.Targets, t.Doctor.Targets[0])
		}
		r.Verdict = result.Worse(r.Verdict, t.Verdict)
	}
	r.Summary = doctorSummary(r)
	r.MarkIncomplete()
}

// isDoctorTop tells the top of a doctor run (one run per target, no
// measurement of its own) from a target (which measured something).
func isDoctorTop(r *result.Result) bool {
	return r.Disk == nil && r.Bench == nil && r.Server == nil && len(r.Runs) > 0 && r.Doctor != nil
}

// target judges one doctor target: the disk probe's checks, the load's,
// etcd's own, the findings, what limits etcd there and on which members,
// and its row of the doctor section. Its row must hold the target's name,
// directory, endpoints and simulated delay; with --noise, its runs hold
// the load under noise, judged first, and its row's noise effect the
// bytes the neighbour wrote.
func target(r *result.Result, criteria []limits.Criterion) {
	// The findings read their levels from the Result they judge: each
	// target, and its load under noise, records the levels set.
	r.Limits = limits.Changed(criteria)
	var row result.DoctorTarget
	if r.Doctor != nil && len(r.Doctor.Targets) > 0 {
		old := r.Doctor.Targets[0]
		row = result.DoctorTarget{Name: old.Name, Dir: old.Dir, Endpoints: old.Endpoints, Member: old.Member,
			SimulatedFsyncDelay: old.SimulatedFsyncDelay, Noise: old.Noise, DiskProbe: old.DiskProbe}
	} else {
		row.Name = r.Name
	}
	for i := range r.Runs {
		target(&r.Runs[i], criteria)
	}
	if row.Noise != nil && len(r.Runs) > 0 {
		row.Noise = noiseEffect(r, &r.Runs[0], row.Noise.BytesWritten)
	}
	r.Checks = nil
	diskChecks(r, criteria)
	perfChecks(r, criteria)
	serverChecks(r, criteria)
	capacityChecks(r, criteria)
	fillRow(&row, r)
	r.Doctor = &result.Doctor{Targets: []result.DoctorTarget{row}}
	conclude(r)
	if row.Member != "" {
		// A node's member: the findings are about it.
		for i := range r.Findings {
			if len(r.Findings[i].Members) == 0 {
				r.Findings[i].Members = []string{row.Member}
			}
		}
	}
	t := &r.Doctor.Targets[0]
	t.LimitedBy, t.LimitedOn = diagnose.DoctorLimit(r)
	t.LimitedBy = sweepCause(r.Capacity, t.LimitedBy)
	r.Summary = targetSummary(r)
	if row.Member != "" {
		r.Summary = "member " + row.Member + ": " + r.Summary
	}
	nodeTuning(r)
	r.MarkIncomplete()
	t.Verdict = r.Verdict
}

// noiseEffect compares the quiet load with the noisy one.
func noiseEffect(quiet, noisy *result.Result, written int64) *result.NoiseEffect {
	n := &result.NoiseEffect{Verdict: noisy.Verdict, BytesWritten: written}
	wq, _, rq := loadP99s(quiet)
	n.WALFsyncP99, n.BackendCommitP99, n.RequestP99 = loadP99s(noisy)
	if wq > 0 {
		n.WALFsyncRatio = n.WALFsyncP99 / wq
	}
	if rq > 0 {
		n.RequestRatio = n.RequestP99 / rq
	}
	if noisy.Host != nil && noisy.Host.Device != "" {
		n.DeviceUtil = noisy.Host.Summary.Util
	}
	return n
}

// loadP99s returns etcd's WAL fsync and backend commit p99 and the
// request p99 of a load.
func loadP99s(r *result.Result) (wal, commit, req float64) {
	if s := r.Server; s != nil {
		if s.WALFsync != nil && s.WALFsync.Count > 0 {
			wal = s.WALFsync.P99
		}
		if s.BackendCommit != nil && s.BackendCommit.Count > 0 {
			commit = s.BackendCommit.P99
		}
	}
	if r.Bench != nil && r.Bench.Latency != nil {
		req = r.Bench.Latency.P99
	}
	return wal, commit, req
}

// fillRow copies a target's figures into its row.
func fillRow(row *result.DoctorTarget, r *result.Result) {
	if env := r.Env; env != nil {
		row.FSType, row.Device, row.Volatile = env.FSType, env.Device, env.Volatile
	}
	if row.Dir == "" && r.Server != nil && len(r.Server.Processes) > 0 {
		// A cluster on this host: what its members' WALs are on.
		row.Volatile = true
		for _, p := range r.Server.Processes {
			row.Volatile = row.Volatile && p.Volatile
			row.FSType = p.FSType
		}
	}
	if r.Disk != nil && r.Disk.SyncLatency != nil && r.Disk.SyncLatency.Count > 0 {
		row.DiskSyncP99 = r.Disk.SyncLatency.P99
		if r.Disk.Rate == 0 {
			// A paced probe's IOPS is its pace, not the device's.
			row.DiskIOPS = r.Disk.IOPS
		}
	}
	row.WALFsyncP99, row.BackendCommitP99, row.RequestP99 = loadP99s(r)
	if s := r.Server; s != nil {
		row.WALFsyncBound, row.BackendCommitBound = s.WALFsync.AtFloor(), s.BackendCommit.AtFloor()
	}
	if r.Bench != nil {
		row.Throughput = r.Bench.Throughput
	}
	if pf := r.Perf; pf != nil {
		row.TargetRate, row.ServerCPU, row.ClientCPU = pf.TargetRate, pf.ServerCPU, pf.ClientCPU
	}
	if r.Host != nil && r.Host.Device != "" {
		row.DeviceUtil = r.Host.Summary.Util
	}
	row.FsyncHeadroom = fsyncHeadroom(r, *row)
	if c := r.Capacity; c != nil {
		row.Capacity, row.CapacityCause = c.PutsPerS, c.Cause
	}
}

// fsyncHeadroom is the WAL fsync limit over the fsync p99 etcd would see:
// etcd's own under the load when its histogram could resolve it, else
// (a p99 in etcd's lowest bucket is only a bound) the probe's fdatasync
// p99, else etcd's 1ms floor (a lower bound).
func fsyncHeadroom(r *result.Result, row result.DoctorTarget) float64 {
	limit := diagnose.LimitOf(r, limits.WALFsyncP99)
	if _, ok := diagnose.FindCheck(r, limits.WALFsyncP99); !ok {
		if c, ok := diagnose.FindCheck(r, limits.DiskSyncP99); ok {
			limit = c.Limit
		}
	}
	v := row.WALFsyncP99
	if v <= 0 || (row.WALFsyncBound && row.DiskSyncP99 > 0) {
		v = row.DiskSyncP99
	}
	if v <= 0 {
		return 0
	}
	return limit / v
}

// sweepCause is the cause the head names, one with the capacity sweep's:
// where one load's figures name the disk, or the storage below the device
// (the cap or the disk behind it), and the sweep's steps show a cap (the
// writes fast below a ceiling, queued at it), the cap.
func sweepCause(c *result.Capacity, head result.Cause) result.Cause {
	if c == nil || c.Cause != result.CauseIOPSCap && c.Cause != result.CauseIOPSCapOrCPU {
		return head
	}
	if head == result.CauseDisk || head == result.CauseDiskOrIOPSCap {
		return c.Cause
	}
	return head
}

// sweepWords says, when the capacity sweep or the soak judged something
// other than what the head follows, which the head follows and why.
func sweepWords(r *result.Result, t result.DoctorTarget) string {
	var out []string
	named := func(c result.Cause) bool { return c != result.CauseNone && c != "" }
	if c := r.Capacity; c != nil && len(c.Steps) > 0 && named(c.Cause) && named(t.LimitedBy) {
		if load := diagnose.DoctorLimitedBy(r); load != t.LimitedBy {
			out = append(out, fmt.Sprintf("the load's figures name %s; the capacity sweep's steps, fast below a ceiling and queued at it, show %s",
				load.Info().Noun, c.Cause.Info().Noun))
		} else if c.Cause != t.LimitedBy {
			out = append(out, fmt.Sprintf("the verdict follows the load at %s puts/s; at the capacity sweep's knee %s limits it",
				units.Thousands(c.Steps[0].Offered), c.Cause.Info().Noun))
		}
	}
	if c := r.Capacity; c != nil && len(c.Steps) > 0 && r.Bench != nil && c.DBSize == 0 && c.CompactionSeconds > 0 && c.PutsPerS < c.Steps[0].Offered && len(c.Steps[0].Broke) == 0 {
		out = append(out, fmt.Sprintf("the verdict's load held %s puts/s writing new keys and keeping its history (as etcdctl check perf); "+
			"writing over the same keys with the history compacted every %s, as a cluster's updates are, the capacity sweep held %s: "+
			"the storage carries the second",
			units.Thousands(c.Steps[0].Offered), units.Seconds(c.CompactionSeconds), units.Thousands(c.PutsPerS)))
	}
	if s := r.Soak; s != nil && s.SustainedPutsPerS > 0 {
		w := fmt.Sprintf("offered %s puts/s for %s, it sustains %s", units.Thousands(s.Rate), units.Seconds(s.Seconds), s.SustainedWords())
		if len(s.Broke) > 0 && overLimits(r.Checks) == "" {
			// The head's figures held: they are not what failed.
			held := "the disk probe's"
			if t.TargetRate > 0 {
				held = fmt.Sprintf("the load's, at %s puts/s", units.Thousands(t.TargetRate))
			}
			w += fmt.Sprintf(" (the figures before are %s, which held their limits: the verdict follows the soak)", held)
		}
		out = append(out, w)
	}
	if len(out) == 0 {
		return ""
	}
	return "; " + strings.Join(out, "; ")
}

// targetSummary says in one sentence what a doctor target's run means.
func targetSummary(r *result.Result) string {
	t := r.Doctor.Targets[0]
	head := verdictHead(r.Verdict, t)
	warned := warnedBy(r, t)
	if warned != "" {
		// No limit of etcd's writes explains the warning: the head says
		// they passed, and which finding warns.
		head = subject(t) + " is fast enough for etcd's writes"
	}
	if strings.HasSuffix(t.Name, " + noise") {
		head = "with a neighbour writing bulk data on the device: " + head
	}
	figs := targetFigures(r, t)
	if len(figs) > 0 {
		head += " (" + strings.Join(figs, ", ") + ")"
	}
	return head + sweepWords(r, t) + warned + "."
}

// subject names what a target judged: "this storage", or "this cluster"
// when doctor reached one.
func subject(t result.DoctorTarget) string {
	if t.Dir == "" {
		return "this cluster"
	}
	return "this storage"
}

// warnedBy is what a warning that no limit of etcd's writes explains
// says, for the verdict's head: the first warning finding's title, and
// how many more there are ("; but ..."). It is "" unless the target
// warned with every check passed and no cause named (the cause table's
// Tight head then says what limits etcd).
func warnedBy(r *result.Result, t result.DoctorTarget) string {
	if r.Verdict != result.Warn || t.Volatile || t.LimitedBy.Info().Tight != "" {
		return ""
	}
	for _, c := range r.Checks {
		if c.Status != result.StatusPass {
			return ""
		}
	}
	var titles []string
	for _, f := range r.Findings {
		if f.Severity == result.Warning {
			titles = append(titles, f.Title)
		}
	}
	if len(titles) == 0 {
		return ""
	}
	s := "; but " + lowerFirst(titles[0])
	if n := len(titles) - 1; n > 0 {
		s += fmt.Sprintf(" (and %d more warning(s) below)", n)
	}
	return s
}

// lowerFirst lowers a sentence's first letter unless it starts a name in
// capitals ("WAL").
func lowerFirst(s string) string {
	if len(s) < 2 || s[0] < 'A' || s[0] > 'Z' || (s[1] >= 'A' && s[1] <= 'Z') {
		return s
	}
	return string(s[0]+'a'-'A') + s[1:]
}

// verdictHead says what a target's verdict means, by what limits etcd
// (the cause table's heads).
func verdictHead(v result.Verdict, t result.DoctorTarget) string {
	what := subject(t)
	info := t.LimitedBy.Info()
	if t.Volatile {
		where := t.Dir
		if where == "" {
			where = "the members' data"
		}
		s := fmt.Sprintf("%s is on %s, in memory: fast but not durable (fsync never reaches a disk and the data is lost on reboot), for throw-away CI clusters only", where, t.FSType)
		if v == result.Fail {
			s += "; etcd still failed here"
			if info.Volatile != "" {
				s += ": " + info.Volatile
			}
		}
		return s
	}
	where := on(t)
	if t.LimitedBy == result.CauseNetwork {
		where = netOn(t)
	}
	switch v {
	case result.Fail:
		if t.LimitedBy == result.CauseDisk && t.Noise != nil && t.Noise.Verdict == result.Fail && t.FsyncHeadroom >= 1 {
			return what + " is fast enough for etcd alone, but not with a neighbour writing bulk data on the same device: the disk limits it under contention"
		}
		if info.Failed != "" {
			return fmt.Sprintf(info.Failed, what, where)
		}
		return "etcd fails on " + what
	case result.Warn:
		if info.Tight != "" {
			return fmt.Sprintf(info.Tight, what, where)
		}
		return "etcd runs on " + what + " with little headroom"
	}
	return what + " is fast enough for etcd"
}

// on names the members a limit was found on: " of etcdperf-3".
func on(t result.DoctorTarget) string {
	switch len(t.LimitedOn) {
	case 0:
		return ""
	case 1:
		return " of member " + t.LimitedOn[0]
	}
	return " of members " + strings.Join(t.LimitedOn, ", ")
}

// netOn is on for the network: to the members named, else between them.
func netOn(t result.DoctorTarget) string {
	if len(t.LimitedOn) == 0 {
		return " between the members"
	}
	return " to" + strings.TrimPrefix(on(t), " of")
}

// targetFigures are the figures behind a target's verdict.
func targetFigures(r *result.Result, t result.DoctorTarget) []string {
	var figs []string
	switch {
	case t.WALFsyncP99 > 0:
		figs = append(figs, "etcd's WAL fsync p99 "+quantile(r.Server.WALFsync, t.WALFsyncP99)+headroomText(t.FsyncHeadroom))
	case t.DiskSyncP99 > 0:
		figs = append(figs, "fdatasync p99 "+units.Seconds(t.DiskSyncP99)+headroomText(t.FsyncHeadroom))
	}
	if t.TargetRate > 0 {
		figs = append(figs, fmt.Sprintf("%.0f of %.0f puts/s, request p99 %s", t.Throughput, t.TargetRate, units.Seconds(t.RequestP99)))
	}
	if r.Host != nil && r.Host.Device != "" && r.Perf != nil {
		figs = append(figs, fmt.Sprintf("device %s busy %.0f%% of the time", r.Host.Device, t.DeviceUtil*100))
	}
	if pf := r.Perf; pf != nil && pf.ServerCPU > 0 {
		figs = append(figs, fmt.Sprintf("etcd used %s CPU", units.Cores(pf.ServerCPU)))
	}
	if n := t.Noise; n != nil && n.WALFsyncRatio > 0 {
		figs = append(figs, fmt.Sprintf("with a neighbour's bulk writes WAL fsync p99 %s (%.1fx), request p99 %s (%.1fx)",
			units.Seconds(n.WALFsyncP99), n.WALFsyncRatio, units.Seconds(n.RequestP99), n.RequestRatio))
	}
	return figs
}

// headroomText says how far a fsync p99 is from its limit.
func headroomText(h float64) string {
	if h <= 0 {
		return ""
	}
	return ", " + units.Headroom(h, "the limit")
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
		case t.LimitedBy != "" && t.LimitedBy != result.CauseNone:
			s += " (limited by " + t.LimitedBy.Info().Noun + ")"
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
	s := fmt.Sprintf("%s's %s is %s, %s lower than %s's %s", b.Name, what, units.Seconds(fsync(b)), units.Ratio(fsync(w)/fsync(b)), w.Name, units.Seconds(fsync(w)))
	if b.RequestP99 > 0 && w.RequestP99 > 0 {
		s += fmt.Sprintf("; request p99 %s against %s", units.Seconds(b.RequestP99), units.Seconds(w.RequestP99))
	}
	if b.Volatile {
		s += fmt.Sprintf(", but %s is %s: not durable", b.Name, b.FSType)
	}
	return s
}
