package cli

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/capacity"
	"github.com/etcdperf/etcdperf/internal/k8s"
	"github.com/etcdperf/etcdperf/internal/kubescale"
	"github.com/etcdperf/etcdperf/internal/scale"
)

// givenFlags is a validate's "given by name" for a test: the flags named.
func givenFlags(names ...string) func(string) bool {
	return func(n string) bool { return slices.Contains(names, n) }
}

// wantUsage checks a validate's outcome: no error when want is empty,
// else a usage error of one line that says want.
func wantUsage(t *testing.T, name string, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Errorf("%s: want no error, got %v", name, err)
		}
		return
	}
	if err == nil {
		t.Errorf("%s: want a usage error with %q, got none", name, want)
		return
	}
	usage(t, err, want)
}

// TestDoctorValidate checks doctor's flags by their values alone, without
// cobra: each case changes the defaults and names the flags given.
func TestDoctorValidate(t *testing.T) {
	for _, c := range []struct {
		name    string
		set     func(*doctorFlags)
		given   []string
		reaches bool
		want    string
	}{
		{name: "defaults"},
		{name: "unknown load", set: func(f *doctorFlags) { f.load = "q" }, want: "q"},
		{name: "zero duration", set: func(f *doctorFlags) { f.duration = 0 }, given: []string{"duration"}, want: "--duration must be positive"},
		{name: "duration by default", set: func(f *doctorFlags) { f.duration = 0 }},
		{name: "negative probe", set: func(f *doctorFlags) { f.diskRuntime = -time.Second }, want: "--disk-runtime cannot be negative"},
		{name: "no probe, any size", set: func(f *doctorFlags) { f.diskRuntime, f.diskSize = 0, 1 }},
		{name: "probe smaller than a block", set: func(f *doctorFlags) { f.diskSize = 1024 }, want: "give it at least one"},
		{name: "negative demand", set: func(f *doctorFlags) { f.demand = -1 }, want: "--demand must be a positive rate"},
		{name: "demand twice", set: func(f *doctorFlags) { f.demand, f.demandFrom = 10, "http://p:9090" }, given: []string{"demand"}, want: "not both"},
		{name: "demand-since alone", given: []string{"demand-since"}, want: "--demand-since is for --demand-from"},
		{name: "demand without a sweep", set: func(f *doctorFlags) { f.demand, f.capacity.on = 10, false }, want: "drop --capacity=false"},
		{name: "negative confirm", set: func(f *doctorFlags) { f.capacity.confirm = -time.Second }, want: "--capacity-confirm cannot be negative"},
		{name: "zero step", set: func(f *doctorFlags) { f.capacity.step = 0 }, want: "--capacity-step must be positive"},
		{name: "negative pace", set: func(f *doctorFlags) { f.diskRate = -1 }, want: "--disk-rate cannot be negative"},
		{name: "slow view too slow", set: func(f *doctorFlags) { f.slowDelay = 3 * time.Hour }, want: "--simulate-fsync-delay"},
		{name: "soak too short", set: func(f *doctorFlags) {
			f.capacity.soak.duration = 4 * time.Second
			f.capacity.soak.interval = capacity.DefaultSoakInterval
		},
			want: "shorter than three --soak-interval"},
		{name: "soak of nothing", set: func(f *doctorFlags) {
			f.capacity.on, f.capacity.soak.duration, f.capacity.soak.interval = false, time.Minute, capacity.DefaultSoakInterval
		}, given: []string{"capacity"}, want: "--soak-rate N"},
		// On a cluster the sweep runs only when --capacity is given by
		// name: a soak there needs its rate.
		{name: "soak on a cluster", set: func(f *doctorFlags) {
			f.capacity.soak.duration, f.capacity.soak.interval = time.Minute, capacity.DefaultSoakInterval
		},
			reaches: true, want: "--soak-rate N"},
		{name: "soak on a cluster swept", set: func(f *doctorFlags) {
			f.capacity.soak.duration, f.capacity.soak.interval = time.Minute, capacity.DefaultSoakInterval
		},
			given: []string{"capacity"}, reaches: true},
	} {
		f := defaultDoctorFlags()
		if c.set != nil {
			c.set(f)
		}
		wantUsage(t, c.name, f.validate(givenFlags(c.given...), c.reaches), c.want)
	}
}

func TestCheckValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(*checkPerfFlags)
		want string
	}{
		{name: "defaults"},
		{name: "unknown load", set: func(f *checkPerfFlags) { f.load = "xxl" }, want: "xxl"},
		{name: "zero duration", set: func(f *checkPerfFlags) { f.duration = 0 }, want: "--duration must be positive"},
		{name: "zero step", set: func(f *checkPerfFlags) { f.capacity.step = 0 }, want: "--capacity-step must be positive"},
		{name: "sweep under a prefix", set: func(f *checkPerfFlags) { f.capacity.on, f.prefix = true, "/mine/" }, want: "drop --prefix"},
		{name: "soak under a prefix", set: func(f *checkPerfFlags) { f.capacity.soak.duration, f.prefix = time.Minute, "/mine/" }, want: "drop --prefix"},
		{name: "prefix alone", set: func(f *checkPerfFlags) { f.prefix = "/mine/" }},
	} {
		f := &checkPerfFlags{checkFlags: &checkFlags{load: "s"}, duration: time.Minute, capacity: newCapacityFlags(false)}
		if c.set != nil {
			c.set(f)
		}
		wantUsage(t, c.name, f.validate(givenFlags()), c.want)
	}
}

func TestScaleValidate(t *testing.T) {
	for _, c := range []struct {
		name  string
		set   func(*scaleFlags)
		given []string
		want  string
	}{
		{name: "defaults"},
		{name: "an API server's flag", given: []string{"qps"}, want: "--qps applies through the API server"},
		{name: "unknown kind", set: func(f *scaleFlags) { f.objects = "dragons=10" }, want: "dragons"},
		{name: "bad size", set: func(f *scaleFlags) { f.sizes = []string{"pods=lots"} }, want: "lots"},
		{name: "no connection", set: func(f *scaleFlags) { f.o.Conns = 0 }, want: "--conns must be at least 1"},
		{name: "no page", set: func(f *scaleFlags) { f.o.PageLimit = 0 }, want: "--page-limit must be at least 1"},
		// Through the API server: etcd's own flags are refused, the API
		// server's checked.
		{name: "through the API server", set: throughAPIServer},
		{name: "etcd's flag through the API server", set: throughAPIServer, given: []string{"conns"}, want: "--conns does not apply through the API server"},
		{name: "no burst", set: func(f *scaleFlags) { throughAPIServer(f); f.o.Kube.Burst = 0 }, given: []string{"burst"}, want: "--burst at least 1"},
		{name: "root without node", set: throughAPIServer, given: []string{"root"}, want: "--root is for --node"},
		{name: "unknown resource", set: func(f *scaleFlags) { throughAPIServer(f); f.objects = "dragons=3" }, given: []string{"objects"}, want: "dragons"},
	} {
		f := &scaleFlags{objects: scale.DefaultObjects}
		f.o.Conns, f.o.PageLimit = 1, scale.DefaultPageLimit
		if c.set != nil {
			c.set(f)
		}
		err := f.validate(givenFlags(c.given...))
		wantUsage(t, c.name, err, c.want)
		if err == nil && len(f.o.Counts) == 0 && len(f.o.Kube.Counts) == 0 {
			t.Errorf("%s: validate set no objects to write", c.name)
		}
	}
	// Through the API server, the flags shared with a run on etcd take
	// the API server's defaults unless given by name.
	f := &scaleFlags{objects: scale.DefaultObjects}
	f.o.Steps, f.o.Clients, f.o.UpdateRate = scale.DefaultSteps, scale.DefaultClients, 100
	throughAPIServer(f)
	if err := f.validate(givenFlags()); err != nil || f.o.Kube.Steps != kubescale.DefaultSteps || f.o.Kube.Clients != kubescale.DefaultClients ||
		f.o.Kube.UpdateRate != kubescale.DefaultUpdateRate || len(f.o.Kube.Counts) == 0 {
		t.Errorf("defaults through the API server: %+v, %v", f.o.Kube, err)
	}
	f.o.Steps = 3
	if err := f.validate(givenFlags("steps")); err != nil || f.o.Kube.Steps != 3 {
		t.Errorf("--steps 3 through the API server: %d steps, %v", f.o.Kube.Steps, err)
	}
}

// throughAPIServer points a scale run at an API server.
func throughAPIServer(f *scaleFlags) {
	f.o.Kube.Conn.Server, f.o.Kube.QPS, f.o.Kube.Burst = "https://127.0.0.1:6443", kubescale.DefaultQPS, kubescale.DefaultBurst
}

