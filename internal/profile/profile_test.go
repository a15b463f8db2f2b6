package profile

import (
	"testing"
	"time"
)

// The profiles are etcdctl's (etcdctl/ctlv3/command/check.go).
func TestProfilesAreEtcdctls(t *testing.T) {
	want := map[string][2]float64{"s": {50, 150}, "m": {200, 1000}, "l": {500, 8000}, "xl": {1000, 15000}}
	for _, alias := range [][2]string{{"s", "s"}, {"small", "s"}, {"m", "m"}, {"medium", "m"}, {"l", "l"}, {"large", "l"}, {"xl", "xl"}, {"xLarge", "xl"}, {" XL ", "xl"}} {
		p, err := Lookup(alias[0])
		if err != nil {
			t.Fatalf("%q: %v", alias[0], err)
		}
		w := want[alias[1]]
		if p.Name != alias[1] || float64(p.Clients) != w[0] || p.Rate != w[1] || p.Duration != time.Minute || p.KeySize != 256 || p.ValSize != 1024 || p.Source == "" {
			t.Errorf("%q: %+v", alias[0], p)
		}
	}
	keys := map[string]int64{"s": 10_000, "m": 100_000, "l": 1_000_000, "xl": 3_000_000}
	for name, n := range keys {
		p, err := LookupScale(name)
		if err != nil || p.Keys != n || p.KeySize+p.ValSize != 1024 {
			t.Errorf("datascale %s: %+v %v", name, p, err)
		}
	}
	for _, bad := range []string{"", "xxl", "sm"} {
		if _, err := Lookup(bad); err == nil {
			t.Errorf("Lookup(%q) accepted", bad)
		}
		if _, err := LookupScale(bad); err == nil {
			t.Errorf("LookupScale(%q) accepted", bad)
		}
	}
}

// A sweep's clients grow with the rate as check perf's profiles do: the
// profiles' own at their rates, between them on the log of the rate.
func TestClientsFor(t *testing.T) {
	for r, want := range map[float64]int{10: 50, 150: 50, 1000: 200, 2000: 300, 4000: 400, 8000: 500, 15000: 1000, 30000: 1000} {
		if got := ClientsFor(r); got != want {
			t.Errorf("ClientsFor(%g) = %d, want %d", r, got, want)
		}
	}
}
