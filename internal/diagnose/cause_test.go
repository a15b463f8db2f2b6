package diagnose

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
)

// member is one member of a metrics Result: its WAL fsync p99 over the run
// and its process (nil: it runs elsewhere).
type member struct {
	wal  float64
	proc *result.MemberProcess
}

// metricsOf is a metrics Result of members m1, m2, m3, judged as Metrics
// judges it (the worst member per check), with the peers' round trips.
func metricsOf(ms []member, rtts []result.PeerRTT) *result.Result {
	r := result.New("metrics")
	r.Metrics = &result.Metrics{PeerRTTs: rtts}
	worst := 0.0
	for i, m := range ms {
		name := "m" + string(rune('1'+i))
		mm := result.MetricsMember{Name: name, Overall: &result.MetricsSignals{Seconds: 10,
			WALFsync: &result.Latency{Count: 2000, P99: m.wal}, BackendCommit: &result.Latency{Count: 300, P99: 0.004}}}
		if m.proc != nil {
			p := *m.proc
			p.Name = name
			mm.Process = &p
		}
		r.Metrics.Members = append(r.Metrics.Members, mm)
		worst = max(worst, m.wal)
	}
	c, _ := limits.Lookup(limits.Table, limits.WALFsyncP99)
	r.Checks = append(r.Checks, limits.Evaluate(c, worst))
	return r
}

// causes are the findings that blame something, as cause: members.
func causes(fs []result.Finding) map[result.Cause]string {
	out := map[result.Cause]string{}
	for _, f := range fs {
		if f.Cause != "" {
			out[f.Cause] = strings.Join(f.Members, ",")
		}
	}
	return out
}

// slowTo are round trips that take 200ms to m3 and 2ms elsewhere.
var slowTo = []result.PeerRTT{{From: "m1", To: "m2", Mean: 0.002, Count: 2}, {From: "m1", To: "m3", Mean: 0.2, Count: 2},
	{From: "m2", To: "m1", Mean: 0.002, Count: 2}, {From: "m2", To: "m3", Mean: 0.2, Count: 2},
	{From: "m3", To: "m1", Mean: 0.002, Count: 2}, {From: "m3", To: "m2", Mean: 0.002, Count: 2}}

func TestMemberCauses(t *testing.T) {
	fuse := proc(prompt, func(p *result.MemberProcess) {
		p.FSType, p.Device, p.DeviceFlushes, p.DeviceFlushAwait = "fuse.etcdperf-slowdisk", "", 0, 0
	})
	ok := member{0.003, prompt}
	cases := []struct {
		name string
		ms   []member
		rtts []result.PeerRTT
		want map[result.Cause]string
	}{
		{"healthy", []member{ok, ok, ok}, nil, map[result.Cause]string{}},
		{"one member throttled: its CPU, though its round trips are slow too",
			[]member{ok, ok, {0.15, throttled}}, slowTo, map[result.Cause]string{result.CauseCPU: "m3"}},
		{"one member on a slow storage without device statistics, its CPU prompt",
			[]member{ok, ok, {0.03, fuse}}, nil, map[result.Cause]string{result.CauseDisk: "m3"}},
		{"every member throttled",
			[]member{{0.1, throttled}, {0.2, throttled}, {0.12, throttled}}, nil, map[result.Cause]string{result.CauseCPU: "m1,m2,m3"}},
		{"every member throttled, one under its limits: named too, as the run failed",
			[]member{{0.1, throttled}, {0.2, throttled}, {0.005, throttled}}, nil, map[result.Cause]string{result.CauseCPU: "m1,m2,m3"}},
		{"a throttled member in a run within its limits: named (a warning), its late answers to its peers not blamed on the network",
			[]member{ok, ok, {0.005, throttled}}, slowTo, map[result.Cause]string{result.CauseCPU: "m3"}},
		{"a member waiting for the CPUs of a busy host, in a run within its limits: nothing named",
			[]member{ok, ok, {0.005, busyHost}}, nil, map[result.Cause]string{}},
		{"a throttled member in a failed run, its round trips slow: its CPU, not the network",
			[]member{{0.03, fuse}, ok, {0.005, throttled}}, slowTo, map[result.Cause]string{result.CauseDisk: "m1", result.CauseCPU: "m3"}},
		{"a slow member elsewhere: its disk or its CPU",
			[]member{ok, ok, {0.03, nil}}, nil, map[result.Cause]string{result.CauseDiskOrCPU: "m3"}},
		{"a slow link to one member", []member{ok, ok, ok}, slowTo, map[result.Cause]string{result.CauseNetwork: "m3"}},
		{"a slow link to a member elsewhere, with a fast fsync", []member{ok, ok, {0.002, nil}}, slowTo, map[result.Cause]string{result.CauseNetwork: "m3"}},
		{"one slow pair of two members names both", []member{ok, ok},
			[]result.PeerRTT{{From: "m1", To: "m2", Mean: 0.1, Count: 1}}, map[result.Cause]string{result.CauseNetwork: "m1,m2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := metricsOf(c.ms, c.rtts)
			fs := Run(r)
			got := causes(fs)
			if len(got) != len(c.want) {
				t.Errorf("causes %v, want %v", got, c.want)
			}
			for cause, who := range c.want {
				if got[cause] != who {
					t.Errorf("cause %s names %q, want %q (all %v)", cause, got[cause], who, got)
				}
			}
			for _, f := range fs {
				if f.Cause == "" {
					continue
				}
				if len(f.Evidence) == 0 || f.Recommendation == "" {
					t.Errorf("%s lacks evidence or advice", f.ID)
				}
				for _, m := range f.Members {
					if !strings.Contains(f.Title, m) {
						t.Errorf("%s names %s but its title does not: %s", f.ID, m, f.Title)
					}
				}
			}
		})
	}
}

