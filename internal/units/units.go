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

// Size prints a byte count exactly, in the largest binary unit that divides
// it: 22 MiB, 4 KiB, 2300 B (ParseSize reads it back).
func Size(n int64) string {
	for _, u := range []struct {
		name string
		v    int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.v == 0 {
			return fmt.Sprintf("%d %s", n/u.v, u.name)
		}
	}
	return fmt.Sprintf("%d B", n)
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

// Cores formats a number of CPUs: 0.05, 0.5, 2.
func Cores(c float64) string { return strconv.FormatFloat(c, 'g', 3, 64) }

// Value prints a value in its unit as every text of etcdperf does: "s",
// "ops/s", "ratio" (a percentage), "bytes", "bytes/s", "count", "x" (a
// multiple).
func Value(v float64, unit string) string {
	switch unit {
	case "s":
		return Seconds(v)
	case "ratio":
		return fmt.Sprintf("%.1f%%", v*100)
	case "ops/s", "1/s", "IOPS":
		return fmt.Sprintf("%.0f/s", v)
	case "bytes":
		return Bytes(v)
	case "bytes/s", "B/s":
		return Bytes(v) + "/s"
	case "count":
		return fmt.Sprintf("%.0f", v)
	case "x":
		return Ratio(v)
	}
	return fmt.Sprintf("%g %s", v, unit)
}

// Ratio prints a ratio with a precision that suits it, never in exponent
// notation: 7740x, 45.9x, 0.62x, 0.0032x.
func Ratio(r float64) string {
	switch {
	case r >= 100:
		return fmt.Sprintf("%.0fx", r)
	case r >= 10:
		return fmt.Sprintf("%.1fx", r)
	case r >= 0.01:
		return fmt.Sprintf("%.2fx", r)
	}
	// Two significant digits: 0.00007x.
	v, _ := strconv.ParseFloat(strconv.FormatFloat(r, 'g', 2, 64), 64)
	return strconv.FormatFloat(v, 'f', -1, 64) + "x"
}

// Headroom says how far a value is from a limit it must stay under, given
// h = limit/value and the limit as a noun ("the limit", "the 10ms limit"):
// "12x under the limit", "20% under the limit", over it "1.7x the limit",
// "far under the limit" for a value of 0 (h = +Inf); "" when h <= 0 (no
// value).
func Headroom(h float64, limit string) string {
	switch {
	case h <= 0:
		return ""
	case math.IsInf(h, 1):
		return "far under " + limit
	case h >= 2:
		return fmt.Sprintf("%.0fx under %s", h, limit)
	case h > 1:
		return fmt.Sprintf("%.0f%% under %s", (1-1/h)*100, limit)
	}
	return fmt.Sprintf("%.1fx %s", 1/h, limit)
}

// Quantile prints a quantile of a latency distribution whose smallest
// distinguishable value is resolution (0: any): a Prometheus histogram's
// quantile at or below its lowest bucket reads "<= 1ms", since etcd's
// histogram only says that it was below that bound, not by how much.
func Quantile(v, resolution float64, bucketed bool) string {
	if bucketed && resolution > 0 && v <= resolution {
		return "<= " + Seconds(resolution)
	}
	return Seconds(v)
}

// EtcdFloor is the upper bound of the lowest bucket of etcd's disk
// histograms (etcd_disk_wal_fsync_duration_seconds and
// etcd_disk_backend_commit_duration_seconds start at 1ms): a quantile that
// falls in it is known only to be at most that.
const EtcdFloor = 0.001

// P99 prints a p99 read from etcd's histogram: "<= 1ms" when it fell in
// the lowest bucket (atFloor), else the value.
func P99(v float64, atFloor bool) string {
	if atFloor {
		return "<= " + Seconds(EtcdFloor)
	}
	return Seconds(v)
}

// Thousands prints v rounded to a whole number with thousands
// separators, as rates are written in answers: 4,000.
func Thousands(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return sign + s
}

// Count says a count of things: "1 fdatasync", "3 fdatasyncs".
func Count(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.FormatInt(n, 10) + " " + what + "s"
}

// ShortDuration prints a duration as a flag takes it, without its zero
// minutes and seconds: 1h instead of 1h0m0s, 5m, 2m30s.
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
