package diagnose

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
)

// loadResult is a check's Result at profile s (50 clients, 150/s) that
// delivered the given rate: the client's and the server's view, the
// checks as JudgeCheck makes them.
type loadCase struct {
	reached, sent float64 // share of the rate answered, sent per second
	inFlight      float64 // mean requests waiting for etcd
	// lag and busyLag: a send's mean lag behind its schedule, and the
	// part of it with every client waiting for etcd (nil: not measured,
	// as in older Results).
	lag            float64
	busyLag        *float64
	serviceMean    float64
	clientCPU      float64 // cores of etcdperf
	clientOnly     bool
	serverCPU      float64 // cores of etcd
	cpuBusy        float64
	util, flush    float64 // device busy share, mean flush time
	volatile       bool
	wal, commit    float64 // etcd's p99s
	leaderChanges  float64
	peerRTT        float64
	dbSize, dbUsed float64
	quota          float64
	// proc is what this host's kernel said of the member's process (nil:
	// it runs elsewhere); rtts are the peers' round trips.
	proc *result.MemberProcess
	rtts []result.PeerRTT
}

func loadResult(c loadCase) *result.Result {
	r := result.New("check")
	r.Env = &result.Env{Dir: "/d", FSType: "ext4", Device: "vda"}
	if c.volatile {
		r.Env = &result.Env{Dir: "/dev/shm/x", FSType: "tmpfs", Volatile: true}
	}
	rate := 150.0
	r.Bench = &result.Bench{Ops: int64(c.reached * rate * 60), Seconds: 60, Throughput: c.reached * rate,
		Latency:        &result.Latency{Count: 1, P99: 0.01, Max: 0.05, Stddev: 0.002, Mean: c.serviceMean + 0.001},
		ServiceLatency: &result.Latency{Count: 1, Mean: c.serviceMean}}
	r.Perf = &result.Perf{Profile: "s", Clients: 50, TargetRate: rate, SentRate: c.sent, Reached: c.reached, InFlight: c.inFlight,
		ScheduleLag: max(c.lag, 0.001), BusyLag: c.busyLag, CPUs: 2, ClientCPU: c.clientCPU, ClientOnly: c.clientOnly, ServerCPU: c.serverCPU,
		Members: []result.PerfMember{{Name: "m0", PeerRTT: c.peerRTT, DBSize: c.dbSize, DBSizeInUse: c.dbUsed, Quota: c.quota}}}
	r.Host = &result.Host{Device: r.Env.Device, Summary: result.HostSample{CPUBusy: c.cpuBusy, Util: c.util, FlushIOPS: 100, FlushAwait: c.flush, WriteIOPS: 200, WriteAwait: c.flush}}
	r.Server = &result.Server{LeaderChanges: c.leaderChanges, WALFsync: &result.Latency{Count: 1000, P99: c.wal},
		BackendCommit: &result.Latency{Count: 100, P99: c.commit}, PeerRTTs: c.rtts}
	r.Target = &result.Target{Members: []result.TargetMember{{Name: "m0"}}}
	if c.proc != nil {
		p := *c.proc
		p.Name = "m0"
		r.Server.Processes = []result.MemberProcess{p}
	}
	eval := func(id string, v float64) {
		cr, _ := limits.Lookup(limits.Table, id)
		r.Checks = append(r.Checks, limits.Evaluate(cr, v))
	}
	eval(limits.Throughput, c.reached)
	eval(limits.WALFsyncP99, c.wal)
	eval(limits.BackendCommitP99, c.commit)
	eval(limits.LeaderChanges, c.leaderChanges)
	return r
}

// healthy is a run where nothing is near a limit.
var healthy = loadCase{reached: 1, sent: 150, inFlight: 0.3, serviceMean: 0.002, clientCPU: 0.1, clientOnly: true, serverCPU: 0.2,
	cpuBusy: 0.2, util: 0.1, flush: 0.0002, wal: 0.003, commit: 0.005}

