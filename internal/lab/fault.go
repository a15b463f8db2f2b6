package lab

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/cgroup"
	"github.com/etcdperf/etcdperf/internal/netfault"
	"github.com/etcdperf/etcdperf/internal/slowfs"
	"github.com/etcdperf/etcdperf/internal/units"
)

// Fault is what an embedded member process suffers on purpose, to rehearse
// what a slow disk, a volume's IOPS cap, a starved CPU or a slow network
// does to etcd.
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
	// IOPSLimit caps the member process's write operations per second on
	// the disk of its data dir, as a cloud volume's IOPS limit does (a
	// blkio or io cgroup of its own: v1 blkio.throttle.write_iops_device,
	// v2 io.max wiops).
	IOPSLimit int64 `json:"iops_limit,omitempty"`
	// WriteBPSLimit caps the bytes it writes per second there (v1
	// blkio.throttle.write_bps_device, v2 io.max wbps).
	WriteBPSLimit int64 `json:"write_bps_limit,omitempty"`
	// VolumeIOPS runs the member on a volume of its own whose writes are
	// capped below it, as a cloud volume's are: an ext4 file system on a
	// loop device (direct I/O) over a file on the disk of its data dir's
	// parent, the member in a blkio/io cgroup whose writes to that disk
	// are capped (MountVolume). The member's own device, the loop device,
	// shows the writes queued; no cgroup caps the member's writes to it.
	VolumeIOPS int64 `json:"volume_iops,omitempty"`
	// VolumeWriteBPS caps the volume's bytes written per second likewise.
	VolumeWriteBPS int64 `json:"volume_write_bps,omitempty"`
	// BurstIOPS, BaselineIOPS and BurstCredits are a burst bucket, as
	// AWS gp2 volumes have one: the member's writes are capped at
	// BurstIOPS while it has credits and at BaselineIOPS once they are
	// spent; every write spends a credit, and credits are earned at
	// BaselineIOPS a second, up to BurstCredits (the balance it starts
	// with). The cap is the cgroup's on the disk of its data dir (as
	// IOPSLimit), or with BurstVolume the one under its own volume (as
	// VolumeIOPS); a token bucket in the member process reads the group's
	// counters every BucketTick and rewrites the cap when it changes.
	BurstIOPS    int64 `json:"burst_iops,omitempty"`
	BaselineIOPS int64 `json:"baseline_iops,omitempty"`
	BurstCredits int64 `json:"burst_credits,omitempty"`
	BurstVolume  bool  `json:"burst_volume,omitempty"`
}

// Any reports whether the fault does anything.
func (f Fault) Any() bool {
	return f.SlowFsync > 0 || f.CPULimit > 0 || f.PeerDelay.Latency > 0 || f.IOLimit().Any() || f.VolumeLimit().Any()
}

// IOLimit is the cap on the member's writes, as package cgroup takes it.
func (f Fault) IOLimit() cgroup.IOLimit {
	if f.BurstIOPS > 0 && !f.BurstVolume {
		// The bucket starts full: at its burst rate.
		return cgroup.IOLimit{WriteIOPS: f.BurstIOPS}
	}
	return cgroup.IOLimit{WriteIOPS: f.IOPSLimit, WriteBPS: f.WriteBPSLimit}
}

// VolumeLimit is the cap on the writes of the member's volume to the disk
// under it, as package cgroup takes it.
func (f Fault) VolumeLimit() cgroup.IOLimit {
	if f.BurstIOPS > 0 && f.BurstVolume {
		return cgroup.IOLimit{WriteIOPS: f.BurstIOPS}
	}
	return cgroup.IOLimit{WriteIOPS: f.VolumeIOPS, WriteBPS: f.VolumeWriteBPS}
}

