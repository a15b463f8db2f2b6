package cgroup

import (
	"os"
	"path/filepath"
	"testing"
)

// The memory limit is the least of the group's and its parents', read
// from v2's memory.max or v1's memory.limit_in_bytes; "max" and v1's huge
// default are no limit.
func TestMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		v        int
		own, mid string // the process's group's and its parent's limits ("": no file)
		want     int64
	}{
		{2, "max", "max", 0},
		{2, "1073741824", "max", 1 << 30},
		{2, "max", "536870912", 512 << 20},
		{2, "1073741824", "536870912", 512 << 20},
		{1, "9223372036854771712", "9223372036854771712", 0},
		{1, "268435456", "9223372036854771712", 256 << 20},
		{1, "", "268435456", 256 << 20},
	} {
		root := t.TempDir()
		mount, ctl := "/sys/fs/cgroup", "0::/kubepods/pod1/etcd"
		file := "memory.max"
		mounts := "30 23 0:26 / /sys/fs/cgroup rw shared:4 - cgroup2 cgroup2 rw\n"
		if c.v == 1 {
			mount, ctl, file = "/sys/fs/cgroup/memory", "9:memory:/kubepods/pod1/etcd", "memory.limit_in_bytes"
			mounts = "31 25 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
		}
		write := func(p, s string) {
			t.Helper()
			p = filepath.Join(root, p)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write("/proc/self/mountinfo", mounts)
		write("/proc/42/cgroup", ctl+"\n")
		write(mount+"/cgroup.controllers", "cpu io memory\n")
		if c.own != "" {
			write(mount+"/kubepods/pod1/etcd/"+file, c.own+"\n")
		}
		write(mount+"/kubepods/pod1/"+file, c.mid+"\n")
		got, err := Sys{Root: root}.MemoryLimit(42)
		if err != nil || got != c.want {
			t.Errorf("v%d own %q parent %q: %d, %v; want %d", c.v, c.own, c.mid, got, err, c.want)
		}
	}
	if _, err := parseMemoryLimit("lots"); err == nil {
		t.Error("a limit that is not a number")
	}
}