// Member processes as the kernel of their host sees them.
var (
	// prompt got a CPU within 60µs, on a device that flushes in 0.2ms.
	prompt = &result.MemberProcess{Host: "h", PID: 7, Seconds: 10, CPU: 0.2, SchedWait: 60e-6, RunQueueWait: 0.2,
		WALDir: "/d/member/wal", FSType: "ext4", Device: "vda", DeviceFlushes: 100, DeviceFlushAwait: 0.0002}
	// throttled by a 0.05 CPU quota in every period.
	throttled = &result.MemberProcess{Host: "h", PID: 7, Seconds: 10, CPU: 0.049, CPULimit: 0.05, Cgroup: "/sys/fs/cgroup/cpu/x",
		Throttled: 1, ThrottledTime: 1.2, SchedWait: 0.005, RunQueueWait: 3,
		WALDir: "/d/member/wal", FSType: "ext4", Device: "vda", DeviceFlushes: 100, DeviceFlushAwait: 0.0002}
)

func proc(p *result.MemberProcess, f func(p *result.MemberProcess)) *result.MemberProcess {
	c := *p
	f(&c)
	return &c
}

func with(f func(c *loadCase)) loadCase {
	c := healthy
	f(&c)
	return c
}

func TestLoadAndDoctorLimits(t *testing.T) {
	cases := []struct {
		name       string
		c          loadCase
		load       result.Cause // LoadLimitedBy
		doctor     result.Cause // DoctorLimitedBy
		findings   map[string]result.Severity
		notFinding []string
	}{
		{name: "healthy", c: healthy, load: "", doctor: result.CauseNone, findings: map[string]result.Severity{}},
		{name: "etcd set the pace: all clients waiting, slow WAL",
			c: with(func(c *loadCase) {
				c.reached, c.sent, c.inFlight, c.serviceMean, c.wal, c.util, c.flush = 0.5, 76, 49.5, 0.65, 0.04, 0.95, 0.03
				c.proc = proc(prompt, func(p *result.MemberProcess) { p.DeviceFlushAwait = 0.03 })
			}),
			load: result.CauseServer, doctor: result.CauseDisk,
			findings: map[string]result.Severity{"etcd_too_slow_for_profile": result.Critical, FindingMemberDisk: result.Critical, "device_busy": result.Warning}},
		{name: "client process on all its cores",
			c:    with(func(c *loadCase) { c.reached, c.sent, c.inFlight, c.clientCPU = 0.6, 140, 45, 1.9 }),
			load: result.CauseClient, doctor: result.CauseClient,
			findings:   map[string]result.Severity{"client_saturated": result.Warning},
			notFinding: []string{"etcd_too_slow_for_profile"}},
		{name: "pacer behind its schedule with free clients",
			c:    with(func(c *loadCase) { c.reached, c.sent, c.inFlight = 0.5, 75, 3 }),
			load: result.CauseClient, doctor: result.CauseClient,
			findings: map[string]result.Severity{"client_saturated": result.Warning}},
		{name: "pacer behind its schedule, its lag its own (clients free)",
			c:    with(func(c *loadCase) { c.reached, c.sent, c.inFlight, c.lag, c.busyLag = 0.5, 75, 49, 2, ptr(0.1) }),
			load: result.CauseClient, doctor: result.CauseClient,
			findings: map[string]result.Severity{"client_saturated": result.Warning}},
		// A cluster that stalls for seconds now and then: every client
		// waits during a stall, all are free between them, so fewer than
		// 90% wait on average; the pacer waited for a free client during
		// most of the lag.
		{name: "stalling cluster: pacer behind, its lag spent with every client waiting",
			c: with(func(c *loadCase) {
				c.reached, c.sent, c.inFlight, c.serviceMean, c.lag, c.busyLag = 0.76, 115, 30, 0.26, 1.2, ptr(1.1)
			}),
			load: result.CauseServer, doctor: result.CauseEtcd,
			findings:   map[string]result.Severity{"etcd_too_slow_for_profile": result.Critical},
			notFinding: []string{"client_saturated"}},
		{name: "failed requests, not a slow pacer: sent the rate, answered half",
			c:    with(func(c *loadCase) { c.reached, c.sent, c.inFlight = 0.5, 150, 3 }),
			load: result.CauseServer, doctor: result.CauseEtcd,
			findings: map[string]result.Severity{"etcd_too_slow_for_profile": result.Critical}},
		{name: "saturated machine whose CPU went to the client",
			c: with(func(c *loadCase) {
				c.reached, c.sent, c.inFlight, c.cpuBusy, c.clientCPU, c.serverCPU = 0.7, 105, 48, 0.97, 1.1, 0.8
			}),
			load: result.CauseClient, doctor: result.CauseClient,
			findings: map[string]result.Severity{"client_saturated": result.Warning}},
		{name: "slow WAL fsync of a member throttled by its CPU limit, on a fast device",
			c:    with(func(c *loadCase) { c.wal, c.proc = 0.12, throttled }),
			load: "", doctor: result.CauseCPU,
			findings:   map[string]result.Severity{FindingMemberCPU: result.Critical},
			notFinding: []string{FindingMemberDisk}},
		{name: "slow WAL fsync of a member whose threads wait for a CPU (no limit)",
			c: with(func(c *loadCase) {
				c.wal, c.proc = 0.02, proc(prompt, func(p *result.MemberProcess) { p.SchedWait = 0.004 })
			}),
			load: "", doctor: result.CauseCPU,
			findings: map[string]result.Severity{FindingMemberCPU: result.Critical}},
		{name: "slow WAL fsync of a member that got its CPU promptly: the storage, also on a busy host",
			c: with(func(c *loadCase) {
				c.wal, c.cpuBusy, c.proc = 0.03, 0.97, proc(prompt, func(p *result.MemberProcess) { p.DeviceFlushAwait = 0.01 })
			}),
			load: "", doctor: result.CauseDisk,
			findings: map[string]result.Severity{FindingMemberDisk: result.Critical}},
		{name: "slow WAL fsync of a member with a prompt CPU on a fast device, on a saturated host: the host's CPU",
			c: with(func(c *loadCase) {
				c.wal, c.proc = 0.03, proc(prompt, func(p *result.MemberProcess) { p.HostCPUBusy = 0.97 })
			}),
			load: "", doctor: result.CauseCPU,
			findings: map[string]result.Severity{FindingMemberCPU: result.Critical}},
		{name: "slow WAL fsync on a slow device of a saturated host: the disk",
			c: with(func(c *loadCase) {
				c.wal, c.proc = 0.03, proc(prompt, func(p *result.MemberProcess) { p.HostCPUBusy, p.DeviceFlushAwait = 0.97, 0.01 })
			}),
			load: "", doctor: result.CauseDisk,
			findings: map[string]result.Severity{FindingMemberDisk: result.Critical}},
		{name: "slow WAL fsync, starved member on a slow device: both",
			c: with(func(c *loadCase) {
				c.wal, c.proc = 0.05, proc(throttled, func(p *result.MemberProcess) { p.DeviceFlushAwait = 0.02 })
			}),
			load: "", doctor: result.CauseDisk,
			findings: map[string]result.Severity{FindingMemberDisk: result.Critical, FindingMemberCPU: result.Critical}},
		{name: "slow WAL fsync of a member elsewhere: its disk or its CPU",
			c:    with(func(c *loadCase) { c.wal = 0.05 }),
			load: "", doctor: result.CauseDiskOrCPU,
			findings: map[string]result.Severity{FindingMemberDiskOrCPU: result.Critical}},
		{name: "slow backend commit in memory is never the disk",
			c: with(func(c *loadCase) {
				c.volatile, c.commit = true, 0.03
				c.proc = proc(prompt, func(p *result.MemberProcess) { p.FSType, p.Device, p.Volatile = "tmpfs", "", true })
			}),
			load: "", doctor: result.CauseCPU,
			findings: map[string]result.Severity{FindingMemberCPU: result.Critical}},
		// Near the limit is the check's to warn of: no cause is named
		// for a p99 under its limit (a healthy member's tail swings there
		// on a shared host).
		{name: "WAL fsync close to the limit",
			c:    with(func(c *loadCase) { c.wal, c.proc = 0.009, prompt }),
			load: "", doctor: result.CauseNone,
			findings: map[string]result.Severity{}, notFinding: []string{FindingMemberDisk}},
		{name: "device busy",
			c:    with(func(c *loadCase) { c.util = 0.9 }),
			load: "", doctor: result.CauseDisk,
			findings: map[string]result.Severity{"device_busy": result.Warning}},
		{name: "a busy host is no verdict when etcd kept its limits",
			c:    with(func(c *loadCase) { c.cpuBusy, c.serverCPU, c.proc = 0.99, 1.7, prompt }),
			load: "", doctor: result.CauseNone,
			findings: map[string]result.Severity{"host_cpu_saturated": result.Info}},
		{name: "leader changes",
			c:    with(func(c *loadCase) { c.leaderChanges = 2 }),
			load: "", doctor: result.CauseNetwork,
			findings: map[string]result.Severity{"leader_changes_under_load": result.Critical}},
		{name: "slow round trips to one member",
			c: with(func(c *loadCase) {
				c.rtts = []result.PeerRTT{{From: "m1", To: "m0", Mean: 0.2, Count: 2}, {From: "m2", To: "m0", Mean: 0.2, Count: 2},
					{From: "m0", To: "m1", Mean: 0.002, Count: 2}, {From: "m1", To: "m2", Mean: 0.002, Count: 2}}
			}),
			load: "", doctor: result.CauseNetwork,
			findings: map[string]result.Severity{FindingMemberNetwork: result.Warning}},
		{name: "database half full",
			c:    with(func(c *loadCase) { c.dbSize, c.dbUsed, c.quota = 1.2e9, 1.1e9, 2<<30 }),
			load: "", doctor: result.CauseNone,
			findings: map[string]result.Severity{}},
		{name: "database past db_quota_used",
			c:    with(func(c *loadCase) { c.dbSize, c.dbUsed, c.quota = 1.8e9, 1.7e9, 2<<30 }),
			load: "", doctor: result.CauseNone,
			findings: map[string]result.Severity{"db_near_quota": result.Warning}},
		{name: "database past db_quota_alarm",
			c:    with(func(c *loadCase) { c.dbSize, c.dbUsed, c.quota = 2.1e9, 2e9, 2<<30 }),
			load: "", doctor: result.CauseNone,
			findings: map[string]result.Severity{"db_near_quota": result.Critical}},
		{name: "fragmented database",
			c:    with(func(c *loadCase) { c.dbSize, c.dbUsed, c.quota = 800<<20, 100<<20, 8<<30 }),
			load: "", doctor: result.CauseNone,
			findings: map[string]result.Severity{"db_fragmented": result.Info}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := loadResult(c.c)
			if got := LoadLimitedBy(r); got != c.load {
				t.Errorf("LoadLimitedBy = %q, want %q", got, c.load)
			}
			fs := Run(r)
			r.Findings = fs
			if got := DoctorLimitedBy(r); got != c.doctor {
				t.Errorf("DoctorLimitedBy = %q, want %q", got, c.doctor)
			}
			got := ids(fs)
			for id, sev := range c.findings {
				if got[id] != sev {
					t.Errorf("finding %s: %q, want %q (all: %v)", id, got[id], sev, got)
				}
			}
			for _, id := range c.notFinding {
				if _, ok := got[id]; ok {
					t.Errorf("unexpected finding %s (all: %v)", id, got)
				}
			}
			// Only the expected rules of this file fire (the host rules
			// may add their CPU warning).
			for id := range got {
				if _, want := c.findings[id]; !want && id != "host_cpu_saturated" && id != "volatile_storage" {
					t.Errorf("unexpected finding %s", id)
				}
			}
			for _, f := range fs {
				if f.Title == "" || len(f.Evidence) == 0 || f.Recommendation == "" {
					t.Errorf("finding %s lacks a title, evidence or recommendation: %+v", f.ID, f)
				}
			}
		})
	}
}

