package cgroup

import (
	"strings"
	"testing"
)

// FuzzParseIOFiles feeds the throttle's files (v1
// blkio.throttle.io_serviced and write_iops_device, v2 io.stat and io.max):
// never a panic, and a figure only from a line that names the device.
func FuzzParseIOFiles(f *testing.F) {
	for _, s := range []string{blkioServiced, blkioBytes, ioStatV2, ioMaxV2, "7:0 50\n", "8:0 wiops=max\n", "8:0 Write 18446744073709551616\n",
		"08:00 Write 3\n", "8:0 rbytes=1 wbytes=x\n", "8:0 wbps=\n", "Total 4\n", "8:0 rios=1=2 wios=3\n"} {
		f.Add(s)
	}
	dev := Device{Major: 8}
	f.Fuzz(func(t *testing.T, text string) {
		named := strings.Contains(text, ":")
		if r, w, err := ParseBlkioStat(text, dev); err == nil && (r > 0 || w > 0) && !named {
			t.Errorf("blkio stat %d %d from %q", r, w, text)
		}
		if st, err := ParseIOStat(text, dev); err == nil && (st.ReadOps|st.WriteOps|st.ReadBytes|st.WriteBytes) > 0 && !named {
			t.Errorf("io.stat %+v from %q", st, text)
		}
		if l, err := ParseIOMax(text, dev); err == nil && (l.WriteIOPS < 0 || l.WriteBPS < 0 || l.Any() && !named) {
			t.Errorf("io.max %+v from %q", l, text)
		}
		if n, err := parseDeviceValue(text, dev); err == nil && (n < 0 || n > 0 && !named) {
			t.Errorf("throttle value %d from %q", n, text)
		}
	})
}