// cgroups reports whether the fault puts the member in a cgroup of its own.
func (f Fault) cgroups() bool { return f.CPULimit > 0 || f.IOLimit().Any() || f.VolumeLimit().Any() }

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
		parts = append(parts, "peer-latency="+DelayArg(d))
	}
	if f.IOPSLimit > 0 {
		parts = append(parts, FaultIOPSLimit+"="+strconv.FormatInt(f.IOPSLimit, 10))
	}
	if f.WriteBPSLimit > 0 {
		parts = append(parts, FaultWriteBPSLimit+"="+strings.ReplaceAll(units.Size(f.WriteBPSLimit), " ", ""))
	}
	if f.VolumeIOPS > 0 {
		parts = append(parts, FaultVolumeIOPS+"="+strconv.FormatInt(f.VolumeIOPS, 10))
	}
	if f.VolumeWriteBPS > 0 {
		parts = append(parts, FaultVolumeWriteBPS+"="+strings.ReplaceAll(units.Size(f.VolumeWriteBPS), " ", ""))
	}
	if f.BurstIOPS > 0 {
		s := fmt.Sprintf("%s=%d,%s=%d,%s=%d", FaultBurstIOPS, f.BurstIOPS, burstBaseline, f.BaselineIOPS, burstCredits, f.BurstCredits)
		if f.BurstVolume {
			s += "," + burstVolume + "=true"
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
	// FaultIOPSLimit and FaultWriteBPSLimit cap a member's writes on the
	// disk of its data dir (operations, bytes per second).
	FaultIOPSLimit     = "iops-limit"
	FaultWriteBPSLimit = "write-bps-limit"
	// FaultVolumeIOPS and FaultVolumeWriteBPS run a member on a volume of
	// its own capped below it (operations, bytes per second).
	FaultVolumeIOPS     = "volume-iops"
	FaultVolumeWriteBPS = "volume-write-bps"
	// FaultBurstIOPS is a burst bucket on the cgroup cap
	// (burst-iops=B,baseline-iops=R,credits=C), FaultVolumeBurstIOPS the
	// same on the capped volume (or burst-iops with volume=true).
	FaultBurstIOPS       = "burst-iops"
	FaultVolumeBurstIOPS = "volume-burst-iops"
)

// The burst bucket's other settings, after its burst rate.
const (
	burstBaseline = "baseline-iops"
	burstCredits  = "credits"
	burstVolume   = "volume"
)

// BucketTick is how often a burst bucket reads its group's counters.
const BucketTick = 100 * time.Millisecond

// ValidateBurst checks a burst bucket's figures: a burst above a baseline
// of at least 1 write/s, and credits.
func (f Fault) ValidateBurst() error {
	switch {
	case f.BurstIOPS == 0 && f.BaselineIOPS == 0 && f.BurstCredits == 0:
		return nil
	case f.BaselineIOPS < 1:
		return fmt.Errorf("the baseline (%s) must be a whole number of write operations per second of at least 1, e.g. 300", burstBaseline)
	case f.BurstIOPS <= f.BaselineIOPS:
		return fmt.Errorf("the burst rate (%d) must be above the baseline (%d)", f.BurstIOPS, f.BaselineIOPS)
	case f.BurstCredits < 1:
		return fmt.Errorf("the bucket needs credits (%s, write operations above the baseline it may spend, e.g. 60000)", burstCredits)
	}
	return nil
}

// parseBurst reads a burst bucket: B,baseline-iops=R,credits=C[,volume=true].
func parseBurst(val string, volume bool) (Fault, error) {
	f := Fault{BurstVolume: volume}
	fields := strings.Split(val, ",")
	var err error
	if f.BurstIOPS, err = strconv.ParseInt(strings.TrimSpace(fields[0]), 10, 64); err != nil || f.BurstIOPS < 1 {
		return f, fmt.Errorf("%q is not a whole number of write operations per second of at least 1, e.g. 3000,baseline-iops=300,credits=60000", fields[0])
	}
	for _, kv := range fields[1:] {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		switch k {
		case burstBaseline, burstCredits:
			n, perr := strconv.ParseInt(v, 10, 64)
			if perr != nil || n < 1 {
				return f, fmt.Errorf("%s %q is not a whole number of at least 1", k, v)
			}
			if k == burstBaseline {
				f.BaselineIOPS = n
			} else {
				f.BurstCredits = n
			}
		case burstVolume:
			b, perr := strconv.ParseBool(v)
			if perr != nil {
				return f, fmt.Errorf("volume %q is not true or false", v)
			}
			f.BurstVolume = f.BurstVolume || b
		default:
			return f, fmt.Errorf("unknown setting %q of a burst bucket (%s, %s, %s)", k, burstBaseline, burstCredits, burstVolume)
		}
	}
	return f, f.ValidateBurst()
}

// Validate checks a fault's values, and that this host can make it (a CPU
// or blkio/io cgroup it can write, FUSE for a slow disk). Whether the data
// dir has a disk to cap is ValidateDir's.
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
	if f.BurstIOPS != 0 || f.BaselineIOPS != 0 || f.BurstCredits != 0 {
		if err := f.ValidateBurst(); err != nil {
			return fmt.Errorf("%s: %w", FaultBurstIOPS, err)
		}
	}
	if f.IOPSLimit != 0 || f.WriteBPSLimit != 0 || f.BurstIOPS != 0 && !f.BurstVolume {
		kind := f.ioKind()
		if err := f.IOLimit().Validate(); err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		if err := f.conflict(); err != nil {
			return err
		}
		if err := cgroup.Host.CanLimitIO(); err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
	}
	if f.VolumeIOPS != 0 || f.VolumeWriteBPS != 0 || f.BurstIOPS != 0 && f.BurstVolume {
		kind := f.volumeKind()
		if err := f.VolumeLimit().Validate(); err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		if err := f.conflict(); err != nil {
			return err
		}
		if err := VolumeSupported(); err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		if err := cgroup.Host.CanLimitIO(); err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
	}
	return nil
}