func TestClientSaturatedSaysWhy(t *testing.T) {
	r := loadResult(with(func(c *loadCase) { c.reached, c.sent, c.inFlight, c.clientCPU = 0.6, 140, 45, 1.9 }))
	var f result.Finding
	for _, x := range Run(r) {
		if x.ID == "client_saturated" {
			f = x
		}
	}
	if !strings.Contains(f.Title, "not etcd") || !strings.Contains(f.Recommendation, "--endpoints") {
		t.Errorf("finding %+v", f)
	}
	if len(f.Evidence) == 0 || f.Evidence[0].Source != "getrusage" || f.Evidence[0].Observed != 0.95 {
		t.Errorf("evidence %+v, want etcdperf's CPU share 0.95 from getrusage", f.Evidence)
	}
}

// The rules of load checks leave a bench Result (no perf section) alone.
func TestLoadRulesNeedAPerfSection(t *testing.T) {
	r := loadResult(with(func(c *loadCase) { c.wal, c.util, c.leaderChanges = 0.05, 0.95, 3 }))
	r.Perf = nil
	for id := range ids(Run(r)) {
		if strings.HasPrefix(id, "etcd_") || id == "device_busy" || id == "leader_changes_under_load" {
			t.Errorf("bench Result got the check finding %s", id)
		}
	}
}