// The evidence of a CPU verdict is the member's own process: its cgroup's
// throttling and its threads' wait, next to how fast its device flushed;
// a disk verdict says that the process got its CPU.
func TestMemberCauseEvidence(t *testing.T) {
	fs := Run(metricsOf([]member{{0.15, throttled}}, nil))
	i := slices.IndexFunc(fs, func(f result.Finding) bool { return f.ID == FindingMemberCPU })
	if i < 0 {
		t.Fatalf("no CPU finding: %+v", fs)
	}
	f := fs[i]
	var sources []string
	for _, e := range f.Evidence {
		sources = append(sources, e.Source)
	}
	all := strings.Join(sources, " ")
	for _, want := range []string{"cpu.stat", "schedstat", "/proc/diskstats"} {
		if !strings.Contains(all, want) {
			t.Errorf("CPU verdict without %s evidence: %v", want, sources)
		}
	}
	if !strings.Contains(f.Title, "throttled it in 100%") || !strings.Contains(f.Title, "limit 0.05 CPU") {
		t.Errorf("title %q", f.Title)
	}
	fs = Run(metricsOf([]member{{0.03, proc(prompt, func(p *result.MemberProcess) { p.DeviceFlushAwait = 0.01 })}}, nil))
	i = slices.IndexFunc(fs, func(f result.Finding) bool { return f.ID == FindingMemberDisk })
	if i < 0 || !strings.Contains(fs[i].Title, "got a CPU within 60µs") || !strings.Contains(fs[i].Title, "vda") {
		t.Errorf("disk finding %+v", fs)
	}
}

// busyHost is a member with no CPU limit of its own whose threads waited
// for the CPUs of a busy host.
var busyHost = proc(prompt, func(p *result.MemberProcess) { p.SchedWait, p.RunQueueWait, p.HostCPUBusy = 0.005, 3, 0.95 })

// Members waiting for a busy host's CPUs whose p99s stayed under their
// limits, in a run within its limits whose members stalled more than once
// (slow applies: etcd's apply loop ran late), are named as a warning; a
// single stall names nobody: a busy host makes one. A member that its own
// cgroup's CPU limit stopped is named as a warning, stall or not.
func TestStallsNameStarvedMembers(t *testing.T) {
	for _, c := range []struct {
		name    string
		proc    *result.MemberProcess
		applies float64
		want    map[result.Cause]string
		verdict result.Verdict
	}{
		{"slow applies recurring", busyHost, 4, map[result.Cause]string{result.CauseCPU: "m1,m2,m3"}, result.Warn},
		{"a single slow apply", busyHost, 1, map[result.Cause]string{}, result.Pass},
		{"no stall", busyHost, 0, map[result.Cause]string{}, result.Pass},
		{"no stall, throttled by their own limit", throttled, 0, map[result.Cause]string{result.CauseCPU: "m1,m2,m3"}, result.Warn},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := metricsOf([]member{{0.003, c.proc}, {0.003, c.proc}, {0.003, c.proc}}, nil)

			r.Metrics.Members[0].Overall.SlowApplies = c.applies
			fs := Run(r)
			if got := causes(fs); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("causes %v, want %v", got, c.want)
			}
			for _, f := range fs {
				if f.Cause != "" && f.Severity != result.Warning {
					t.Errorf("%s is %s in a run within its limits, want warn", f.ID, f.Severity)
				}
			}
			if v := Verdict(r.Checks, fs); v != c.verdict {
				t.Errorf("verdict %s, want %s", v, c.verdict)
			}
		})
	}
}
