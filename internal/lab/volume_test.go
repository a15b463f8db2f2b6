package lab_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/cgroup"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/memberproc"
	"github.com/etcdperf/etcdperf/internal/sysinfo"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// A member on a volume capped at 400 write IOPS: its WAL is on a loop
// device, its writes through it are counted and capped on the disk under
// the volume's file, no cgroup caps its writes to its own device, and
// nothing is left once it stops.
func TestVolumeIOPSMember(t *testing.T) {
	if err := lab.VolumeSupported(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	if err := cgroup.Host.CanLimitIO(); err != nil {
		t.Skipf("skipped: a capped volume needs a blkio or io cgroup: %v", err)
	}
	// A disk of its own in memory: the same on any machine.
	dir := testutil.MountQuietDisk(t, "512M")
	backing, err := cgroup.Host.DeviceOf(dir)
	if err != nil {
		t.Fatal(err)
	}
	faults, err := lab.ParseFaults([]string{"1:volume-iops=400"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tg, err := lab.Open(ctx, lab.TargetOptions{DataDir: dir, RunID: "vol", Faults: faults, ServerCommand: lab.MemberCommand(t)})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			tg.Close()
		}
	}()
	m := tg.Members()[0]
	if m.Fault != "volume-iops=400" {
		t.Errorf("fault %q", m.Fault)
	}
	mt, err := sysinfo.FindMount(m.DataDir)
	if err != nil || mt.MountPoint != m.DataDir || !strings.HasPrefix(mt.Device, "loop") || mt.FSType != "ext4" {
		t.Fatalf("the member's data dir %s is on %+v (%v), want ext4 on a loop device mounted there", m.DataDir, mt, err)
	}
	if d := tg.VolumeDevice(); d != mt.Device {
		t.Errorf("VolumeDevice %q, want %q", d, mt.Device)
	}
	// The cap is on the disk under the volume's file.
	g, err := cgroup.Host.IOOf(m.PID)
	if err != nil {
		t.Fatal(err)
	}
	if lim, err := g.IOLimit(backing); err != nil || lim.WriteIOPS != 400 {
		t.Errorf("the member's cgroup %s caps %s at %+v (%v), want 400 write IOPS", g.Dir(), backing, lim, err)
	}
	before, err := g.IOStat(backing)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		if _, err := tg.Client().Put(ctx, fmt.Sprintf("/etcdperf/test/k%d", i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	after, err := g.IOStat(backing)
	if err != nil {
		t.Fatal(err)
	}
	if after.WriteOps <= before.WriteOps {
		t.Errorf("the member's writes to %s through its volume: %d then %d, want more", backing, before.WriteOps, after.WriteOps)
	}
	// Its own device, the loop device, shows no cap: not to the cgroup
	// reading, not to the member's process figures.
	hm, err := memberproc.Open(m.Name, m.PID, "test")
	if err != nil {
		t.Fatal(err)
	}
	p := hm.Process()
	if p.Device != mt.Device || p.IOPSCap != 0 || p.CapDevice != "" {
		t.Errorf("the member's process: device %q, IOPS cap %v on %q; want %s, no cap", p.Device, p.IOPSCap, p.CapDevice, mt.Device)
	}
	loopDev, err := cgroup.Host.DeviceOf(p.WALDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, lim, ok, err := cgroup.Host.IOLimiting(m.PID, loopDev); err != nil || ok {
		t.Errorf("a cap on the member's own device %s: %+v, %v", loopDev.Name, lim, err)
	}
	closed = true
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	assertNothingLeft(t, dir, g)
}

// assertNothingLeft checks that no loop device is on a file under dir,
// nothing is mounted under it, the cgroup g is gone and dir is empty.
func assertNothingLeft(t *testing.T, dir string, g cgroup.Group) {
	t.Helper()
	if out := loopDevices(t); strings.Contains(out, dir) {
		t.Errorf("a loop device is left on a file under %s:\n%s", dir, out)
	}
	if b, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(b), " "+dir+"/") {
		t.Errorf("a mount is left under %s", dir)
	}
	if _, err := os.Stat(g.Dir()); !os.IsNotExist(err) {
		t.Errorf("the member's cgroup %s is left: %v", g.Dir(), err)
	}
	testutil.AssertEmptyDir(t, dir)
}

// loopDevices lists the loop devices that have a file, as /sys/block
// says (what losetup -a lists, without needing losetup).
func loopDevices(t *testing.T) string {
	files, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	var b strings.Builder
	for _, f := range files {
		s, _ := os.ReadFile(f)
		b.WriteString(f + ": " + string(s))
	}
	return b.String()
}

// A member killed outright cannot remove its volume: Close does.
func TestVolumeMemberKilledCleansUp(t *testing.T) {
	if err := lab.VolumeSupported(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	if err := cgroup.Host.CanLimitIO(); err != nil {
		t.Skipf("skipped: a capped volume needs a blkio or io cgroup: %v", err)
	}
	dir := testutil.MountQuietDisk(t, "512M")
	faults, err := lab.ParseFaults([]string{"1:volume-iops=400"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := lab.Open(context.Background(), lab.TargetOptions{DataDir: dir, RunID: "kill", Faults: faults, ServerCommand: lab.MemberCommand(t)})
	if err != nil {
		t.Fatal(err)
	}
	m := tg.Members()[0]
	g, err := cgroup.Host.IOOf(m.PID)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(m.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for !tg.MemberExited(m.Name) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	assertNothingLeft(t, dir, g)
}
