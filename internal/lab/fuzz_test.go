package lab

import (
	"strconv"
	"strings"
	"testing"
)

// FuzzParseFaults feeds --fault values: never a panic, a one-line error,
// and an accepted fault says itself in words that read back the same.
func FuzzParseFaults(f *testing.F) {
	for _, s := range []string{"3:cpu-limit=0.1", "all:slow-fsync=15ms", "2:peer-latency=200ms,20ms", "1:iops-limit=200",
		"all:write-bps-limit=10m", "2:write-bps-limit=10MiB/s", "1:iops-limit=0", "1:write-bps-limit=1.5", "x:y=z", "1:iops-limit=1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		faults, err := ParseFaults([]string{spec}, 3)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one line", err)
			}
			return
		}
		for i, ft := range faults {
			if !ft.Any() {
				continue
			}
			var specs []string
			for _, part := range strings.Fields(ft.String()) {
				specs = append(specs, strconv.Itoa(i+1)+":"+part)
			}
			again, err := ParseFaults(specs, 3)
			if err != nil || again[i] != ft {
				t.Errorf("%q: member %d %+v says %q, which reads back as %+v %v", spec, i+1, ft, ft.String(), again, err)
			}
		}
	})
}
