package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/cgroup"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/netfault"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// The cause matrix: one 3-member cluster per fault, every command watching
// the same run, each asked what it saw. A row is a fault (on member 3, or
// on all), a column a command; a cell is the verdict, the cause the
// command names and the members it names. No cell may blame another
// cause. Where a command cannot see a fault, its cell says what the
// command says about that.

// matrixCommands are the columns, in the order of the fault matrix in docs/evidence.md.
var matrixCommands = []string{"doctor", "check", "metrics", "logs", "prom"}

// cell is what a command must say of a fault.
type cell struct {
	// verdict is what the command must conclude ("": more judges it).
	verdict result.Verdict
	// cause is the one cause the command names ("" for none), on members
	// (numbers of the cluster: 3 is etcdperf-3).
	cause   result.Cause
	members []int
	// someOf: the cause is named on some of members and on no other (a
	// history names the members whose p99 passed its limit; when every
	// member is starved, which of them did varies from run to run).
	someOf bool
	// orWarn: the verdict is fail when a check failed, warn when none did
	// (a member throttled by its own CPU limit is named either way; its
	// wait shows in etcd's histograms only when the stops fall inside
	// them).
	orWarn bool
	// orPass: a history may pass and name nobody when every member's own
	// p99s in it stayed under their limits (it has no process to look
	// at): a CPU fault whose stops fell outside etcd's histograms.
	orPass bool
	// more checks more of the Result.
	more func(t *testing.T, r *result.Result, c *matrixCluster)
}

type matrixCase struct {
	name string
	// faults are the members' faults (member 1 first).
	faults []lab.Fault
	tmpfs  bool
	// args are more arguments of a command (by column).
	args map[string][]string
	// needs says why the case cannot run here ("" when it can).
	needs func() error
	// cold skips the warm-up (every member is starved: nobody can take it).
	cold  bool
	cells map[string]cell
}

func all(f lab.Fault) []lab.Fault   { return []lab.Fault{f, f, f} }
func third(f lab.Fault) []lab.Fault { return []lab.Fault{{}, {}, f} }
func pass() cell                    { return cell{verdict: result.Pass} }
func blames(v result.Verdict, cause result.Cause, ms ...int) cell {
	return cell{verdict: v, cause: cause, members: ms}
}
func someOf(v result.Verdict, cause result.Cause, ms ...int) cell {
	return cell{verdict: v, cause: cause, members: ms, someOf: true}
}
func (c cell) failOrWarn() cell { c.verdict, c.orWarn = "", true; return c }
func (c cell) failOrPass() cell { c.verdict, c.orPass = "", true; return c }

// The faults: fsyncs 15ms slower (over etcd's 10ms WAL fsync limit); a
// CPU quota far under what the load (150 puts/s) needs, on one member or
// on all (at 0.1 CPU each, the leader sits at its limit and some runs pass
// no limit at all); 200ms more per round trip to one member's peer port
// (twice etcd's 100ms heartbeat interval).
var (
	slowDisk = lab.Fault{SlowFsync: 15 * time.Millisecond}
	starved  = lab.Fault{CPULimit: 0.05}
	slowLink = lab.Fault{PeerDelay: netfault.Delay{Latency: 200 * time.Millisecond}}
	// capped: the member's cgroup lets it write 150 times a second to its
	// disk (a blkio/io.max cap, as a volume's provisioned IOPS), under
	// what the load makes a member write: its fsyncs wait for the cap
	// while the device answers fast.
	capped = lab.Fault{IOPSLimit: 150}
	// volumeCapped: the member runs on a volume of its own (ext4 on a loop
	// device) whose writes to the disk below are capped at 300 IOPS, as a
	// cloud volume's provisioned IOPS: no cgroup of the member shows it,
	// and its device, as the host sees it, answers fast.
	volumeCapped = lab.Fault{VolumeIOPS: 300}
)

// matrixDuration is how long each command watches (and doctor and check
// load) the cluster.
const matrixDuration = 20 * time.Second

// matrixCluster is one case's cluster with what the commands need.
type matrixCluster struct {
	tg        *lab.Target
	endpoints string
	// names of the members by number (1-based), and the Prometheus
	// instance (host:port) of each.
	names, instances map[int]string
	logs             []string
	prom             *testutil.Prometheus
}

func (c *matrixCluster) memberNames(ns []int) []string {
	var out []string
	for _, n := range ns {
		out = append(out, c.names[n])
	}
	sort.Strings(out)
	return out
}

