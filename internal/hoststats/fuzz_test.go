package hoststats

import (
	"os"
	"strings"
	"testing"
)

// FuzzParse feeds /proc/diskstats and /proc/stat text: never a panic, and
// counters only from a line that has them all.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/diskstats-6.18", "testdata/stat-6.18"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b), "vda")
	}
	f.Add("   8       0 sda 1 2 3 4 5 6 7 8 9 10 11\n", "sda") // a 4.x kernel: no discard or flush fields
	f.Add("   8       0 sda 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20\n", "sda")
	f.Add("cpu  1 2 3 4 5 6 7 8\ncpu0 x\n", "cpu")
	f.Add("   8 0 sda -1 2 3 4 5 6 7 8 9 10 11\n", "sda")
	f.Add("cpu 18446744073709551615 0 0 0 0 0 0 0\n", "")
	f.Fuzz(func(t *testing.T, text, device string) {
		if c, err := ParseDiskStats(strings.NewReader(text), device); err == nil {
			fields := 0 // of the first line about device
			for _, l := range strings.Split(text, "\n") {
				if f := strings.Fields(l); len(f) >= 14 && f[2] == device {
					fields = len(f)
					break
				}
			}
			if fields == 0 || c.HasFlush != (fields >= 20) {
				t.Errorf("counters %+v for %q from a line of %d fields", c, device, fields)
			}
		}
		if c, err := ParseCPU(strings.NewReader(text)); err == nil && !strings.Contains(text, "cpu") {
			t.Errorf("cpu counters %+v from text without a cpu line", c)
		}
	})
}
