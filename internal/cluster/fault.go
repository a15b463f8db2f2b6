package cluster

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/cgroup"
	"github.com/etcdperf/etcdperf/internal/netfault"
	"github.com/etcdperf/etcdperf/internal/slowfs"
)

// Fault is what an embedded member process suffers on purpose, to rehearse
// what a slow disk, a starved CPU or a slow network does to etcd.
type Fault struct {
	// SlowFsync runs the member on a slow view of its data dir: every
	// fsync and fdatasync waits this much longer (etcdperf slowdisk).
	SlowFsync time.Duration `json:"slow_fsync,omitempty"`
	// CPULimit puts the member process in a CPU cgroup of its own with a
	// quota of this many CPUs.
	CPULimit float64 `json:"cpu_limit,omitempty"`
	// PeerDelay puts the member's peer port behind a slow link: every
	// round trip of the other members to it takes this much longer.
	PeerDelay netfault.Delay `json:"peer_delay,omitzero"`
}

// Any reports whether the fault does anything.
func (f Fault) Any() bool { return f.SlowFsync > 0 || f.CPULimit > 0 || f.PeerDelay.Latency > 0 }

// String says what the fault does, in the words of the --fault flag.
func (f Fault) String() string {
	var parts []string
	if f.SlowFsync > 0 {
		parts = append(parts, "slow-fsync="+f.SlowFsync.String())
	}
	if f.CPULimit > 0 {
		parts = append(parts, "cpu-limit="+strconv.FormatFloat(f.CPULimit, 'g', -1, 64))
	}
	if d := f.PeerDelay; d.Latency > 0 {
		s := "peer-latency=" + d.Latency.String()
		if d.Jitter > 0 {
			s += "," + d.Jitter.String()
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// Fault kinds, as --fault names them.
const (
	FaultSlowFsync   = "slow-fsync"
	FaultCPULimit    = "cpu-limit"
	FaultPeerLatency = "peer-latency"
)

// Validate checks a fault's values, and that this host can make it (a CPU
// cgroup it can write, FUSE for a slow disk).
func (f Fault) Validate() error {
	if f.SlowFsync != 0 {
		if err := (slowfs.Config{FsyncDelay: f.SlowFsync}).Validate(); err != nil {
			return fmt.Errorf("%s: %w", FaultSlowFsync, err)
		}
		if err := SlowDiskSupported(); err != nil {
			return fmt.Errorf("%s: %w", FaultSlowFsync, err)
		}
	}
	if f.CPULimit != 0 {
		if err := cgroup.ValidateCores(f.CPULimit); err != nil {
			return fmt.Errorf("%s: %w", FaultCPULimit, err)
		}
		if err := cgroup.Host.CanLimit(); err != nil {
			return fmt.Errorf("%s: %w", FaultCPULimit, err)
		}
	}
	if f.PeerDelay != (netfault.Delay{}) {
		if err := f.PeerDelay.Validate(); err != nil {
			return fmt.Errorf("%s: %w", FaultPeerLatency, err)
		}
	}
	return nil
}

// ParseDelay reads D[,JITTER], e.g. 200ms or 200ms,20ms.
func ParseDelay(s string) (netfault.Delay, error) {
	lat, jit, _ := strings.Cut(s, ",")
	var d netfault.Delay
	var err error
	if d.Latency, err = time.ParseDuration(strings.TrimSpace(lat)); err != nil {
		return d, fmt.Errorf("%q: want a latency and an optional jitter, e.g. 200ms or 200ms,20ms", s)
	}
	if jit != "" {
		if d.Jitter, err = time.ParseDuration(strings.TrimSpace(jit)); err != nil {
			return d, fmt.Errorf("%q: the jitter %q is not a duration", s, jit)
		}
	}
	return d, d.Validate()
}

// ParseFaults reads --fault flags for a cluster of n members: each is
// WHO:KIND=VALUE, WHO a member's number (1 to n: member etcdperf-WHO) or
// "all", KIND slow-fsync (a duration), cpu-limit (CPUs) or peer-latency
// (D[,JITTER]). It returns one Fault per member.
func ParseFaults(specs []string, n int) ([]Fault, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	faults := make([]Fault, n)
	set := map[string]bool{}
	for _, spec := range specs {
		who, kv, ok := strings.Cut(spec, ":")
		kind, val, ok2 := strings.Cut(kv, "=")
		if !ok || !ok2 || val == "" {
			return nil, fmt.Errorf("--fault %q: want MEMBER:KIND=VALUE, e.g. 3:cpu-limit=0.1, all:slow-fsync=15ms or 2:peer-latency=200ms", spec)
		}
		var members []int
		if who == "all" {
			for i := range n {
				members = append(members, i)
			}
		} else {
			m, err := strconv.Atoi(who)
			if err != nil || m < 1 || m > n {
				return nil, fmt.Errorf("--fault %q: the member is a number from 1 to %d (--members) or all", spec, n)
			}
			members = []int{m - 1}
		}
		var one Fault
		switch kind {
		case FaultSlowFsync:
			d, err := time.ParseDuration(val)
			if err != nil {
				return nil, fmt.Errorf("--fault %q: %q is not a duration, e.g. 15ms", spec, val)
			}
			if d <= 0 {
				return nil, fmt.Errorf("--fault %q: the fsync delay must be positive", spec)
			}
			one.SlowFsync = d
		case FaultCPULimit:
			c, err := strconv.ParseFloat(val, 64)
			if err != nil {
				return nil, fmt.Errorf("--fault %q: %q is not a number of CPUs, e.g. 0.1", spec, val)
			}
			if err := cgroup.ValidateCores(c); err != nil {
				return nil, fmt.Errorf("--fault %q: %w", spec, err)
			}
			one.CPULimit = c
		case FaultPeerLatency:
			if n < 2 {
				return nil, fmt.Errorf("--fault %q: a single member has no peers: give --members 2 or more", spec)
			}
			d, err := ParseDelay(val)
			if err != nil {
				return nil, fmt.Errorf("--fault %q: %w", spec, err)
			}
			one.PeerDelay = d
		default:
			return nil, fmt.Errorf("--fault %q: unknown kind %q (slow-fsync, cpu-limit or peer-latency)", spec, kind)
		}
		if err := one.Validate(); err != nil {
			return nil, fmt.Errorf("--fault %q: %w", spec, err)
		}
		for _, m := range members {
			key := strconv.Itoa(m) + kind
			if set[key] {
				return nil, fmt.Errorf("--fault %q: member %d already has a %s fault", spec, m+1, kind)
			}
			set[key] = true
			faults[m] = merge(faults[m], one)
		}
	}
	return faults, nil
}

func merge(a, b Fault) Fault {
	if b.SlowFsync > 0 {
		a.SlowFsync = b.SlowFsync
	}
	if b.CPULimit > 0 {
		a.CPULimit = b.CPULimit
	}
	if b.PeerDelay.Latency > 0 {
		a.PeerDelay = b.PeerDelay
	}
	return a
}