func TestManifestValidate(t *testing.T) {
	for _, c := range []struct {
		name  string
		set   func(*manifestFlags)
		given []string
		args  []string
		want  string
		// deadline, when set, is the Job's deadline validate leaves.
		deadline time.Duration
	}{
		{name: "defaults", deadline: k8s.DefaultDeadline},
		{name: "ttl 0", given: []string{"ttl"}, want: "--ttl 0 would delete the Job"},
		{name: "deadline 0", set: func(f *manifestFlags) { f.o.Deadline = 0 }, given: []string{"deadline"}, want: "--deadline 0 would let a pod"},
		{name: "bad requests", set: func(f *manifestFlags) { f.requests = "cpu" }, want: "--requests"},
		{name: "disk's arguments", args: []string{"--runtime", "30s"}},
		{name: "disk's unknown flag", args: []string{"--soak", "1m"}, want: "are for 'etcdperf disk'"},
		{name: "doctor's soak lengthens the deadline", set: func(f *manifestFlags) { f.mode = "doctor" }, args: []string{"--soak", "20m"},
			deadline: k8s.DefaultDeadline + 20*time.Minute},
		{name: "doctor's flags by their values", set: func(f *manifestFlags) { f.mode = "doctor" }, args: []string{"--duration", "0s"},
			want: "--duration must be positive"},
		{name: "deadline under the soak", set: func(f *manifestFlags) { f.mode, f.o.Deadline = "doctor", 10*time.Minute }, given: []string{"deadline"},
			args: []string{"--soak", "20m"}, want: "ends the Job before doctor's --soak"},
	} {
		f := &manifestFlags{mode: string(k8s.ModeDisk)}
		f.o.TTL, f.o.Deadline = 0, k8s.DefaultDeadline
		if c.set != nil {
			c.set(f)
		}
		err := f.validate(givenFlags(c.given...), c.args)
		wantUsage(t, c.name, err, c.want)
		if c.deadline > 0 && f.o.Deadline != c.deadline {
			t.Errorf("%s: the Job's deadline is %s, want %s", c.name, f.o.Deadline, c.deadline)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %q is not one line", c.name, err)
		}
	}
}

func TestLogsOptions(t *testing.T) {
	now := time.Date(2026, 11, 23, 22, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name  string
		set   func(*logsFlags)
		paths []string
		csv   bool
		want  string
		// events is how many events the Result lists, when no error.
		events int
	}{
		{name: "defaults", paths: []string{"etcd.log"}, events: defaultMaxEvents},
		{name: "a CSV lists more", paths: []string{"etcd.log"}, csv: true, events: defaultMaxEventsCSV},
		{name: "--max-events given", set: func(f *logsFlags) { f.maxEvents = 5 }, paths: []string{"-"}, csv: true, events: 5},
		{name: "no input", want: "give the log files"},
		{name: "bucket under a second", set: func(f *logsFlags) { f.bucket = time.Millisecond }, paths: []string{"-"}, want: "--bucket 1ms is too small"},
		{name: "top 0", set: func(f *logsFlags) { f.top = 0 }, paths: []string{"-"}, want: "--top must be between 1 and 1000"},
		{name: "unknown zone", set: func(f *logsFlags) { f.tz = "Mars/Olympus" }, paths: []string{"-"}, want: "--timezone"},
		{name: "bad since", set: func(f *logsFlags) { f.since = "yesterday-ish" }, paths: []string{"-"}, want: "--since"},
		{name: "until before since", set: func(f *logsFlags) { f.since, f.until = "-1h", "-2h" }, paths: []string{"-"}, want: "is not after --since"},
		{name: "bad limit", set: func(f *logsFlags) { f.overrides = []string{"leader_changes_15m=soon"} }, paths: []string{"-"}, want: "leader_changes_15m"},
	} {
		f := &logsFlags{bucket: time.Hour, top: 10, maxEvents: -1, tz: "UTC"}
		if c.set != nil {
			c.set(f)
		}
		o, err := f.options(c.paths, c.csv, now)
		wantUsage(t, c.name, err, c.want)
		if err == nil && (o.Scan.Summary.MaxEvents != c.events || len(o.Paths) != len(c.paths) || o.Criteria == nil) {
			t.Errorf("%s: %d events, paths %v, criteria %d; want %d events", c.name, o.Scan.Summary.MaxEvents, o.Paths, len(o.Criteria), c.events)
		}
	}
}

func TestValidateWatch(t *testing.T) {
	for _, c := range []struct {
		interval, duration time.Duration
		want               string
	}{
		{5 * time.Second, time.Minute, ""},
		{5 * time.Second, 0, ""}, // until Ctrl-C
		{10 * time.Millisecond, time.Minute, "--interval 10ms is too short"},
		{5 * time.Second, -time.Second, "--duration cannot be negative"},
		{5 * time.Second, 2 * time.Second, "no interval would end"},
	} {
		wantUsage(t, fmt.Sprintf("--interval %s --duration %s", c.interval, c.duration), validateWatch(c.interval, c.duration), c.want)
	}
}
