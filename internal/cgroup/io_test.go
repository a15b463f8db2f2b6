package cgroup

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Captured on this project's test host (kernel 6.18, cgroup v1 blkio):
// a group that wrote with O_DSYNC to a partition of loop0 under a cap on
// loop0, and the root group's files.
const (
	blkioServiced = "7:0 Read 5\n7:0 Write 152\n7:0 Sync 157\n7:0 Async 0\n7:0 Discard 0\n7:0 Total 157\nTotal 157\n"
	blkioBytes    = "254:0 Read 8192\n254:0 Write 358400\n254:0 Sync 366592\n254:0 Async 0\n254:0 Discard 0\n254:0 Total 366592\n7:0 Read 0\n7:0 Write 4096\nTotal 370688\n"
	// cgroup v2's io.stat and io.max, as the kernel's documentation writes them.
	ioStatV2 = "8:16 rbytes=1459200 wbytes=314773504 rios=192 wios=353 dbytes=0 dios=0\n8:0 rbytes=90430464 wbytes=299008000 rios=8950 wios=1252 dbytes=50331648 dios=3021 cost.vrate=100.00\n"
	ioMaxV2  = "8:16 rbps=2097152 wbps=max riops=max wiops=120\n8:0 rbps=max wbps=1048576 riops=max wiops=max\n"
)

func TestParseIOFiles(t *testing.T) {
	loop0, vda, sdb, sda := Device{Major: 7}, Device{Major: 254}, Device{Major: 8, Minor: 16}, Device{Major: 8}
	for _, c := range []struct {
		text        string
		dev         Device
		read, write uint64
	}{
		{blkioServiced, loop0, 5, 152},
		{blkioBytes, vda, 8192, 358400},
		{blkioBytes, loop0, 0, 4096},
		{blkioBytes, sda, 0, 0}, // no I/O there in this group
	} {
		r, w, err := ParseBlkioStat(c.text, c.dev)
		if err != nil || r != c.read || w != c.write {
			t.Errorf("%s in %q: %d %d %v, want %d %d", c.dev, c.text, r, w, err, c.read, c.write)
		}
	}
	if _, _, err := ParseBlkioStat("7:0 Write lots\n", loop0); err == nil {
		t.Error("a bad count was accepted")
	}
	st, err := ParseIOStat(ioStatV2, sda)
	if err != nil || st.ReadOps != 8950 || st.WriteOps != 1252 || st.ReadBytes != 90430464 || st.WriteBytes != 299008000 {
		t.Errorf("io.stat: %+v %v", st, err)
	}
	if _, err := ParseIOStat("8:0 wios=x\n", sda); err == nil {
		t.Error("io.stat: a bad count was accepted")
	}
	for dev, want := range map[Device]IOLimit{sdb: {WriteIOPS: 120}, sda: {WriteBPS: 1 << 20}, vda: {}} {
		if got, err := ParseIOMax(ioMaxV2, dev); err != nil || got != want {
			t.Errorf("io.max %s: %+v %v, want %+v", dev, got, err, want)
		}
	}
	if _, err := ParseIOMax("8:0 wiops=-3\n", sda); err == nil {
		t.Error("io.max: a negative cap was accepted")
	}
	if n, err := parseDeviceValue("254:0 200\n7:0 50\n", loop0); err != nil || n != 50 {
		t.Errorf("write_iops_device: %d %v", n, err)
	}
	a := IOStat{At: time.Unix(100, 0), WriteOps: 100, WriteBytes: 1000}
	b := IOStat{At: time.Unix(102, 0), WriteOps: 300, WriteBytes: 5000, ReadOps: 4}
	if r := IOBetween(a, b); r.WriteIOPS != 100 || r.WriteBPS != 2000 || r.ReadIOPS != 2 {
		t.Errorf("between: %+v", r)
	}
	if r := IOBetween(b, a); r != (IORate{}) {
		t.Errorf("backwards: %+v", r)
	}
}

func TestIOLimitValidate(t *testing.T) {
	for lim, want := range map[IOLimit]string{
		{}:                  "needs write operations or bytes",
		{WriteIOPS: -1}:     "negative",
		{WriteBPS: 100}:     "smallest",
		{WriteBPS: -4096}:   "negative",
		{WriteIOPS: 100}:    "",
		{WriteBPS: 1 << 20}: "",
	} {
		err := lim.Validate()
		if (want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want %q", lim, err, want)
		}
	}
}

