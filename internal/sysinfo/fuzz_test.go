package sysinfo

import (
	"strings"
	"testing"
)

// FuzzParseMountInfo feeds /proc/self/mountinfo text: never a panic, and
// an entry only from a line with its separator and file system type.
func FuzzParseMountInfo(f *testing.F) {
	f.Add("22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard\n")
	f.Add("24 22 0:22 / /mnt/with\\040space rw - xfs /dev/nvme0n1p2 rw\n")
	f.Add("41 26 0:38 / /tmp/s/slow rw,nosuid,nodev,relatime - fuse.etcdperf-slowdisk /tmp/s/real rw,user_id=0,group_id=0\n")
	f.Add("1 2 3:4 / /x - \n")
	f.Add("1 2 99999999999:0 / /x rw - ext4 /dev/x rw\n")
	f.Add("1 2 3:4 / /a\\777b\\ rw - - - -\n")
	f.Fuzz(func(t *testing.T, text string) {
		entries, err := parseMountInfo(strings.NewReader(text))
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.fsType == "" || !strings.Contains(text, " - ") {
				t.Errorf("entry %+v from %q", e, text)
			}
		}
	})
}
