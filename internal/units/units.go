// Package units parses and prints sizes, durations and rates the way the
// tool's users write them (fio's and etcd's conventions).
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseSize reads a size in bytes: "2300", "4k", "22m", "1g", "22MiB",
// "10Gi". As in fio, k, m, g and t are powers of 1024 whatever their case or
// suffix (KB, KiB, K all mean 1024).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty size")
	}
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, suffix := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	if num == "" {
		return 0, fmt.Errorf("size %q does not start with a number", s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q is not a number", s)
	}
	suffix = strings.TrimSuffix(strings.TrimSuffix(suffix, "b"), "i")
	var mult float64
	switch suffix {
	case "":
		mult = 1
	case "k":
		mult = 1 << 10
	case "m":
		mult = 1 << 20
	case "g":
		mult = 1 << 30
	case "t":
		mult = 1 << 40
	default:
		return 0, fmt.Errorf("size %q has an unknown unit (use k, m, g or t, e.g. 22m)", s)
	}
	b := v * mult
	if b > math.MaxInt64/2 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	if b != math.Trunc(b) {
		return 0, fmt.Errorf("size %q is not a whole number of bytes", s)
	}
	return int64(b), nil
}

// Bytes prints a byte count in binary units: 2300 B, 22.0 MiB.
func Bytes(n float64) string {
	const unit = 1024
	if math.Abs(n) < unit {
		return fmt.Sprintf("%.0f B", n)
	}
	exp := 0
	for v := math.Abs(n) / unit; v >= unit && exp < 4; v /= unit {
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", n/math.Pow(unit, float64(exp+1)), "KMGTP"[exp])
}

// Seconds prints a duration given in seconds with a unit that suits it and
// three significant digits: 387µs, 8.7ms, 10ms, 1.52s.
func Seconds(s float64) string {
	a := math.Abs(s)
	switch {
	case s == 0:
		return "0s"
	case a < 1e-6:
		return sig3(s*1e9) + "ns"
	case a < 1e-3:
		return sig3(s*1e6) + "µs"
	case a < 1:
		return sig3(s*1e3) + "ms"
	}
	return sig3(s) + "s"
}

// sig3 prints v with three significant digits and no trailing zeros.
func sig3(v float64) string {
	if math.Abs(v) >= 1000 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// Duration prints a time.Duration like Seconds.
func Duration(d time.Duration) string { return Seconds(d.Seconds()) }