// A partition's number names its whole disk: the kernel takes a cap on a
// disk only (on this host, "7:1" in blkio.throttle.write_iops_device
// fails with "No such device", "7:0" throttles the I/O to loop0p1).
func TestBlockDeviceOfPartition(t *testing.T) {
	root := t.TempDir()
	disk := filepath.Join(root, "sys/devices/virtual/block/loop0")
	part := filepath.Join(disk, "loop0p1")
	for dir, dev := range map[string]string{disk: "7:0\n", part: "259:0\n"} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "dev"), []byte(dev), 0o644)
	}
	os.WriteFile(filepath.Join(part, "partition"), []byte("1\n"), 0o644)
	os.MkdirAll(filepath.Join(root, "sys/dev/block"), 0o755)
	os.Symlink("../../devices/virtual/block/loop0/loop0p1", filepath.Join(root, "sys/dev/block/259:0"))
	os.Symlink("../../devices/virtual/block/loop0", filepath.Join(root, "sys/dev/block/7:0"))
	s := Sys{Root: root}
	for _, num := range [][2]uint64{{259, 0}, {7, 0}} {
		if d, ok := s.blockDevice(num[0], num[1]); !ok || d != (Device{Major: 7, Name: "loop0"}) {
			t.Errorf("%d:%d: %+v %v, want loop0 7:0", num[0], num[1], d, ok)
		}
	}
	if _, ok := s.blockDevice(0, 52); ok {
		t.Error("an anonymous device has a block device")
	}
}

// The device of a directory on a disk, of one not made yet, and none for
// one in memory.
func TestDeviceOf(t *testing.T) {
	dir := t.TempDir()
	d, err := Host.DeviceOf(dir)
	if err != nil {
		t.Skipf("skipped: the test's folder is on no block device: %v", err)
	}
	if d2, err := Host.DeviceOf(filepath.Join(dir, "not/yet")); err != nil || d2 != d {
		t.Errorf("a folder to be made: %+v %v, want %+v", d2, err, d)
	}
	if _, err := os.Stat(filepath.Join("/sys/dev/block", d.String(), "partition")); err == nil {
		t.Errorf("%s (%s) is a partition", d, d.Name)
	}
	if _, err := Host.DeviceOf("/dev/shm"); err == nil || !strings.Contains(err.Error(), "no block device") {
		t.Errorf("/dev/shm: %v", err)
	}
}

// cgroup v2 has one group per process: a CPU quota and an I/O cap on the
// same member share its group, whichever comes first; lifting the second
// leaves the group to the first, which removes it.
func TestV2CPUAndIOShareAGroup(t *testing.T) {
	dev := Device{Major: 254}
	for _, ioFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("io first %v", ioFirst), func(t *testing.T) {
			s := fakeV2(t, 4242, "/app")
			os.Chmod(filepath.Join(s.Root, "sys/fs/cgroup/app/cgroup.subtree_control"), 0o444)
			mkdir, rmdir := mkdirGroup, rmdirGroup
			defer func() { mkdirGroup, rmdirGroup = mkdir, rmdir }()
			rmdirGroup = os.RemoveAll
			mkdirGroup = func(dir string) error {
				if strings.HasPrefix(dir, filepath.Join(s.Root, "sys/fs/cgroup/app")) {
					return os.ErrPermission // the group has processes
				}
				if err := os.Mkdir(dir, 0o755); err != nil {
					return err
				}
				for _, f := range []string{"cpu.max", "cgroup.procs", "cpu.stat", "io.max", "io.stat", "cgroup.subtree_control"} {
					os.WriteFile(filepath.Join(dir, f), nil, 0o644)
				}
				return nil
			}
			cpu := func() (*Limited, error) { return s.Limit(4242, 0.5) }
			io := func() (*Limited, error) { return s.LimitIO(4242, dev, IOLimit{WriteIOPS: 100}) }
			first, second := cpu, io
			if ioFirst {
				first, second = io, cpu
			}
			a, err := first()
			if err != nil {
				t.Fatal(err)
			}
			// The kernel's part: the process is in its new group.
			os.WriteFile(filepath.Join(s.Root, "proc/4242/cgroup"), []byte("0::/etcdperf-member-4242\n"), 0o644)
			b, err := second()
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(s.Root, "sys/fs/cgroup/etcdperf-member-4242")
			if a.Dir() != dir || b.Dir() != dir {
				t.Fatalf("groups %s and %s, want both %s", a.Dir(), b.Dir(), dir)
			}
			for f, want := range map[string]string{"cpu.max": "50000 100000", "io.max": "254:0 wiops=100"} {
				if got, _ := os.ReadFile(filepath.Join(dir, f)); string(got) != want {
					t.Errorf("%s: %q, want %q", f, got, want)
				}
			}
			os.WriteFile(filepath.Join(dir, "io.stat"), []byte("254:0 rbytes=0 wbytes=4096 rios=0 wios=1 dbytes=0 dios=0\n"), 0o644)
			g, lim, ok, err := s.IOLimiting(4242, dev)
			if err != nil || !ok || lim.WriteIOPS != 100 || g.Dir() != dir {
				t.Errorf("IOLimiting: %s %+v %v %v", g.Dir(), lim, ok, err)
			}
			if st, err := g.IOStat(dev); err != nil || st.WriteOps != 1 || st.WriteBytes != 4096 {
				t.Errorf("IOStat: %+v %v", st, err)
			}
			if err := b.Release(); err != nil {
				t.Fatal(err)
			}
			lifted := map[bool]string{false: "254:0 wiops=max wbps=max", true: "max"}[ioFirst]
			file := map[bool]string{false: "io.max", true: "cpu.max"}[ioFirst]
			if got, _ := os.ReadFile(filepath.Join(dir, file)); string(got) != lifted {
				t.Errorf("the second limit's %s is %q after its release, want %q", file, got, lifted)
			}
			if _, err := os.Stat(dir); err != nil {
				t.Errorf("the group went with the second limit: %v", err)
			}
			if err := a.Release(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("the group was not removed: %v", err)
			}
			if got, _ := os.ReadFile(filepath.Join(s.Root, "sys/fs/cgroup/app/cgroup.procs")); string(got) != "4242" {
				t.Errorf("the process was not moved back: %q", got)
			}
		})
	}
}