func TestCauseMatrix(t *testing.T) {
	if err := lab.SlowDiskSupported(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	if err := cgroup.Host.CanLimit(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	testutil.Binary(t)
	for _, mc := range matrixCases() {
		t.Run(mc.name, func(t *testing.T) { runMatrixCase(t, mc) })
	}
}

func matrixCases() []matrixCase {
	f, w, p := result.Fail, result.Warn, result.Pass
	disk, cpu, unsure, net := result.CauseDisk, result.CauseCPU, result.CauseDiskOrCPU, result.CauseNetwork
	iopsCap, belowDevice := result.CauseIOPSCap, result.CauseDiskOrIOPSCap
	// logs sees none of these faults: etcd logs an fdatasync only over 1s,
	// an apply only over 100ms; it says so.
	blind := cell{verdict: p, more: saysBlind}
	// A disk slower than 10ms leaves no fdatasync line, but requests that
	// waited for it over 100ms are logged as slow: the logs say they cannot
	// see, or warn of slow requests naming such a disk among the reasons.
	diskBlind := cell{verdict: "", more: blindOrSlow("a disk slower than 10ms")}
	// A starved member logs its slow applies, or its leader's raft loop
	// its late heartbeats: the logs name no cause, and say that it may be
	// the CPU; when it logged at most one such line (its stops fell
	// elsewhere), they say what they cannot see.
	starvedLogs := cell{verdict: "", more: blindOr(mayBeCPU)}
	// A slow link loses nothing etcd logs; a follower's linearizable read
	// that waited for it over 100ms is logged as a slow request.
	linkBlind := cell{verdict: "", more: blindOrSlow("slow link")}
	return []matrixCase{
		{name: "healthy", cells: map[string]cell{"doctor": pass(), "check": pass(), "metrics": pass(), "logs": blind, "prom": pass()}},
		{name: "disk slow on member 3", faults: third(slowDisk), args: map[string][]string{"metrics": atDefaults}, cells: map[string]cell{
			"doctor": blames(f, disk, 3), "check": blames(f, disk, 3), "metrics": timersKept(blames(f, disk, 3), 3), "logs": diskBlind, "prom": blames(f, unsure, 3)}},
		{name: "disk slow on all", faults: all(slowDisk), cells: map[string]cell{
			"doctor": blames(f, disk, 1, 2, 3), "check": blames(f, disk, 1, 2, 3), "metrics": blames(f, disk, 1, 2, 3), "logs": diskBlind, "prom": blames(f, unsure, 1, 2, 3)}},
		{name: "CPU starved on member 3", faults: third(starved), cells: map[string]cell{
			"doctor": blames(f, cpu, 3), "check": blames(f, cpu, 3), "metrics": blames(f, cpu, 3).failOrWarn(), "logs": starvedLogs, "prom": blames(f, unsure, 3).failOrPass()}},
		{name: "CPU starved on all", faults: all(starved), cold: true, cells: map[string]cell{
			"doctor": blames(f, cpu, 1, 2, 3), "check": blames(f, cpu, 1, 2, 3), "metrics": blames(f, cpu, 1, 2, 3).failOrWarn(), "logs": starvedLogs, "prom": someOf(f, unsure, 1, 2, 3).failOrPass()}},
		{name: "network slow to member 3", faults: third(slowLink), args: map[string][]string{"metrics": atDefaults, "prom": atDefaults}, cells: map[string]cell{
			"doctor": blames(f, net, 3), "check": blames(f, net, 3), "metrics": timersRaised(readIndexSlowOn(blames(w, net, 3), 3), 3), "logs": linkBlind,
			"prom": timersRaised(blames(w, net, 3), 3)}},
		{name: "iops cap on member 3", faults: third(capped), cells: map[string]cell{
			"doctor": blames(f, iopsCap, 3), "check": blames(f, iopsCap, 3), "metrics": blames(f, iopsCap, 3).failOrWarn(), "logs": diskBlind, "prom": blames(f, unsure, 3).failOrPass()}},
		// Without the volume's figures, the time is said to go below the
		// device (its cap or the storage behind it); with them stated
		// (--volume-iops), the cap is named.
		{name: "volume iops cap on member 3", faults: third(volumeCapped), needs: lab.VolumeSupported,
			args: map[string][]string{"check": {"--volume-iops", "300"}, "metrics": {"--volume-iops", "300"}},
			cells: map[string]cell{
				"doctor": blames(f, belowDevice, 3), "check": blames(f, iopsCap, 3), "metrics": blames(f, iopsCap, 3).failOrWarn(), "logs": diskBlind,
				"prom": blames(f, unsure, 3).failOrPass()}},
		{name: "tmpfs", tmpfs: true, cells: map[string]cell{
			"doctor": {verdict: w, more: volatile}, "check": {verdict: w, more: volatile}, "metrics": {verdict: w, more: volatile}, "logs": blind, "prom": pass()}},
	}
}

// atDefaults states etcd's default timers, which the members run with.
var atDefaults = []string{"--current-flag", "heartbeat-interval=100", "--current-flag", "election-timeout=1s"}

// timersRaised: the tuning raises the timers stated at etcd's defaults to
// the slow link's round trip (to member n): the heartbeat to about it, the
// election timeout to 10x it.
func timersRaised(c cell, n int) cell {
	more := c.more
	c.more = func(t *testing.T, r *result.Result, mc *matrixCluster) {
		if more != nil {
			more(t, r, mc)
		}
		rtts, who := []result.PeerRTT(nil), mc.names[n]
		switch {
		case r.Metrics != nil:
			rtts = r.Metrics.PeerRTTs
		case r.Prom != nil:
			rtts, who = r.Prom.PeerRTTs, mc.instances[n]
		}
		var slowest result.PeerRTT
		for _, p := range rtts {
			if p.Mean > slowest.Mean {
				slowest = p
			}
		}
		hb, el := tunedFlag(r, "heartbeat-interval"), tunedFlag(r, "election-timeout")
		if slowest.From != who && slowest.To != who || hb == nil || el == nil {
			t.Fatalf("%s: slowest round trip %+v, tuning %+v: want the link to %s and both timers", r.Kind, slowest, r.Tuning, who)
		}
		rtt := slowest.Mean * 1000
		if hb.Action != result.TuneChange || hb.Suggested < rtt || hb.Suggested > 1.5*rtt+50 || hb.Current != 100 {
			t.Errorf("%s: --heartbeat-interval %+v; want 100 raised to about the round trip (%.0fms)", r.Kind, hb, rtt)
		}
		if el.Action != result.TuneChange || el.Suggested < 10*rtt || el.Suggested != 10*hb.Suggested {
			t.Errorf("%s: --election-timeout %+v; want 1000 raised to 10x the heartbeat, at least 10x the round trip (%.0fms)", r.Kind, el, rtt)
		}
	}
	return c
}

// timersKept: member n's disk is named, its round trips are left out of
// the timers, and the defaults stated are kept.
func timersKept(c cell, n int) cell {
	more := c.more
	c.more = func(t *testing.T, r *result.Result, mc *matrixCluster) {
		if more != nil {
			more(t, r, mc)
		}
		hb, el := tunedFlag(r, "heartbeat-interval"), tunedFlag(r, "election-timeout")
		if hb == nil || el == nil || hb.Action != result.TuneKeep || el.Action != result.TuneKeep {
			t.Errorf("metrics: tuning %+v; want both timers kept at the defaults", r.Tuning)
		}
		if !strings.Contains(strings.Join(r.Tuning.Notes, " "), mc.names[n]+" (the disk)") {
			t.Errorf("metrics: tuning notes %q; want %s's disk named", r.Tuning.Notes, mc.names[n])
		}
	}
	return c
}

func tunedFlag(r *result.Result, name string) *result.TunedFlag {
	if r.Tuning == nil {
		return nil
	}
	for i := range r.Tuning.Flags {
		if r.Tuning.Flags[i].Name == name {
			return &r.Tuning.Flags[i]
		}
	}
	return nil
}

// readIndexSlowOn: the cluster's state names member n's linearizable
// reads slow at the leader's ReadIndex (its peer link is the slow one).
func readIndexSlowOn(c cell, n int) cell {
	c.more = func(t *testing.T, r *result.Result, mc *matrixCluster) {
		for _, f := range r.Findings {
			if f.ID == "cluster_read_index_slow" && strings.Contains(f.Title, "Linearizable reads at "+mc.names[n]) {
				return
			}
		}
		t.Errorf("metrics: no cluster_read_index_slow finding on %s: %+v", mc.names[n], r.Findings)
	}
	return c
}

// saysBlind: a logs run that found nothing says what etcd's logs cannot
// show.
func saysBlind(t *testing.T, r *result.Result, _ *matrixCluster) {
	if !strings.Contains(r.Summary, "leaves no line") {
		t.Errorf("logs: the summary does not say what the logs cannot show: %s", r.Summary)
	}
}

// logged: the logs name the finding id, whose title names what it may be.
func logged(id, may string) func(t *testing.T, r *result.Result, c *matrixCluster) {
	return func(t *testing.T, r *result.Result, _ *matrixCluster) {
		f, ok := findingOf(r, id)
		if !ok || !strings.Contains(f.Title, may) {
			t.Errorf("logs: no %s finding that says %q: %+v", id, may, r.Findings)
		}
	}
}

// mayBeCPU: the logs warn of what a starved member logs (slow requests, a
// blocked raft loop) and say that it may be the CPU.
func mayBeCPU(t *testing.T, r *result.Result, _ *matrixCluster) {
	for _, f := range r.Findings {
		if (f.ID == "logs_slow_requests" || f.ID == "logs_raft_loop_blocked") && strings.Contains(f.Title, "CPU") {
			return
		}
	}
	t.Errorf("logs: no finding of slow requests or a blocked raft loop that says it may be the CPU: %+v", r.Findings)
}

// blindOrSlow: the logs say nothing is wrong and what they cannot see,
// or warn of slow requests naming may among the reasons.
func blindOrSlow(may string) func(t *testing.T, r *result.Result, c *matrixCluster) {
	return blindOr(logged("logs_slow_requests", may))
}

// blindOr: the logs say nothing is wrong and what they cannot see, or
// warn as warned says.
func blindOr(warned func(t *testing.T, r *result.Result, c *matrixCluster)) func(t *testing.T, r *result.Result, c *matrixCluster) {
	return func(t *testing.T, r *result.Result, c *matrixCluster) {
		switch r.Verdict {
		case result.Pass:
			saysBlind(t, r, c)
		case result.Warn:
			warned(t, r, c)
		default:
			t.Errorf("logs: verdict %s on a fault it cannot see", r.Verdict)
		}
	}
}

// underLimits says whether every member of a history stayed under the
// WAL fsync and backend commit limits.
func underLimits(t *testing.T, r *result.Result) bool {
	if r.Prom == nil {
		return false
	}
	for _, m := range r.Prom.Members {
		for _, id := range []string{limits.WALFsyncP99, limits.BackendCommitP99} {
			c, ok := limits.Lookup(limits.Table, id)
			if !ok {
				t.Fatalf("no %s in the table", id)
			}
			if v, ok := m.Observed[id]; ok && v >= c.Limit {
				return false
			}
		}
	}
	return true
}

// volatile: the members' WAL in memory is said, as fast and not durable.
func volatile(t *testing.T, r *result.Result, c *matrixCluster) {
	f, ok := findingOf(r, "member_volatile")
	if !ok || len(f.Members) != 3 || !strings.Contains(f.Title, "tmpfs") {
		t.Errorf("%s: no member_volatile finding naming the 3 members on tmpfs: %+v", r.Kind, r.Findings)
	}
}

func runMatrixCase(t *testing.T, mc matrixCase) {
	if mc.needs != nil {
		if err := mc.needs(); err != nil {
			t.Skipf("skipped: %v", err)
		}
	}
	c := startMatrixCluster(t, mc)
	results := map[string]*result.Result{}
	var mu sync.Mutex
	// The commands, as the members, run above the rest of the machine's
	// work: a load generator starved by another build would be the
	// client's limit, which is not what the cases are about.
	run := func(name string, args ...string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		r := testutil.Wait(t, exec.CommandContext(ctx, "nice", append([]string{"-n", "-10", testutil.Binary(t)}, append(args, "-o", "json")...)...), ctx)
		if r.Code == 2 {
			t.Errorf("%s: exit 2: %s", name, r.Stderr)
			return
		}
		res := decodeResult(t, r.Stdout)
		if keep := os.Getenv("ETCDPERF_MATRIX_KEEP"); keep != "" {
			os.WriteFile(filepath.Join(keep, name+".json"), []byte(r.Stdout), 0o644)
		}
		mu.Lock()
		results[name] = res
		mu.Unlock()
	}
	// metrics and Prometheus watch while doctor, then check, load the
	// cluster with check perf's profile s (one load at a time: two would
	// be 300 puts/s of 1 KiB on one shared disk, more than a plain
	// directory here keeps under etcd's backend commit limit).
	start := time.Now().Truncate(time.Second)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		run("metrics", append([]string{"metrics", "--endpoints", c.endpoints, "--duration", (2*matrixDuration + time.Second).String()}, mc.args["metrics"]...)...)
	}()
	go func() {
		defer wg.Done()
		run("doctor", append([]string{"doctor", "--endpoints", c.endpoints, "--duration", matrixDuration.String(), "--no-report"}, mc.args["doctor"]...)...)
		run("check", append([]string{"check", "--endpoints", c.endpoints, "--duration", matrixDuration.String()}, mc.args["check"]...)...)
	}()
	wg.Wait()
	end := time.Now().Truncate(time.Second)
	// The logs as they are now, before the members stop.
	logDir := t.TempDir()
	var logs []string
	for i, l := range c.logs {
		b, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(logDir, c.names[i+1]+".log")
		os.WriteFile(p, b, 0o600)
		logs = append(logs, p)
	}
	run("logs", append([]string{"logs", "--since", start.Format(time.RFC3339)}, logs...)...)
	if os.Getenv("ETCDPERF_MATRIX_KEEP") != "" {
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			os.WriteFile(filepath.Join(os.Getenv("ETCDPERF_MATRIX_KEEP"), filepath.Base(l)), b, 0o644)
		}
	}
	// One evaluation point over the whole period: the windows of a short
	// period say nothing the period does not (they are tested with
	// TestPromAgainstEmbeddedEtcd).
	period := end.Sub(start).String()
	run("prom", append([]string{"prom", "check", "--url", c.prom.URL, "--start", start.Format(time.RFC3339), "--end", end.Format(time.RFC3339), "--step", period, "--window", period},
		mc.args["prom"]...)...)

	for _, cmd := range matrixCommands {
		res := results[cmd]
		if res == nil {
			continue
		}
		judged := res
		if cmd == "doctor" && len(res.Runs) == 1 {
			judged = &res.Runs[0]
		}
		t.Logf("%s: %s | causes %v | %s", cmd, res.Verdict, causesOf(judged), res.Summary)
		want, ok := mc.cells[cmd]
		if !ok {
			continue
		}
		if want.orWarn {
			want.verdict = result.Warn
			if slices.ContainsFunc(judged.Checks, func(c result.Check) bool { return c.Status == result.StatusFail }) {
				want.verdict = result.Fail
			}
		}
		if want.orPass && res.Verdict == result.Pass && underLimits(t, judged) {
			want = pass()
		}
		if want.verdict != "" && res.Verdict != want.verdict {
			t.Errorf("%s: verdict %s, want %s; findings:\n%s", cmd, res.Verdict, want.verdict, findingLines(judged))
		}
		got := causesOf(judged)
		wantCauses := map[result.Cause][]string{}
		if want.cause != "" {
			wantCauses[want.cause] = c.memberNames(want.members)
			if cmd == "prom" {
				wantCauses[want.cause] = instancesOf(c, want.members)
			}
		}
		if want.someOf && len(got) == 1 && len(got[want.cause]) > 0 && len(got[want.cause]) < len(wantCauses[want.cause]) &&
			!slices.ContainsFunc(got[want.cause], func(m string) bool { return !slices.Contains(wantCauses[want.cause], m) }) {
			got = wantCauses
		}
		if fmt.Sprint(got) != fmt.Sprint(wantCauses) {
			t.Errorf("%s: blames %v, want %v; findings:\n%s", cmd, got, wantCauses, findingLines(judged))
		}
		if want.more != nil {
			want.more(t, judged, c)
		}
	}
}

