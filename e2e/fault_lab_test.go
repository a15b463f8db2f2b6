package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/cgroup"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// ownGroups lists the CPU and I/O cgroups that etcdperf made for its
// members, but for the groups of live processes this test binary did not
// start: go test runs other packages' binaries beside this one, and their
// members' groups sit beside these (a CI run's leftover check named one).
// A group whose process has exited is listed, whoever made it: it is left
// behind.
func ownGroups(t *testing.T) []string {
	t.Helper()
	g, err := cgroup.Host.Of(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{g.Dir(), g.Parent().Dir(), g.H.Mount}
	if io, err := cgroup.Host.IOOf(os.Getpid()); err == nil {
		dirs = append(dirs, io.Dir(), io.Parent().Dir(), io.H.Mount)
	}
	seen := map[string]bool{}
	var out []string
	for _, dir := range dirs {
		m, _ := filepath.Glob(filepath.Join(dir, "etcdperf-member-*"))
		for _, p := range m {
			if !seen[p] && !othersGroup(p) {
				out = append(out, p)
			}
			seen[p] = true
		}
	}
	return out
}

// othersGroup says whether a member's group (etcdperf-member-PID) is that
// of a live process that is not a descendant of this one.
func othersGroup(dir string) bool {
	pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(dir), "etcdperf-member-"))
	if err != nil {
		return false
	}
	self := os.Getpid()
	for n := 0; n < 64; n++ {
		if pid == self {
			return false
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			// The member itself has exited (n == 0): its group is left
			// behind, whoever made it. An ancestor that exited during the
			// walk (n > 0) was not this binary, which is running.
			return n > 0
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 2 {
			return false
		}
		if pid, err = strconv.Atoi(f[1]); err != nil || pid <= 1 {
			return true
		}
	}
	return true
}

func skipWithoutFaults(t *testing.T) {
	t.Helper()
	if err := lab.SlowDiskSupported(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	if err := cgroup.Host.CanLimit(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	if err := cgroup.Host.CanLimitIO(); err != nil {
		t.Skipf("skipped: %v", err)
	}
}

// Members with each fault: the run works, and when it ends, and when
// etcdperf itself is killed, no cgroup, slow mount, member process or file
// is left.
func TestFaultMembersCleanUp(t *testing.T) {
	skipWithoutFaults(t)
	if left := ownGroups(t); len(left) > 0 {
		t.Fatalf("groups from before the test: %v", left)
	}
	faults := []string{"--fault", "1:cpu-limit=0.5", "--fault", "1:iops-limit=2000", "--fault", "2:peer-latency=20ms,4ms", "--fault", "3:slow-fsync=2ms"}
	dir := t.TempDir()
	r := testutil.RunBinary(t, 2*time.Minute, append([]string{"bench", "put", "--members", "3", "--data-dir", dir, "--total", "300", "--clients", "4", "-o", "json"}, faults...)...)
	if r.Code == 2 {
		t.Fatalf("exit 2: %s", r.Stderr)
	}
	res := decodeResult(t, r.Stdout)
	if res.Bench == nil || res.Bench.Ops != 300 || res.Target == nil || len(res.Target.Members) != 3 {
		t.Fatalf("bench with faulty members: %+v", res.Bench)
	}
	// The limited member ran in its own group, as the Result says.
	var limited bool
	for _, p := range res.Server.Processes {
		limited = limited || (p.Name == "etcdperf-1" && p.CPULimit == 0.5 && strings.Contains(p.Cgroup, "etcdperf-member-"))
	}
	if !limited {
		t.Errorf("no process figures with the 0.5 CPU limit of etcdperf-1: %+v", res.Server.Processes)
	}
	assertFaultsGone(t, dir)

	// etcdperf killed outright while its members run.
	dir = t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testutil.Binary(t), append([]string{"bench", "put", "--members", "3", "--data-dir", dir, "--duration", "1m", "--rate", "50"}, faults...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for len(ownGroups(t)) == 0 || len(slowMountsUnder(t, dir)) == 0 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the members did not start with their faults within a minute")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // the load is on
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	// A member whose parent died stops etcd and then its faults, and exits
	// anyway 30s after its signal (server's memberStopBound): a member
	// whose peers died with it may spend that long in etcd's stop (a CI
	// run's did over 20s).
	deadline = time.Now().Add(40 * time.Second)
	for time.Now().Before(deadline) && (len(ownGroups(t)) > 0 || len(slowMountsUnder(t, dir)) > 0 || len(processesWith(t, dir)) > 0) {
		time.Sleep(100 * time.Millisecond)
	}
	if g, m, p := ownGroups(t), slowMountsUnder(t, dir), processesWith(t, dir); len(g)+len(m)+len(p) > 0 {
		t.Errorf("after etcdperf was killed: groups %v, mounts %v, processes %v", g, m, p)
	}
	// The members' data is etcdperf's to remove; it was killed before it
	// could: the folder holds only the run folder, no mount.
	os.RemoveAll(dir)
}

func assertFaultsGone(t *testing.T, dir string) {
	t.Helper()
	if g := ownGroups(t); len(g) > 0 {
		t.Errorf("cgroups left: %v", g)
	}
	if m := slowMountsUnder(t, dir); len(m) > 0 {
		t.Errorf("slow mounts left: %v", m)
	}
	if p := processesWith(t, dir); len(p) > 0 {
		t.Errorf("processes left: %v", p)
	}
	assertEmptyDir(t, dir)
}

// Bad --fault values: one line, exit 2, before anything starts.
func TestFaultUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "put", "--members", "3", "--fault", "4:cpu-limit=0.1"}, "from 1 to 3"},
		{[]string{"bench", "put", "--members", "3", "--fault", "3:cpu-limit"}, "MEMBER:KIND=VALUE"},
		{[]string{"bench", "put", "--members", "3", "--fault", "3:cpu-limit=0"}, "smallest quota"},
		{[]string{"bench", "put", "--members", "3", "--fault", "3:cpu-limit=64"}, "limits nothing"},
		{[]string{"bench", "put", "--members", "3", "--fault", "3:disk=slow"}, "unknown kind"},
		{[]string{"bench", "put", "--members", "3", "--fault", "all:slow-fsync=15ms", "--fault", "2:slow-fsync=5ms"}, "already has"},
		{[]string{"check", "--fault", "1:peer-latency=200ms"}, "--members 2 or more"},
		{[]string{"check", "--members", "3", "--fault", "2:peer-latency=200ms,300ms"}, "jitter"},
		{[]string{"doctor", "--members", "3", "--fault", "2:slow-fsync=soon"}, "not a duration"},
		{[]string{"check", "--endpoints", "127.0.0.1:2379", "--fault", "1:cpu-limit=0.1"}, "--fault is for the embedded etcd"},
		{[]string{"server", "--data-dir", dir, "--cpu-limit", "0.001"}, "smallest quota"},
		{[]string{"server", "--data-dir", dir, "--peer-latency", "fast"}, "latency"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			args := c.args
			if c.args[0] != "server" && !strings.Contains(strings.Join(c.args, " "), "--endpoints") {
				args = append(args, "--data-dir", dir)
			}
			r := testutil.RunBinary(t, 30*time.Second, args...)
			line := strings.TrimSpace(r.Stderr)
			if r.Code != 2 || strings.Contains(line, "\n") || !strings.Contains(line, c.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line with %q", r.Code, r.Stderr, c.want)
			}
			assertEmptyDir(t, dir)
		})
	}
}