// conflict says which faults of f cannot go together on one member.
func (f Fault) conflict() error {
	if f.SlowFsync > 0 && f.IOLimit().Any() {
		return fmt.Errorf("%s and %s cannot go on the same member: the slow view's own process does that member's writes, out of the cap's reach; give them to different members", f.ioKind(), FaultSlowFsync)
	}
	if f.SlowFsync > 0 && f.VolumeLimit().Any() {
		return fmt.Errorf("%s and %s cannot go on the same member: the slow view's own process does that member's writes, out of the volume's cap; give them to different members", f.volumeKind(), FaultSlowFsync)
	}
	if f.BurstIOPS > 0 && (f.IOPSLimit > 0 || f.WriteBPSLimit > 0 || f.VolumeIOPS > 0 || f.VolumeWriteBPS > 0) {
		return fmt.Errorf("%s and a fixed cap (%s, %s, %s, %s) cannot go on the same member: the bucket sets the cap itself; choose one", FaultBurstIOPS, FaultIOPSLimit, FaultWriteBPSLimit, FaultVolumeIOPS, FaultVolumeWriteBPS)
	}
	if f.IOLimit().Any() && f.VolumeLimit().Any() {
		return fmt.Errorf("%s and %s cannot go on the same member: one caps the member's writes above its device, the other below it; choose one", f.ioKind(), f.volumeKind())
	}
	return nil
}

// ioKind names the I/O cap in errors, as --fault does.
func (f Fault) ioKind() string {
	if f.BurstIOPS > 0 {
		return FaultBurstIOPS
	}
	if f.IOPSLimit == 0 {
		return FaultWriteBPSLimit
	}
	return FaultIOPSLimit
}

// volumeKind names the volume's cap in errors, as --fault does.
func (f Fault) volumeKind() string {
	if f.BurstIOPS > 0 {
		return FaultVolumeBurstIOPS
	}
	if f.VolumeIOPS == 0 {
		return FaultVolumeWriteBPS
	}
	return FaultVolumeIOPS
}

// ValidateDir checks that the data dir of a member with an I/O cap, or on
// a capped volume, is on a disk that can be capped (not tmpfs, overlay or
// NFS): for a volume, the disk that holds the file under it, next to the
// data dir. dir need not exist yet.
func (f Fault) ValidateDir(dir string) error {
	kind := ""
	switch {
	case f.IOLimit().Any():
		kind = f.ioKind()
	case f.VolumeLimit().Any():
		kind = f.volumeKind()
	default:
		return nil
	}
	if _, err := cgroup.Host.DeviceOf(dir); err != nil {
		return fmt.Errorf("%s: %w", kind, err)
	}
	return nil
}