// causesOf is every cause a Result's findings name, with the members.
func causesOf(r *result.Result) map[result.Cause][]string {
	out := map[result.Cause][]string{}
	for _, f := range r.Findings {
		if f.Cause == "" {
			continue
		}
		ms := append(out[f.Cause], f.Members...)
		sort.Strings(ms)
		out[f.Cause] = slices.Compact(ms)
	}
	return out
}

func instancesOf(c *matrixCluster, ns []int) []string {
	var out []string
	for _, n := range ns {
		out = append(out, c.instances[n])
	}
	sort.Strings(out)
	return out
}

func findingLines(r *result.Result) string {
	var b strings.Builder
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "  [%s] %s (%s %v): %s\n", f.Severity, f.ID, f.Cause, f.Members, f.Title)
	}
	return b.String()
}

// startMatrixCluster starts the case's 3 members on a plain directory (or
// tmpfs), a Prometheus that scrapes them every second, and waits until
// every member has recorded a round trip to its peers (etcd's first after
// 5s).
func startMatrixCluster(t *testing.T, mc matrixCase) *matrixCluster {
	t.Helper()
	// The members' data is on a disk with time to spare (ext4 on a loop
	// device in memory): a member without a fault is then healthy however
	// busy the machine's own disk is, and a slow disk is the fault's.
	var dir string
	if mc.tmpfs {
		dir = testutil.MountTmpfs(t, "512m", false)
	} else {
		dir = testutil.MountQuietDisk(t, "1G")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The members run above the rest of the machine's work (nice -10), as
	// etcd's hardware guide has it run on CPUs of its own: a healthy member
	// must not be starved by the tests running beside this one. A CPU
	// quota still holds whatever the priority.
	tg, err := lab.Open(ctx, lab.TargetOptions{DataDir: dir, RunID: "matrix", Members: 3, Faults: mc.faults,
		StartTimeout: time.Minute, ServerCommand: []string{"nice", "-n", "-10", testutil.Binary(t), "server"}})
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	t.Cleanup(func() {
		if err := tg.Close(); err != nil {
			t.Error(err)
		}
		assertEmptyDir(t, dir)
	})
	c := &matrixCluster{tg: tg, names: map[int]string{}, instances: map[int]string{}}
	var eps, targets []string
	for _, m := range tg.Members() {
		var n int
		fmt.Sscanf(m.Name, "etcdperf-%d", &n)
		u, _ := url.Parse(m.ClientURL)
		c.names[n], c.instances[n] = m.Name, u.Host
		eps = append(eps, m.ClientURL)
		targets = append(targets, u.Host)
	}
	for n := 1; n <= 3; n++ {
		for _, m := range tg.Members() {
			if m.Name == c.names[n] {
				c.logs = append(c.logs, m.LogFile)
			}
		}
	}
	c.endpoints = strings.Join(eps, ",")
	leadFromMember1(t, tg, c.names[1])
	if !mc.cold {
		warmUp(t, tg, c.names[1])
	}
	c.prom = testutil.StartPrometheus(t, testutil.PrometheusOptions{Jobs: map[string][]string{"etcd": targets}})
	c.prom.WaitFor(t, 30*time.Second, `count(etcd_server_has_leader)`, func(m map[string]float64) bool { return m[""] == 3 })
	time.Sleep(time.Until(started.Add(6 * time.Second)))
	return c
}

// leadFromMember1 makes member 1 (which no single-member fault touches)
// the leader: a fault on a follower is what the cases are about (a slow
// leader slows every write, a slow follower only the requests it serves).
func leadFromMember1(t *testing.T, tg *lab.Target, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tg.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	leader, _ := tg.Leader()
	if leader.Name == name {
		return
	}
	var id uint64
	for _, m := range tg.Members() {
		if m.Name == name {
			id = m.ID
		}
	}
	cli, err := tg.Client().NewConn(ctx, leader.ClientURL)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.MoveLeader(ctx, id); err != nil {
		t.Fatalf("move the leader from %s to %s: %v", leader.Name, name, err)
	}
}

// warmUp writes and deletes 4,000 values of 1 KiB through member 1 and
// compacts: the members' databases then hold free pages that the
// measured load reuses. A fresh bbolt file grows into a sparse region,
// and on ext4 each commit that first writes there waits for the journal
// to allocate blocks: tens of milliseconds on this kind of virtual disk,
// enough to pass etcd's 25ms backend commit limit on a healthy member.
// Established clusters do not do that; the cases measure one.
func warmUp(t *testing.T, tg *lab.Target, name string) {
	t.Helper()
	var ep string
	for _, m := range tg.Members() {
		if m.Name == name {
			ep = m.ClientURL
		}
	}
	r := testutil.RunBinary(t, time.Minute, "bench", "put", "--endpoints", ep, "--total", "4000", "--val-size", "1024",
		"--clients", "16", "--conns", "2", "--compact", "-o", "json")
	if r.Code == 2 {
		t.Fatalf("warm-up: exit %d: %s", r.Code, r.Stderr)
	}
}
