package sysinfo

import (
	"strings"
	"testing"
)

func TestParseMountInfo(t *testing.T) {
	const in = `22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard
23 22 0:21 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24683620k
24 22 0:22 / /mnt/with\040space rw - xfs /dev/nvme0n1p2 rw
25 22 0:23 / /dev/shm rw - ramfs none rw
garbage line
`
	got, err := parseMountInfo(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("got %d entries, want 4: %+v", len(got), got)
	}
	if got[2].mountPoint != "/mnt/with space" || got[2].fsType != "xfs" || got[2].source != "/dev/nvme0n1p2" {
		t.Errorf("escaped entry parsed as %+v", got[2])
	}
	if got[0].major != 254 || got[0].minor != 0 {
		t.Errorf("major:minor = %d:%d, want 254:0", got[0].major, got[0].minor)
	}
}

func TestUnder(t *testing.T) {
	cases := []struct {
		path, mp string
		want     bool
	}{
		{"/var/lib/etcd", "/", true},
		{"/var/lib/etcd", "/var/lib/etcd", true},
		{"/var/lib/etcd2", "/var/lib/etcd", false},
		{"/var/lib/etcd/member", "/var/lib/etcd", true},
	}
	for _, c := range cases {
		if got := under(c.path, c.mp); got != c.want {
			t.Errorf("under(%q, %q) = %v, want %v", c.path, c.mp, got, c.want)
		}
	}
}

func TestFindMountShm(t *testing.T) {
	m, err := FindMount("/dev/shm")
	if err != nil {
		t.Skipf("no /dev/shm here: %v", err)
	}
	if m.FSType != "tmpfs" || !m.Volatile() {
		t.Errorf("/dev/shm: fs %q volatile %v, want tmpfs and volatile", m.FSType, m.Volatile())
	}
	if m.Device != "" {
		t.Errorf("/dev/shm has device %q, want none", m.Device)
	}
}

func TestFindMountTempDir(t *testing.T) {
	dir := t.TempDir()
	m, err := FindMount(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.MountPoint == "" || m.FSType == "" || !strings.HasPrefix(m.Dir, m.MountPoint) {
		t.Errorf("FindMount(%s) = %+v", dir, m)
	}
}

// A RAM disk is zram or brd's ramN, by the kernel's names for them.
func TestRAMDisk(t *testing.T) {
	for dev, want := range map[string]bool{"zram0": true, "zram18": true, "ram0": true, "ram15": true,
		"zram": false, "ram": false, "vda": false, "nvme0n1": false, "loop0": false, "dm-0": false, "ramfs": false, "": false} {
		if got := (Mount{Device: dev}).RAMDisk(); got != want {
			t.Errorf("%q: RAM disk %v, want %v", dev, got, want)
		}
	}
}