// ParseDelay reads D[,JITTER][@AFTER], e.g. 200ms, 200ms,20ms or
// 1.1s@15s (the link turns slow 15s after the member starts).
func ParseDelay(s string) (netfault.Delay, error) {
	spec, after, timed := strings.Cut(s, "@")
	lat, jit, _ := strings.Cut(spec, ",")
	var d netfault.Delay
	var err error
	if timed {
		if d.After, err = time.ParseDuration(strings.TrimSpace(after)); err != nil {
			return d, fmt.Errorf("%q: the time after which the link is slow, %q, is not a duration", s, after)
		}
	}
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

// DelayArg is a delay as ParseDelay reads it.
func DelayArg(d netfault.Delay) string {
	s := d.Latency.String()
	if d.Jitter > 0 {
		s += "," + d.Jitter.String()
	}
	if d.After > 0 {
		s += "@" + d.After.String()
	}
	return s
}

// ParseFaults reads --fault flags for a cluster of n members: each is
// WHO:KIND=VALUE, WHO a member's number (1 to n: member etcdperf-WHO) or
// "all", KIND slow-fsync (a duration), cpu-limit (CPUs), peer-latency
// (D[,JITTER]), iops-limit or volume-iops (write operations per second),
// write-bps-limit or volume-write-bps (a size per second, e.g. 10m),
// burst-iops or volume-burst-iops (a burst bucket:
// B,baseline-iops=R,credits=C[,volume=true]). It returns one Fault per
// member.
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
			return nil, fmt.Errorf("--fault %q: want MEMBER:KIND=VALUE, e.g. 3:cpu-limit=0.1, all:slow-fsync=15ms, 2:peer-latency=200ms or 1:iops-limit=200", spec)
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
		case FaultIOPSLimit, FaultVolumeIOPS:
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("--fault %q: %q is not a whole number of write operations per second of at least 1, e.g. 200", spec, val)
			}
			if kind == FaultIOPSLimit {
				one.IOPSLimit = n
			} else {
				one.VolumeIOPS = n
			}
		case FaultWriteBPSLimit, FaultVolumeWriteBPS:
			n, err := ParseWriteBPS(val)
			if err != nil {
				return nil, fmt.Errorf("--fault %q: %w", spec, err)
			}
			if kind == FaultWriteBPSLimit {
				one.WriteBPSLimit = n
			} else {
				one.VolumeWriteBPS = n
			}
		case FaultBurstIOPS, FaultVolumeBurstIOPS:
			b, err := parseBurst(val, kind == FaultVolumeBurstIOPS)
			if err != nil {
				return nil, fmt.Errorf("--fault %q: %w", spec, err)
			}
			one = b
			kind = FaultBurstIOPS
		default:
			return nil, fmt.Errorf("--fault %q: unknown kind %q (slow-fsync, cpu-limit, peer-latency, iops-limit, write-bps-limit, volume-iops, volume-write-bps, burst-iops or volume-burst-iops)", spec, kind)
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
			if err := faults[m].conflict(); err != nil {
				return nil, fmt.Errorf("--fault %q: member %d: %w", spec, m+1, err)
			}
		}
	}
	return faults, nil
}

// ParseWriteBPS reads a write throughput cap: a size per second, e.g.
// 10m, 512k or 1048576 (k, m, g are powers of 1024, as in fio), with an
// optional "/s".
func ParseWriteBPS(s string) (int64, error) {
	n, err := units.ParseSize(strings.TrimSuffix(strings.TrimSpace(s), "/s"))
	if err != nil {
		return 0, fmt.Errorf("%q is not a size per second, e.g. 10m: %w", s, err)
	}
	if n <= 0 {
		return 0, fmt.Errorf("%q: the cap must be positive, e.g. 10m", s)
	}
	if err := (cgroup.IOLimit{WriteBPS: n}).Validate(); err != nil {
		return 0, err
	}
	return n, nil
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
	if b.IOPSLimit > 0 {
		a.IOPSLimit = b.IOPSLimit
	}
	if b.WriteBPSLimit > 0 {
		a.WriteBPSLimit = b.WriteBPSLimit
	}
	if b.VolumeIOPS > 0 {
		a.VolumeIOPS = b.VolumeIOPS
	}
	if b.VolumeWriteBPS > 0 {
		a.VolumeWriteBPS = b.VolumeWriteBPS
	}
	if b.BurstIOPS > 0 {
		a.BurstIOPS, a.BaselineIOPS, a.BurstCredits, a.BurstVolume = b.BurstIOPS, b.BaselineIOPS, b.BurstCredits, b.BurstVolume
	}
	return a
}
