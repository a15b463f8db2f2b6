package etcdlog

import (
	"math"
	"strconv"
	"time"
)

// parseDur reads a duration as etcd logs it: Go's format ("1.530802357s",
// "707.213µs", "1m22.15s"), or a bare number, which zap writes for
// durations with its seconds encoder (a float) or nanos encoder (an
// integer of a million or more is read as nanoseconds).
func parseDur(b []byte) (time.Duration, bool) {
	if len(b) == 0 || len(b) > 64 {
		return 0, false
	}
	if c := b[len(b)-1]; c >= '0' && c <= '9' {
		f, err := strconv.ParseFloat(string(b), 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) || f > 1e18 {
			return 0, false
		}
		if f >= 1e6 && f == math.Trunc(f) {
			return time.Duration(f), true
		}
		return time.Duration(math.Round(f * 1e9)), true
	}
	var total float64
	i := 0
	neg := false
	if b[0] == '-' || b[0] == '+' {
		neg = b[0] == '-'
		i++
	}
	if i == len(b) {
		return 0, false
	}
	for i < len(b) {
		// number
		start := i
		for i < len(b) && (b[i] >= '0' && b[i] <= '9' || b[i] == '.') {
			i++
		}
		if i == start {
			return 0, false
		}
		v, err := strconv.ParseFloat(string(b[start:i]), 64)
		if err != nil {
			return 0, false
		}
		// unit
		u := i
		for i < len(b) && !(b[i] >= '0' && b[i] <= '9' || b[i] == '.') {
			i++
		}
		var mult float64
		switch string(b[u:i]) {
		case "ns":
			mult = 1
		case "us", "µs", "μs":
			mult = 1e3
		case "ms":
			mult = 1e6
		case "s":
			mult = 1e9
		case "m":
			mult = 60e9
		case "h":
			mult = 3600e9
		default:
			return 0, false
		}
		total += v * mult
	}
	if total > math.MaxInt64 || neg {
		return 0, false
	}
	return time.Duration(math.Round(total)), true
}
