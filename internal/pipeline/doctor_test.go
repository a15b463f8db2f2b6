package pipeline

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/diskprobe"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/noise"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

func doctorOptions(t *testing.T, dirs ...string) DoctorOptions {
	return DoctorOptions{
		DataDirs: dirs, Profile: profileOf(t, "s"), Duration: 2 * time.Second,
		Disk: diskprobe.Options{BlockSize: diskprobe.DefaultBlockSize, Size: 1 << 20, Runtime: time.Second,
			Prealloc: true, Sync: diskprobe.SyncFdatasync, RW: diskprobe.Sequential, Jobs: 1},
		Criteria: limits.Table, ServerCommand: serverCommand(t), Progress: &DoctorProgress{},
	}
}

// The probe, the load and the same load under a neighbour's bulk writes,
// in one location; nothing is left behind.
func TestDoctorWithNoise(t *testing.T) {
	dir := t.TempDir()
	o := doctorOptions(t, dir)
	o.Noise, o.NoiseOptions = true, noise.Options{FileSize: 16 << 20}
	res, err := Doctor(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	sameTextReadBack(t, res)
	if res.Kind != result.KindDoctor || len(res.Runs) != 1 || len(res.Doctor.Targets) != 1 || res.Summary == "" || res.Verdict == "" {
		t.Fatalf("doctor %+v", res)
	}
	run := res.Runs[0]
	row := res.Doctor.Targets[0]
	if run.Name != dir || row.Name != dir || row.Dir != dir || run.Doctor == nil || !reflect.DeepEqual(run.Doctor.Targets[0], row) {
		t.Errorf("run %q, row %+v", run.Name, row)
	}
	if run.Disk == nil || run.Bench == nil || run.Server == nil || run.Perf == nil || run.Host == nil || run.Env.Dir != dir {
		t.Fatalf("sections: disk %v bench %v server %v perf %v host %v", run.Disk != nil, run.Bench != nil, run.Server != nil, run.Perf != nil, run.Host != nil)
	}
	names := map[string]bool{}
	for _, c := range run.Checks {
		names[c.Name] = true
	}
	for _, want := range append([]string{limits.DiskSyncP99, limits.DiskIOPS}, checkNames...) {
		if !names[want] {
			t.Errorf("no %s check among %v", want, names)
		}
	}
	if row.DiskSyncP99 != run.Disk.SyncLatency.P99 || row.WALFsyncP99 != run.Server.WALFsync.P99 || row.RequestP99 != run.Bench.Latency.P99 ||
		row.TargetRate != 150 || row.FsyncHeadroom <= 0 || row.LimitedBy == "" || row.Verdict != run.Verdict {
		t.Errorf("row %+v", row)
	}
	if len(run.Runs) != 1 || run.Runs[0].Name != dir+" + noise" || run.Runs[0].Bench == nil {
		t.Fatalf("the noisy run: %d runs", len(run.Runs))
	}
	n := row.Noise
	noisyWAL := run.Runs[0].Server.WALFsync.P99
	if n == nil || n.BytesWritten <= 0 || n.WALFsyncP99 != noisyWAL || n.WALFsyncRatio != noisyWAL/row.WALFsyncP99 || n.RequestRatio <= 0 {
		t.Errorf("noise effect %+v", n)
	}
	testutil.AssertEmptyDir(t, dir)
}

// Two locations, one after the other, side by side.
func TestDoctorTwoLocations(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	o := doctorOptions(t, a, b)
	o.Duration = time.Second
	res, err := Doctor(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 2 || len(res.Doctor.Targets) != 2 || res.Doctor.Targets[1].Name != b {
		t.Fatalf("%d runs, targets %+v", len(res.Runs), res.Doctor.Targets)
	}
	want := result.Worse(res.Runs[0].Verdict, res.Runs[1].Verdict)
	if res.Verdict != want || !strings.Contains(res.Summary, a) || !strings.Contains(res.Summary, b) {
		t.Errorf("verdict %s (want %s), summary %q", res.Verdict, want, res.Summary)
	}
	testutil.AssertEmptyDir(t, a)
	testutil.AssertEmptyDir(t, b)
}

// Ctrl-C during the load: the partial Result says so, and everything is
// cleaned up.
func TestDoctorInterrupted(t *testing.T) {
	dir := t.TempDir()
	o := doctorOptions(t, dir)
	o.Duration = time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			if _, kind, _ := o.Progress.Phase(); kind == PhaseLoad && o.Progress.Load.Done() > 50 {
				cancel()
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	res, err := Doctor(ctx, o)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if time.Since(start) > 30*time.Second {
		t.Errorf("took %s to stop", time.Since(start))
	}
	if res == nil || res.Error != "interrupted" || len(res.Runs) != 1 || res.Runs[0].Bench == nil || res.Runs[0].Error == "" {
		t.Fatalf("partial result %+v", res)
	}
	testutil.AssertEmptyDir(t, dir)
}

// An existing cluster: no probe without a --data-dir, the run named after
// the endpoints.
func TestDoctorExternal(t *testing.T) {
	ep, _ := external(t)
	o := doctorOptions(t)
	o.Conn, o.Duration = cluster.ConnOptions{Endpoints: []string{ep}}, time.Second
	res, err := Doctor(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	run := res.Runs[0]
	if len(res.Runs) != 1 || run.Name != "etcd at "+ep || run.Disk != nil || run.Target.Kind != lab.External || run.Perf == nil {
		t.Fatalf("run %q disk %v target %+v", run.Name, run.Disk, run.Target)
	}
	if !strings.Contains(res.Summary, "this cluster") {
		t.Errorf("summary %q", res.Summary)
	}
	o.DataDirs = []string{t.TempDir(), t.TempDir()}
	if _, err := Doctor(context.Background(), o); err == nil {
		t.Error("two --data-dir with --endpoints accepted")
	}
}

// TestDoctorOptionsValidate checks the options that cannot go with a
// cluster doctor reaches, and the defaults that depend on it.
func TestDoctorOptionsValidate(t *testing.T) {
	ep := cluster.ConnOptions{Endpoints: []string{"127.0.0.1:2379"}}
	for _, c := range []struct {
		name string
		o    DoctorOptions
		want string
	}{
		{"two locations", DoctorOptions{DataDirs: []string{"a", "b"}}, ""},
		{"a cluster and its disk", DoctorOptions{Conn: ep, DataDirs: []string{"a"}, Noise: true}, ""},
		{"a cluster and two disks", DoctorOptions{Conn: ep, DataDirs: []string{"a", "b"}}, "at most one --data-dir"},
		{"a cluster slowed", DoctorOptions{Conn: ep, SimulateFsyncDelay: time.Millisecond}, "--simulate-fsync-delay"},
		{"a cluster's noise nowhere", DoctorOptions{Conn: ep, Noise: true}, "--noise writes on the storage under test"},
	} {
		err := c.o.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
	for _, c := range []struct{ on, asked, cluster, want bool }{
		{true, false, false, true}, {false, false, false, false}, {true, false, true, false}, {true, true, true, true}, {false, true, true, false},
	} {
		if got := SweepsCapacity(c.on, c.asked, c.cluster); got != c.want {
			t.Errorf("SweepsCapacity(%v, %v, %v) = %v", c.on, c.asked, c.cluster, got)
		}
	}
	if DoctorDuration(false) != 12*time.Second || DoctorDuration(true) != 30*time.Second {
		t.Error("DoctorDuration: a location's load is 12s, a cluster's window 30s")
	}
	if ProbeRate(50, false, false) != 0 || ProbeRate(50, true, false) != 50 || ProbeRate(20, false, true) != 20 {
		t.Error("ProbeRate: a storage of its own goes as fast as the device allows unless the rate is given; beside a member it is paced")
	}
}

// Doctor's load at its default length judges etcd's backend commit p99
// over at least the 100 commits a p99 needs (limits.MinSamples): etcd
// commits every 100ms, and over fewer commits the p99 is the slowest one,
// so one slow commit of a fast disk fails it.
func TestDoctorDefaultLoadCommits(t *testing.T) {
	o := doctorOptions(t, t.TempDir())
	o.Duration, o.SkipDisk = DefaultDoctorDuration, true
	res, err := Doctor(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 1 || res.Runs[0].Server == nil || res.Runs[0].Server.BackendCommit == nil {
		t.Fatalf("doctor: no backend commits in %+v", res.Runs)
	}
	n := res.Runs[0].Server.BackendCommit.Count
	if float64(n) < limits.MinSamples(0.99) {
		t.Errorf("doctor's %s load: its backend commit p99 rests on %d commits, want at least %.0f", o.Duration, n, limits.MinSamples(0.99))
	}
	t.Logf("doctor's %s load: %d backend commits", o.Duration, n)
}
