package scale

import (
	"math"
	"sort"
	"strings"
	"testing"
)

func TestParseDist(t *testing.T) {
	good := []struct {
		in   string
		want Dist
	}{
		{"4096", Dist{Shape: Fixed, A: 4096}},
		{"4KiB", Dist{Shape: Fixed, A: 4096}},
		{"fixed:1k", Dist{Shape: Fixed, A: 1024}},
		{"uniform:1KiB:8KiB", Dist{Shape: Uniform, A: 1024, B: 8192}},
		{"Normal:4k:1k", Dist{Shape: Normal, A: 4096, B: 1024}},
		{"lognormal:3KiB:0.5", Dist{Shape: LogNormal, A: 3072, B: 0.5}},
		{" lognormal:768:0 ", Dist{Shape: LogNormal, A: 768}},
	}
	for _, c := range good {
		d, err := ParseDist(c.in)
		if err != nil || d != c.want {
			t.Errorf("%q: %+v, %v; want %+v", c.in, d, err, c.want)
		}
		// String writes it back in a form that reads the same.
		if back, err := ParseDist(d.String()); err != nil || back != d {
			t.Errorf("%q: %q reads back as %+v, %v", c.in, d.String(), back, err)
		}
	}
	bad := map[string]string{
		"":                    "empty",
		"zipf:1k":             "unknown distribution",
		"uniform:1k":          "takes 2 parameter",
		"lognormal:3k:0.5:1":  "takes 2 parameter",
		"uniform:8k:1k":       "upper bound is below",
		"lognormal:3k:x":      "sigma",
		"lognormal:3k:-1":     "sigma",
		"lognormal:3k:NaN":    "sigma",
		"4q":                  "unknown unit",
		"2m":                  "over the largest value",
		"8":                   "at least 12 bytes",
		"uniform:4:100":       "at least 12 bytes",
		"fixed:1.5":           "whole number",
		"lognormal:3KiB:0.5x": "sigma",
	}
	for in, want := range bad {
		if _, err := ParseDist(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", in, err, want)
		}
	}
}

// The sizes follow the distribution: the lognormal's median and spread,
// the uniform's bounds, a fixed size, and every size within the clamp.
func TestDistSizes(t *testing.T) {
	draw := func(d Dist) []float64 {
		var out []float64
		for i := range uint64(20000) {
			h := mix(i)
			out = append(out, float64(d.Size(unit(h), unit(mix(h)))))
		}
		sort.Float64s(out)
		return out
	}
	q := func(s []float64, p float64) float64 { return s[int(p*float64(len(s)-1))] }

	ln := draw(Dist{Shape: LogNormal, A: 3072, B: 0.5})
	if m := q(ln, 0.5); math.Abs(m-3072)/3072 > 0.03 {
		t.Errorf("lognormal median %v, want about 3072", m)
	}
	// 90% of a lognormal lies within exp(±1.645 sigma) of the median.
	if lo, hi := q(ln, 0.05), q(ln, 0.95); math.Abs(lo-3072*math.Exp(-0.8225))/lo > 0.05 || math.Abs(hi-3072*math.Exp(0.8225))/hi > 0.05 {
		t.Errorf("lognormal 5%%..95%% %v..%v", lo, hi)
	}
	un := draw(Dist{Shape: Uniform, A: 1000, B: 2000})
	if un[0] < 1000 || un[len(un)-1] > 2000 || math.Abs(q(un, 0.5)-1500) > 30 {
		t.Errorf("uniform min %v median %v max %v", un[0], q(un, 0.5), un[len(un)-1])
	}
	no := draw(Dist{Shape: Normal, A: 100, B: 200})
	if no[0] != MinValueSize || math.Abs(q(no, 0.5)-100) > 10 {
		t.Errorf("normal clamped at %v, median %v", no[0], q(no, 0.5))
	}
	if s := (Dist{Shape: Fixed, A: 4096}).Size(0.3, 0.9); s != 4096 {
		t.Errorf("fixed size %d", s)
	}
	if s := (Dist{Shape: LogNormal, A: 1 << 20, B: 3}).Size(0.999999, 0); s != MaxValueSize {
		t.Errorf("large draw %d not clamped to %d", s, MaxValueSize)
	}
	if !strings.Contains((Dist{Shape: LogNormal, A: 3072, B: 0.5}).Describe(), "median 3.0 KiB") {
		t.Error((Dist{Shape: LogNormal, A: 3072, B: 0.5}).Describe())
	}
}

func FuzzParseDist(f *testing.F) {
	for _, s := range []string{"4KiB", "uniform:1KiB:8KiB", "normal:4k:1k", "lognormal:3KiB:0.5", "lognormal:1m:3", "fixed:12", "::", "uniform:1e3:1e4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDist(s)
		if err != nil {
			return
		}
		for _, u := range [][2]float64{{0, 0}, {0.5, 0.25}, {0.999999, 0.999999}, {1e-12, 0.5}} {
			if n := d.Size(u[0], u[1]); n < MinValueSize || n > MaxValueSize {
				t.Fatalf("%q draws %d", s, n)
			}
		}
		if back, err := ParseDist(d.String()); err != nil || back != d {
			t.Fatalf("%q: %q reads back as %+v, %v", s, d.String(), back, err)
		}
	})
}