func doctorTarget(c loadCase, t result.DoctorTarget) *result.Result {
	r := loadResult(c)
	r.Doctor = &result.Doctor{Targets: []result.DoctorTarget{t}}
	return r
}

func TestDoctorRules(t *testing.T) {
	quiet := result.DoctorTarget{Name: "/d", Dir: "/d", WALFsyncP99: 0.003, RequestP99: 0.01}
	cases := []struct {
		name   string
		row    result.DoctorTarget
		want   map[string]result.Severity
		doctor result.Cause
	}{
		{"no noise", quiet, map[string]result.Severity{}, result.CauseNone},
		{"noise barely matters", func() result.DoctorTarget {
			q := quiet
			q.Noise = &result.NoiseEffect{WALFsyncP99: 0.004, WALFsyncRatio: 1.3, RequestP99: 0.012, RequestRatio: 1.2, Verdict: result.Pass}
			return q
		}(), map[string]result.Severity{}, result.CauseNone},
		{"noise doubles the fsync", func() result.DoctorTarget {
			q := quiet
			q.Noise = &result.NoiseEffect{BytesWritten: 1 << 30, WALFsyncP99: 0.007, WALFsyncRatio: 2.3, RequestP99: 0.03, RequestRatio: 3, Verdict: result.Pass}
			return q
		}(), map[string]result.Severity{"noise_degrades": result.Warning}, result.CauseNone},
		{"noise breaks the limit", func() result.DoctorTarget {
			q := quiet
			q.Noise = &result.NoiseEffect{BytesWritten: 1 << 30, WALFsyncP99: 0.125, WALFsyncRatio: 41, RequestP99: 0.3, RequestRatio: 30, DeviceUtil: 0.9, Verdict: result.Fail}
			return q
		}(), map[string]result.Severity{"noise_degrades": result.Critical}, result.CauseDisk},
		{"noise against a quiet p99 under etcd's 1ms floor", func() result.DoctorTarget {
			q := quiet
			q.WALFsyncP99, q.WALFsyncBound = 0.001, true
			q.Noise = &result.NoiseEffect{BytesWritten: 1 << 30, WALFsyncP99: 0.004, WALFsyncRatio: 4, RequestP99: 0.03, RequestRatio: 3, Verdict: result.Pass}
			return q
		}(), map[string]result.Severity{"noise_degrades": result.Warning}, result.CauseNone},
		{"simulated slow disk", func() result.DoctorTarget {
			q := quiet
			q.SimulatedFsyncDelay = 0.015
			return q
		}(), map[string]result.Severity{"simulated_slow_disk": result.Info}, result.CauseNone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := doctorTarget(healthy, c.row)
			fs := Run(r)
			got := ids(fs)
			for _, f := range fs {
				if f.ID == "noise_degrades" && c.row.WALFsyncBound && !strings.Contains(f.Title, "at least 4.0x slower (<= 1ms to 4ms)") {
					t.Errorf("a ratio to a bound is not said to be one: %s", f.Title)
				}
			}
			if len(got) != len(c.want) {
				t.Errorf("findings %v, want %v", got, c.want)
			}
			for id, sev := range c.want {
				if got[id] != sev {
					t.Errorf("finding %s: %q, want %q", id, got[id], sev)
				}
			}
			r.Findings = fs
			if d := DoctorLimitedBy(r); d != c.doctor {
				t.Errorf("DoctorLimitedBy = %q, want %q", d, c.doctor)
			}
		})
	}
	// A top-level doctor Result (several rows) gets no per-target finding.
	r := doctorTarget(healthy, quiet)
	noisy := quiet
	noisy.Noise = &result.NoiseEffect{WALFsyncP99: 0.2, WALFsyncRatio: 60, Verdict: result.Fail}
	r.Doctor.Targets = append(r.Doctor.Targets, noisy)
	if got := ids(Run(r)); len(got) != 0 {
		t.Errorf("findings on a Result with two targets: %v", got)
	}
}

