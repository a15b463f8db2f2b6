package judge

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// TunableFlags are the flags the tuning computes, whose values in force a
// command may be told (--current-flag) or read from a node.
var TunableFlags = []string{FlagElection, FlagHeartbeat, FlagQuota, FlagCompactionMode, FlagCompactionRetention, FlagSnapshotCount}

// ParseFlag reads the value in force of one of TunableFlags as etcd takes
// it: the timers as whole milliseconds or a duration (100, 100ms, 1s),
// the quota in bytes or as a size (8589934592, 8GiB), the compaction mode
// periodic or revision, the retention as etcd reads it for its mode (a
// duration, hours, or revisions: kept as written), the snapshot count as
// a number of entries. The FlagValue's From
// is left to the caller.
func ParseFlag(name, value string) (Value float64, Text string, err error) {
	value = strings.TrimSpace(value)
	switch name {
	case FlagHeartbeat, FlagElection:
		v, err := milliseconds(value)
		return v, "", err
	case FlagQuota:
		n, err := units.ParseSize(value)
		if err != nil || n < 0 {
			return 0, "", fmt.Errorf("%q is not a number of bytes (8589934592, 8GiB)", value)
		}
		return float64(n), "", nil
	case FlagSnapshotCount:
		n, err := strconv.ParseUint(value, 10, 64)
		if err != nil || n == 0 {
			return 0, "", fmt.Errorf("%q is not a positive number of entries", value)
		}
		return float64(n), "", nil
	case FlagCompactionMode:
		if value != "periodic" && value != "revision" {
			return 0, "", fmt.Errorf("%q is not an auto-compaction mode (periodic, revision)", value)
		}
		return 0, value, nil
	case FlagCompactionRetention:
		if _, err := strconv.ParseFloat(value, 64); err != nil {
			if d, derr := time.ParseDuration(value); derr != nil || d < 0 {
				return 0, "", fmt.Errorf("%q is not a retention (1h, 30m, a number of hours or of revisions)", value)
			}
		}
		return 0, value, nil
	}
	return 0, "", fmt.Errorf("%s is not a flag the tuning computes (%s)", name, strings.Join(TunableFlags, ", "))
}

// milliseconds reads a timer's value as etcd takes it (a whole number of
// milliseconds) or as a duration.
func milliseconds(s string) (float64, error) {
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		if n == 0 {
			return 0, errors.New("a time of 0ms is not etcd's")
		}
		return float64(n), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 || d%time.Millisecond != 0 {
		return 0, fmt.Errorf("%q is not a whole number of milliseconds (100, 100ms, 1s)", s)
	}
	return float64(d / time.Millisecond), nil
}

// FlagsInForce are etcd's tunable flags in force on a node: as its
// configuration sets them, else etcd's defaults (the quota is left to
// the member's own gauge); a value etcd would not take is left unknown.
func FlagsInForce(f result.FoundEtcd) []result.FlagValue {
	defaults := map[string]string{FlagHeartbeat: strconv.Itoa(DefaultHeartbeatMs), FlagElection: strconv.Itoa(DefaultElectionMs), FlagCompactionMode: "periodic", FlagCompactionRetention: "0"}
	var out []result.FlagValue
	for _, name := range TunableFlags {
		raw, set := f.Flags[name]
		from := f.File
		if !set {
			if raw, set = defaults[name]; !set {
				continue
			}
			from = "etcd's default (" + f.File + " does not set it)"
		}
		if v, text, err := ParseFlag(name, raw); err == nil {
			out = append(out, result.FlagValue{Name: name, Value: v, Text: text, From: from})
		}
	}
	return out
}
