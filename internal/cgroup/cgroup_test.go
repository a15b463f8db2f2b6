package cgroup

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/procstats"
)

func TestParseMounts(t *testing.T) {
	for _, c := range []struct {
		file, want string
	}{
		{"mountinfo-v1", "cgroup /sys/fs/cgroup/cpu rw,cpu"},
		{"mountinfo-v2", "cgroup2 /sys/fs/cgroup rw,nsdelegate,memory_recursiveprot"},
		{"mountinfo-container", "cgroup2 /sys/fs/cgroup rw"},
	} {
		f, err := os.Open(filepath.Join("testdata", c.file))
		if err != nil {
			t.Fatal(err)
		}
		ms, err := parseMounts(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, m := range ms {
			found = found || m.fsType+" "+m.mountPoint+" "+m.superOpts == c.want
		}
		if !found {
			t.Errorf("%s: %+v lacks %q", c.file, ms, c.want)
		}
	}
}

func TestGroupPath(t *testing.T) {
	text := "12:cpu,cpuacct:/kubepods/pod1/etcd\n11:memory:/x\n7:blkio:/kubepods/pod1\n0::/system.slice/etcd.service\n"
	if p, ok := groupPath(text, 1, "cpu"); !ok || p != "/kubepods/pod1/etcd" {
		t.Errorf("v1: %q %v", p, ok)
	}
	if p, ok := groupPath(text, 2, "cpu"); !ok || p != "/system.slice/etcd.service" {
		t.Errorf("v2: %q %v", p, ok)
	}
	if p, ok := groupPath(text, 1, "blkio"); !ok || p != "/kubepods/pod1" {
		t.Errorf("v1 blkio: %q %v", p, ok)
	}
	if _, ok := groupPath("4:memory:/\n", 1, "cpu"); ok {
		t.Error("a process without a cpu group has one")
	}
}

func TestParseCPUMaxAndStat(t *testing.T) {
	for in, want := range map[string]float64{"max 100000\n": 0, "10000 100000\n": 0.1, "250000 100000": 2.5, "50000": 0.5} {
		if got, err := parseCPUMax(in); err != nil || got != want {
			t.Errorf("cpu.max %q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x 100000", "10000 0", "1 2 3"} {
		if _, err := parseCPUMax(bad); err == nil {
			t.Errorf("cpu.max %q accepted", bad)
		}
	}
	v1, err := ParseStat("nr_periods 100\nnr_throttled 40\nthrottled_time 2000000000\nnr_bursts 0\n", 1)
	if err != nil || v1.Periods != 100 || v1.Throttled != 40 || v1.ThrottledTime != 2*time.Second {
		t.Errorf("v1 %+v %v", v1, err)
	}
	v2, err := ParseStat("usage_usec 5000\nnr_periods 10\nnr_throttled 5\nthrottled_usec 300000\n", 2)
	if err != nil || v2.Periods != 10 || v2.Throttled != 5 || v2.ThrottledTime != 300*time.Millisecond {
		t.Errorf("v2 %+v %v", v2, err)
	}
	if _, err := ParseStat("nr_periods x\n", 1); err == nil {
		t.Error("a bad number was accepted")
	}
	a, b := v1, v1
	b.At = a.At.Add(2 * time.Second)
	b.Periods, b.Throttled, b.ThrottledTime = 120, 50, 3*time.Second
	if th := Between(a, b); th.Share != 0.5 || th.Time != 0.5 {
		t.Errorf("between: %+v", th)
	}
}

// fakeV2 is a folder shaped like a cgroup v2 host: /proc/self/mountinfo,
// /proc/<pid>/cgroup, and the hierarchy with the cpu controller.
func fakeV2(t *testing.T, pid int, group string) Sys {
	root := t.TempDir()
	write := func(p, s string) {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mi, _ := os.ReadFile("testdata/mountinfo-v2")
	write("proc/self/mountinfo", string(mi))
	write("proc/"+strconv.Itoa(pid)+"/cgroup", "0::"+group+"\n")
	write("proc/"+strconv.Itoa(os.Getpid())+"/cgroup", "0::"+group+"\n")
	base := "sys/fs/cgroup"
	write(base+"/cgroup.controllers", "cpuset cpu io memory pids\n")
	write(base+"/cgroup.subtree_control", "memory pids\n")
	write(base+"/cgroup.procs", "")
	g := filepath.Join(base, group)
	write(g+"/cgroup.controllers", "memory pids\n")
	write(g+"/cgroup.subtree_control", "")
	write(g+"/cgroup.procs", strconv.Itoa(pid)+"\n")
	write(g+"/cpu.max", "max 100000\n")
	write(g+"/cpu.stat", "usage_usec 1\n")
	write(base+"/kubepods/cpu.max", "200000 100000\n")
	return Sys{Root: root}
}

// cgroup v2, read: the group, its own quota and the tightest above it.
func TestV2Read(t *testing.T) {
	s := fakeV2(t, 4242, "/kubepods/pod1")
	h, err := s.CPUHierarchy()
	if err != nil || h.Version != 2 || h.Mount != "/sys/fs/cgroup" {
		t.Fatalf("%+v %v", h, err)
	}
	g, cores, ok, err := s.Limiting(4242)
	if err != nil || !ok || cores != 2 || g.Path != "/kubepods" {
		t.Errorf("limiting: %+v %v %v %v", g, cores, ok, err)
	}
}

// cgroup v2, write: a process's own group gets "QUOTA PERIOD" in cpu.max,
// under the root (the process's group has processes, so the cpu controller
// cannot be enabled below it), and the process is moved into it. The
// files the kernel creates in a new group are created by the test.
func TestV2Limit(t *testing.T) {
	s := fakeV2(t, 4242, "/app")
	sub := filepath.Join(s.Root, "sys/fs/cgroup/app/cgroup.subtree_control")
	os.Chmod(sub, 0o444) // the kernel refuses: the group has processes
	mkdir, rmdir := mkdirGroup, rmdirGroup
	defer func() { mkdirGroup, rmdirGroup = mkdir, rmdir }()
	rmdirGroup = os.RemoveAll
	mkdirGroup = func(dir string) error {
		if strings.HasPrefix(dir, filepath.Join(s.Root, "sys/fs/cgroup/app")) && os.Geteuid() == 0 {
			return os.ErrPermission // root ignores the file mode: refuse as the kernel would
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
		for _, f := range []string{"cpu.max", "cgroup.procs", "cpu.stat"} {
			os.WriteFile(filepath.Join(dir, f), nil, 0o644)
		}
		return nil
	}
	l, err := s.Limit(4242, 0.25)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(s.Root, "sys/fs/cgroup/etcdperf-member-4242")
	if l.Dir() != dir {
		t.Errorf("group %s, want %s", l.Dir(), dir)
	}
	for f, want := range map[string]string{"cpu.max": "25000 100000", "cgroup.procs": "4242"} {
		if b, _ := os.ReadFile(filepath.Join(dir, f)); string(b) != want {
			t.Errorf("%s: %q, want %q", f, b, want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(s.Root, "sys/fs/cgroup/cgroup.subtree_control")); string(b) != "+cpu" {
		t.Errorf("the cpu controller was not enabled under the root: %q", b)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(s.Root, "sys/fs/cgroup/app/cgroup.procs")); string(b) != "4242" {
		t.Errorf("the process was not moved back: %q", b)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the group was not removed: %v", err)
	}
}

// No cgroup file system with the cpu controller: one error that says what
// is missing.
func TestNoController(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "proc/self"), 0o755)
	os.WriteFile(filepath.Join(root, "proc/self/mountinfo"), []byte("24 30 0:22 / /sys rw - sysfs sysfs rw\n"), 0o644)
	_, err := Sys{Root: root}.Limit(1, 0.1)
	if err == nil || !strings.Contains(err.Error(), "cpu.cfs_quota_us") || !strings.Contains(err.Error(), "cpu.max") {
		t.Errorf("error %v", err)
	}
}

func TestValidateCores(t *testing.T) {
	for _, c := range []float64{0.001, 0, -1, 1e6} {
		if ValidateCores(c) == nil {
			t.Errorf("%g accepted", c)
		}
	}
	if err := ValidateCores(0.5); err != nil {
		t.Error(err)
	}
}

// The real thing, where this host has the cpu controller and runs as
// root: a busy process limited to a tenth of a CPU uses no more, is
// throttled, and its group is gone once it is released or has ended.
func TestLimitBusyProcess(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: limiting a process's CPU needs root")
	}
	if _, err := Host.CPUHierarchy(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	spin := exec.Command("/bin/sh", "-c", "while :; do :; done")
	if err := spin.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { spin.Process.Kill(); spin.Wait() }()
	pid := spin.Process.Pid
	l, err := Host.Limit(pid, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	s0, _ := procstats.Host.ReadSched(pid)
	st0, _ := l.Stat()
	time.Sleep(time.Second)
	s1, _ := procstats.Host.ReadSched(pid)
	st1, _ := l.Stat()
	rates, th := procstats.SchedBetween(s0, s1), Between(st0, st1)
	if rates.CPU > 0.15 || th.Share < 0.5 || th.Time < 0.3 {
		t.Errorf("limited to 0.1 CPU: used %.2f, throttled in %.0f%% of the periods, %.2fs/s", rates.CPU, th.Share*100, th.Time)
	}
	g, cores, ok, err := Host.Limiting(pid)
	if err != nil || !ok || cores != 0.1 || g.Dir() != l.Dir() {
		t.Errorf("limiting: %s %v %v %v", g.Dir(), cores, ok, err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(l.Dir()); !os.IsNotExist(err) {
		t.Errorf("%s left: %v", l.Dir(), err)
	}
	// Killed while limited: the next one removes the group left behind.
	l, err = Host.Limit(pid, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	spin.Process.Kill()
	spin.Wait()
	Host.RemoveStale()
	if _, err := os.Stat(l.Dir()); !os.IsNotExist(err) {
		t.Errorf("the group of an ended process was left: %v", err)
	}
}