// etcd_too_slow_for_profile's evidence names the throughput limit the run
// was judged by (--limit throughput=95%), not etcdctl's 90%.
func TestTooSlowForProfileUsesTheRunsLimit(t *testing.T) {
	r := loadResult(with(func(c *loadCase) { c.reached, c.sent, c.inFlight = 0.92, 150, 49 }))
	crit, err := limits.Override(limits.Table, []string{"throughput=95%"})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := limits.Lookup(crit, limits.Throughput)
	r.Checks[0] = limits.Evaluate(c, 0.92)
	for _, f := range Run(r) {
		if f.ID == "etcd_too_slow_for_profile" {
			if f.Evidence[0].Limit != 0.95 {
				t.Errorf("evidence %+v, want the limit 0.95 the run was judged by", f.Evidence[0])
			}
			return
		}
	}
	t.Errorf("findings %v, want etcd_too_slow_for_profile", ids(Run(r)))
}

func ptr(v float64) *float64 { return &v }

// bench_errors is critical from requests_failed of the requests (a tenth),
// and follows that level as --limit sets it.
func TestBenchErrorsLevel(t *testing.T) {
	r := &result.Result{Bench: &result.Bench{Ops: 880, Errors: map[string]int64{"etcdserver: request timed out": 120}}}
	sev := func(r *result.Result) result.Severity {
		for _, f := range benchErrors(r) {
			return f.Severity
		}
		return ""
	}
	if s := sev(r); s != result.Critical {
		t.Errorf("12%% failed: %s, want critical", s)
	}
	crit, err := limits.Override(limits.Table, []string{limits.RequestsFailed + "=20%"})
	if err != nil {
		t.Fatal(err)
	}
	r.Limits = limits.Changed(crit)
	if s := sev(r); s != result.Warning {
		t.Errorf("12%% failed with requests_failed=20%%: %s, want a warning", s)
	}
}