// writer starts a child that appends 2300-byte writes with O_DSYNC (each
// one written and synced before the next, as etcd's WAL does) to a file in
// dir, and returns a function that counts them so far.
func writer(t *testing.T, dir string) (*exec.Cmd, func() int64) {
	t.Helper()
	f := filepath.Join(dir, "wal")
	cmd := exec.Command("dd", "if=/dev/zero", "of="+f, "bs=2300", "count=1000000", "oflag=dsync", "status=none")
	if err := cmd.Start(); err != nil {
		t.Skipf("skipped: dd: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, func() int64 {
		st, err := os.Stat(f)
		if err != nil {
			return 0
		}
		return st.Size() / 2300
	}
}

// rate counts the writes over d.
func rate(count func() int64, d time.Duration) float64 {
	n0, t0 := count(), time.Now()
	time.Sleep(d)
	return float64(count()-n0) / time.Since(t0).Seconds()
}

// The real thing, where this host has the blkio or io controller and runs
// as root: a process that writes and syncs in a loop, capped at 100 write
// operations per second on the disk of its file, does no more (its own
// count and its group's), where it did far more a moment before without
// the cap; its group is gone once released, or once it has ended.
func TestLimitIOWriteLoop(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: capping a process's I/O needs root")
	}
	if err := Host.CanLimitIO(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	dir := t.TempDir()
	dev, err := Host.DeviceOf(dir)
	if err != nil {
		t.Skipf("skipped: %v", err)
	}
	const capIOPS = 100
	cmd, count := writer(t, dir)
	pid := cmd.Process.Pid
	time.Sleep(300 * time.Millisecond)
	free := rate(count, 1500*time.Millisecond)
	if free < 3*capIOPS {
		t.Skipf("skipped: without a cap this disk does %.0f synced writes/s, too few to see a %d-IOPS cap", free, capIOPS)
	}
	l, err := Host.LimitIO(pid, dev, IOLimit{WriteIOPS: capIOPS})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the throttle's first slice
	st0, err := l.IOStat(dev)
	if err != nil {
		t.Fatal(err)
	}
	capped := rate(count, 2*time.Second)
	st1, _ := l.IOStat(dev)
	group := IOBetween(st0, st1)
	t.Logf("%s (%s): %.0f synced 2300-byte writes/s uncapped, %.0f/s under a %d-IOPS cap (its group: %.0f write IOPS, %.0f KiB/s)",
		dev, dev.Name, free, capped, capIOPS, group.WriteIOPS, group.WriteBPS/1024)
	if capped > 1.3*capIOPS || group.WriteIOPS > 1.3*capIOPS {
		t.Errorf("capped at %d IOPS: %.0f writes/s, its group %.0f write IOPS", capIOPS, capped, group.WriteIOPS)
	}
	if capped <= 0 || group.WriteIOPS < 0.5*capIOPS {
		t.Errorf("capped at %d IOPS the process hardly wrote: %.0f writes/s, its group %.0f write IOPS", capIOPS, capped, group.WriteIOPS)
	}
	if free < 3*capped {
		t.Errorf("the cap did not slow it: %.0f writes/s without, %.0f with", free, capped)
	}
	g, lim, ok, err := Host.IOLimiting(pid, dev)
	if err != nil || !ok || lim.WriteIOPS != capIOPS || g.Dir() != l.Dir() {
		t.Errorf("IOLimiting: %s %+v %v %v", g.Dir(), lim, ok, err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(l.Dir()); !os.IsNotExist(err) {
		t.Errorf("%s left: %v", l.Dir(), err)
	}
	if after := rate(count, time.Second); after < 3*capped {
		t.Errorf("released, it writes %.0f/s, as under the cap (%.0f/s)", after, capped)
	}
	// Killed while capped: the next one removes the group left behind.
	l, err = Host.LimitIO(pid, dev, IOLimit{WriteBPS: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(l.Dir(), "cgroup.procs")); !strings.Contains(string(b), strconv.Itoa(pid)) {
		t.Errorf("the process is not in its group: %q", b)
	}
	cmd.Process.Kill()
	cmd.Wait()
	Host.RemoveStale()
	if _, err := os.Stat(l.Dir()); !os.IsNotExist(err) {
		t.Errorf("the group of an ended process was left: %v", err)
	}
}
