package scale

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/etcdperf/etcdperf/internal/units"
)

// Value sizes are clamped to this range: the smallest holds the value's
// header (magic and put time), the largest stays under etcd's default
// request limit (--max-request-bytes, 1.5 MiB).
const (
	MinValueSize = headerLen
	MaxValueSize = 1 << 20
)

// Distribution shapes of value sizes.
const (
	Fixed     = "fixed"
	Uniform   = "uniform"
	Normal    = "normal"
	LogNormal = "lognormal"
)

// Dist is a distribution of value sizes in bytes. Sizes are drawn from it
// by a pure function of two uniform numbers (Size), so that an object's
// size depends on its number only.
type Dist struct {
	Shape string
	// A and B are the parameters: fixed A; uniform from A to B; normal of
	// mean A and standard deviation B; lognormal of median A and shape
	// (sigma of the logarithm) B.
	A, B float64
}

// ParseDist reads a value size distribution:
//
//	4KiB                   every value 4 KiB (also fixed:4KiB)
//	uniform:1KiB:8KiB      uniform between 1 and 8 KiB
//	normal:4KiB:1KiB       normal, mean 4 KiB, standard deviation 1 KiB
//	lognormal:3KiB:0.5     lognormal, median 3 KiB, sigma 0.5
//
// Sizes take fio's units (k, m; KiB, MiB). Drawn sizes are clamped to
// MinValueSize..MaxValueSize.
func ParseDist(s string) (Dist, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return Dist{}, fmt.Errorf("empty value size")
	}
	parts := strings.Split(t, ":")
	shape := strings.ToLower(parts[0])
	args := parts[1:]
	if len(parts) == 1 {
		shape, args = Fixed, parts
	}
	need := map[string]int{Fixed: 1, Uniform: 2, Normal: 2, LogNormal: 2}
	n, ok := need[shape]
	if !ok {
		return Dist{}, fmt.Errorf("value size %q: unknown distribution %q (fixed, uniform, normal or lognormal, e.g. lognormal:3KiB:0.5)", s, parts[0])
	}
	if len(args) != n {
		return Dist{}, fmt.Errorf("value size %q: %s takes %d parameter(s) separated by ':', e.g. %s", s, shape, n, distExample(shape))
	}
	size := func(a string) (float64, error) {
		v, err := units.ParseSize(a)
		if err != nil {
			return 0, fmt.Errorf("value size %q: %w", s, err)
		}
		if v > MaxValueSize {
			return 0, fmt.Errorf("value size %q: %s is over the largest value etcdperf writes (%s)", s, a, units.Bytes(MaxValueSize))
		}
		return float64(v), nil
	}
	d := Dist{Shape: shape}
	var err error
	if d.A, err = size(args[0]); err != nil {
		return Dist{}, err
	}
	switch shape {
	case Uniform, Normal:
		if d.B, err = size(args[1]); err != nil {
			return Dist{}, err
		}
	case LogNormal:
		d.B, err = strconv.ParseFloat(strings.TrimSpace(args[1]), 64)
		if err != nil || math.IsNaN(d.B) || d.B < 0 || d.B > 3 {
			return Dist{}, fmt.Errorf("value size %q: sigma %q must be a number from 0 to 3 (0.5 spreads most values over half to twice the median)", s, args[1])
		}
	}
	switch {
	case d.Shape == Uniform && d.B < d.A:
		return Dist{}, fmt.Errorf("value size %q: the upper bound is below the lower", s)
	case d.Shape != Normal && d.A < MinValueSize:
		return Dist{}, fmt.Errorf("value size %q: values hold at least %d bytes (a header and the time of the put)", s, MinValueSize)
	}
	return d, nil
}

func distExample(shape string) string {
	switch shape {
	case Uniform:
		return "uniform:1KiB:8KiB"
	case Normal:
		return "normal:4KiB:1KiB"
	case LogNormal:
		return "lognormal:3KiB:0.5"
	}
	return "4KiB"
}

// Size draws a size from two independent uniform numbers in [0, 1).
func (d Dist) Size(u1, u2 float64) int {
	var v float64
	switch d.Shape {
	case Uniform:
		v = d.A + u1*(d.B-d.A+1)
	case Normal:
		v = d.A + d.B*gauss(u1, u2)
	case LogNormal:
		v = d.A * math.Exp(d.B*gauss(u1, u2))
	default:
		v = d.A
	}
	return int(math.Min(math.Max(math.Floor(v), MinValueSize), MaxValueSize))
}

// gauss turns two uniform numbers into a standard normal one (Box-Muller).
func gauss(u1, u2 float64) float64 {
	u1 = 1 - u1 // (0, 1]: the logarithm is finite
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

// String writes the distribution back in ParseDist's syntax.
func (d Dist) String() string {
	b := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	switch d.Shape {
	case Uniform, Normal, LogNormal:
		return d.Shape + ":" + b(d.A) + ":" + b(d.B)
	}
	return b(d.A)
}

// Describe says in words what the distribution makes.
func (d Dist) Describe() string {
	sz := func(v float64) string { return units.Bytes(v) }
	switch d.Shape {
	case Uniform:
		return fmt.Sprintf("uniform from %s to %s", sz(d.A), sz(d.B))
	case Normal:
		return fmt.Sprintf("normal, mean %s, stddev %s", sz(d.A), sz(d.B))
	case LogNormal:
		lo, hi := d.A*math.Exp(-1.645*d.B), d.A*math.Exp(1.645*d.B)
		return fmt.Sprintf("lognormal, median %s, 90%% between %s and %s", sz(d.A), sz(lo), sz(hi))
	}
	return sz(d.A)
}
