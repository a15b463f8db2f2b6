package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/etcdperf/etcdperf/internal/sysinfo"
)

// ErrNoIOController says that no mounted cgroup hierarchy has the blkio
// (v1) or io (v2) controller.
var ErrNoIOController = errors.New("no cgroup file system with the blkio or io controller is mounted (neither cgroup v1's blkio controller nor cgroup v2 with io in cgroup.controllers)")

// MinWriteBPS is the smallest write throughput cap taken: a page per
// second (a smaller one stops etcd for minutes at each write).
const MinWriteBPS = 4096

// Device is a block device, by the numbers with which the kernel's cgroup
// files name it (MAJ:MIN).
type Device struct {
	Major, Minor uint32
	// Name is its kernel name ("vda", "nvme0n1", "dm-0"), when known.
	Name string
}

// String is MAJ:MIN, as the cgroup files write it.
func (d Device) String() string { return fmt.Sprintf("%d:%d", d.Major, d.Minor) }

// DeviceOf returns the block device that a cap on the writes to dir's
// file system must name: the device that holds it, or the whole disk of a
// partition (the kernel refuses a cap on a partition with "No such
// device"; one on the disk throttles the I/O to each of its partitions).
// dir need not exist yet: its nearest existing parent is used. A file
// system without a block device (tmpfs, overlay, NFS) is an error.
func (s Sys) DeviceOf(dir string) (Device, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Device{}, err
	}
	p := abs
	var st unix.Stat_t
	for {
		err := unix.Stat(p, &st)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.ENOENT) || p == "/" {
			return Device{}, fmt.Errorf("stat %s: %w", p, err)
		}
		p = filepath.Dir(p)
	}
	dev, ok := s.blockDevice(uint64(unix.Major(st.Dev)), uint64(unix.Minor(st.Dev)))
	if ok {
		return dev, nil
	}
	// btrfs and others give their files an anonymous device number: the
	// mount's source names the device.
	m, merr := sysinfo.FindMount(p)
	if merr != nil {
		return Device{}, fmt.Errorf("the file system of %s: %w", abs, merr)
	}
	var src unix.Stat_t
	if strings.HasPrefix(m.Source, "/dev/") && unix.Stat(m.Source, &src) == nil && src.Mode&unix.S_IFMT == unix.S_IFBLK {
		if dev, ok := s.blockDevice(uint64(unix.Major(src.Rdev)), uint64(unix.Minor(src.Rdev))); ok {
			return dev, nil
		}
	}
	return Device{}, fmt.Errorf("%s is on %s (%s mounted on %s), which has no block device to cap: give a directory on a disk", abs, m.FSType, m.Source, m.MountPoint)
}

// blockDevice finds MAJ:MIN in /sys/dev/block, and the whole disk of a
// partition.
func (s Sys) blockDevice(major, minor uint64) (Device, bool) {
	target, err := filepath.EvalSymlinks(s.path(fmt.Sprintf("/sys/dev/block/%d:%d", major, minor)))
	if err != nil {
		return Device{}, false
	}
	if _, err := os.Stat(filepath.Join(target, "partition")); err == nil {
		target = filepath.Dir(target)
	}
	b, err := os.ReadFile(filepath.Join(target, "dev"))
	if err != nil {
		return Device{}, false
	}
	maj, min, ok := strings.Cut(strings.TrimSpace(string(b)), ":")
	ma, err1 := strconv.ParseUint(maj, 10, 32)
	mi, err2 := strconv.ParseUint(min, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return Device{}, false
	}
	return Device{Major: uint32(ma), Minor: uint32(mi), Name: filepath.Base(target)}, true
}

// IOLimit caps the writes of a group on one device; 0 leaves a figure
// uncapped.
type IOLimit struct {
	// WriteIOPS is the write operations per second (v1
	// blkio.throttle.write_iops_device, v2 io.max wiops).
	WriteIOPS int64 `json:"write_iops,omitempty"`
	// WriteBPS is the bytes written per second (v1
	// blkio.throttle.write_bps_device, v2 io.max wbps).
	WriteBPS int64 `json:"write_bps,omitempty"`
}

// Any reports whether the limit caps anything.
func (l IOLimit) Any() bool { return l.WriteIOPS > 0 || l.WriteBPS > 0 }

// Validate checks the figures: not negative, at least one set, and a
// throughput cap of at least MinWriteBPS.
func (l IOLimit) Validate() error {
	switch {
	case l.WriteIOPS < 0 || l.WriteBPS < 0:
		return errors.New("an I/O cap cannot be negative")
	case !l.Any():
		return errors.New("an I/O cap needs write operations or bytes per second")
	case l.WriteBPS > 0 && l.WriteBPS < MinWriteBPS:
		return fmt.Errorf("a write throughput cap of %d bytes/s is under the smallest taken (%d: a page per second)", l.WriteBPS, MinWriteBPS)
	}
	return nil
}

// IOHierarchy finds the hierarchy of the blkio (v1) or io (v2) controller:
// v1's when mounted, else v2's when io is among its controllers.
func (s Sys) IOHierarchy() (Hierarchy, error) { return s.hierarchy(ioController) }

// IOOf returns process pid's group in the hierarchy of the blkio or io
// controller.
func (s Sys) IOOf(pid int) (Group, error) { return s.of(pid, ioController) }

// CanLimitIO says why this process could not cap a process's I/O (nil
// when it can): the blkio or io controller must be mounted, and the folder
// of its group (or of the hierarchy's root) writable.
func (s Sys) CanLimitIO() error { return s.canLimit(ioController) }

// LimitIO moves process pid into a group of its own whose writes to dev
// are capped by lim (v1: blkio.throttle.write_iops_device and
// write_bps_device; v2: io.max), as Limit does for the CPU; Release undoes
// it. On cgroup v2 a process that already has a group of its own (a CPU
// limit) keeps it, and the cap is added to it. The cap sits above the
// device: the device itself is not busier for it, and its own figures
// (/proc/diskstats) do not show the wait, the group's do (IOStat).
func (s Sys) LimitIO(pid int, dev Device, lim IOLimit) (*Limited, error) {
	if err := lim.Validate(); err != nil {
		return nil, err
	}
	h, err := s.hierarchy(ioController)
	if err != nil {
		return nil, explain(ioController, err)
	}
	set, lift := ioSettings(h.Version, dev, lim)
	l, err := s.own(pid, ioController, set, lift)
	if err != nil && strings.Contains(err.Error(), "no such device") {
		return nil, fmt.Errorf("%w (the kernel takes a cap on a whole disk, not on a partition or a device without a request queue: %s)", err, dev)
	}
	return l, err
}

// ioSettings are the lines that cap a group's writes to dev by lim, and
// those that lift the cap (cgroup v2; v1's group is removed instead).
func ioSettings(version int, dev Device, lim IOLimit) (set, lift []setting) {
	if version == 2 {
		var caps []string
		if lim.WriteIOPS > 0 {
			caps = append(caps, "wiops="+strconv.FormatInt(lim.WriteIOPS, 10))
		}
		if lim.WriteBPS > 0 {
			caps = append(caps, "wbps="+strconv.FormatInt(lim.WriteBPS, 10))
		}
		return []setting{{"io.max", dev.String() + " " + strings.Join(caps, " ")}}, []setting{{"io.max", dev.String() + " wiops=max wbps=max"}}
	}
	if lim.WriteIOPS > 0 {
		set = append(set, setting{"blkio.throttle.write_iops_device", dev.String() + " " + strconv.FormatInt(lim.WriteIOPS, 10)})
	}
	if lim.WriteBPS > 0 {
		set = append(set, setting{"blkio.throttle.write_bps_device", dev.String() + " " + strconv.FormatInt(lim.WriteBPS, 10)})
	}
	return set, nil
}

// SetIOLimit rewrites the cap of a group LimitIO made on dev's writes (a
// burst bucket moving between its burst and its baseline).
func (l *Limited) SetIOLimit(dev Device, lim IOLimit) error {
	if err := lim.Validate(); err != nil {
		return err
	}
	set, _ := ioSettings(l.H.Version, dev, lim)
	return apply(l.Group, set)
}

// IOLimit reads the group's own caps on dev (none: a zero IOLimit).
func (g Group) IOLimit(dev Device) (IOLimit, error) {
	if g.H.Version == 2 {
		b, err := os.ReadFile(g.file("io.max"))
		if err != nil {
			return IOLimit{}, err
		}
		return ParseIOMax(string(b), dev)
	}
	var l IOLimit
	for _, f := range []struct {
		name string
		v    *int64
	}{{"blkio.throttle.write_iops_device", &l.WriteIOPS}, {"blkio.throttle.write_bps_device", &l.WriteBPS}} {
		b, err := os.ReadFile(g.file(f.name))
		if err != nil {
			return l, err
		}
		if *f.v, err = parseDeviceValue(string(b), dev); err != nil {
			return l, fmt.Errorf("%s: %w", f.name, err)
		}
	}
	return l, nil
}

// parseDeviceValue reads a v1 throttle file ("MAJ:MIN VALUE" lines) for
// dev; a device without a line is uncapped (0).
func parseDeviceValue(text string, dev Device) (int64, error) {
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue
		}
		if d, ok := parseDevNum(f[0]); ok && d == dev.String() {
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || n < 0 {
				return 0, fmt.Errorf("%q: the value is not a number", strings.TrimSpace(l))
			}
			return n, nil
		}
	}
	return 0, nil
}

// parseDevNum checks that s is MAJ:MIN and returns it normalised.
func parseDevNum(s string) (string, bool) {
	maj, min, ok := strings.Cut(s, ":")
	ma, err1 := strconv.ParseUint(maj, 10, 32)
	mi, err2 := strconv.ParseUint(min, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return "", false
	}
	return fmt.Sprintf("%d:%d", ma, mi), true
}

// devLines are the lines of a cgroup v2 file of per-device KEY=VALUE
// fields (io.max, io.stat: "MAJ:MIN k=v k=v") that are about dev.
func devLines(text string, dev Device) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			if d, ok := parseDevNum(f[0]); ok && d == dev.String() {
				out = append(out, line)
			}
		}
	}
	return out
}

// ParseIOMax reads cgroup v2's io.max ("MAJ:MIN rbps=max wbps=N riops=max
// wiops=N" lines) for dev.
func ParseIOMax(text string, dev Device) (IOLimit, error) {
	var l IOLimit
	for _, line := range devLines(text, dev) {
		for _, kv := range strings.Fields(line)[1:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return l, fmt.Errorf("io.max %q: %q is not KEY=VALUE", strings.TrimSpace(line), kv)
			}
			var n int64
			if v != "max" {
				var err error
				if n, err = strconv.ParseInt(v, 10, 64); err != nil || n < 0 {
					return l, fmt.Errorf("io.max %q: %s is not a number", strings.TrimSpace(line), k)
				}
			}
			switch k {
			case "wiops":
				l.WriteIOPS = n
			case "wbps":
				l.WriteBPS = n
			}
		}
	}
	return l, nil
}

// IOLimiting returns the group that caps process pid's writes to dev the
// most: its own group or one above it (a Kubernetes pod's or a systemd
// unit's cap sits on a parent), and that cap; ok is false when no group
// above the process caps them. The tightest is the one with the fewest
// write operations per second, else the fewest bytes.
func (s Sys) IOLimiting(pid int, dev Device) (g Group, lim IOLimit, ok bool, err error) {
	g, err = s.IOOf(pid)
	if err != nil {
		return g, lim, false, err
	}
	best := g
	for cur := g; ; cur = cur.Parent() {
		if l, lerr := cur.IOLimit(dev); lerr == nil && l.Any() && (!ok || tighter(l, lim)) {
			best, lim, ok = cur, l, true
		}
		if cur.Path == "/" || cur.Path == g.H.Root {
			break
		}
	}
	return best, lim, ok, nil
}

func tighter(a, b IOLimit) bool {
	if a.WriteIOPS > 0 && (b.WriteIOPS == 0 || a.WriteIOPS < b.WriteIOPS) {
		return true
	}
	return a.WriteIOPS == b.WriteIOPS && a.WriteBPS > 0 && (b.WriteBPS == 0 || a.WriteBPS < b.WriteBPS)
}

// IOStat is a group's I/O to one device as the kernel counted it for the
// group, at one instant: the operations and bytes that went through the
// group's throttle (dispatched, after any wait).
type IOStat struct {
	At     time.Time
	Device Device
	// ReadOps and WriteOps are operations; ReadBytes and WriteBytes bytes.
	ReadOps, WriteOps, ReadBytes, WriteBytes uint64
}

// IOStat reads the group's counters for dev: v1
// blkio.throttle.io_serviced_recursive and io_service_bytes_recursive
// (the group and the groups below it; the files without _recursive on
// kernels that lack them), v2 io.stat.
func (g Group) IOStat(dev Device) (IOStat, error) {
	st := IOStat{At: time.Now(), Device: dev}
	if g.H.Version == 2 {
		b, err := os.ReadFile(g.file("io.stat"))
		if err != nil {
			return st, err
		}
		return ParseIOStat(string(b), dev)
	}
	read := func(name string) (string, error) {
		b, err := os.ReadFile(g.file(name + "_recursive"))
		if errors.Is(err, os.ErrNotExist) {
			b, err = os.ReadFile(g.file(name))
		}
		return string(b), err
	}
	ops, err := read("blkio.throttle.io_serviced")
	if err != nil {
		return st, err
	}
	if st.ReadOps, st.WriteOps, err = ParseBlkioStat(ops, dev); err != nil {
		return st, fmt.Errorf("blkio.throttle.io_serviced: %w", err)
	}
	bytes, err := read("blkio.throttle.io_service_bytes")
	if err != nil {
		return st, err
	}
	if st.ReadBytes, st.WriteBytes, err = ParseBlkioStat(bytes, dev); err != nil {
		return st, fmt.Errorf("blkio.throttle.io_service_bytes: %w", err)
	}
	return st, nil
}

// ParseBlkioStat reads a cgroup v1 blkio.throttle.io_serviced or
// io_service_bytes text ("MAJ:MIN Read N", "MAJ:MIN Write N", ... lines,
// and a last "Total N") for dev: its reads and writes. A device without
// lines has done no I/O in the group (0, 0).
func ParseBlkioStat(text string, dev Device) (read, write uint64, err error) {
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(l)
		if len(f) != 3 {
			continue
		}
		if d, ok := parseDevNum(f[0]); !ok || d != dev.String() {
			continue
		}
		if f[1] != "Read" && f[1] != "Write" {
			continue
		}
		n, perr := strconv.ParseUint(f[2], 10, 64)
		if perr != nil {
			return 0, 0, fmt.Errorf("%q: the count is not a number", strings.TrimSpace(l))
		}
		if f[1] == "Read" {
			read = n
		} else {
			write = n
		}
	}
	return read, write, nil
}

// ParseIOStat reads cgroup v2's io.stat ("MAJ:MIN rbytes=N wbytes=N
// rios=N wios=N dbytes=N dios=N" lines) for dev.
func ParseIOStat(text string, dev Device) (IOStat, error) {
	st := IOStat{At: time.Now(), Device: dev}
	for _, line := range devLines(text, dev) {
		for _, kv := range strings.Fields(line)[1:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				continue // io.stat's other sections (cost., latency) are KEY=VALUE too; anything else is not ours
			}
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				if k == "rbytes" || k == "wbytes" || k == "rios" || k == "wios" {
					return st, fmt.Errorf("io.stat %q: %s is not a number", strings.TrimSpace(line), k)
				}
				continue
			}
			switch k {
			case "rbytes":
				st.ReadBytes = n
			case "wbytes":
				st.WriteBytes = n
			case "rios":
				st.ReadOps = n
			case "wios":
				st.WriteOps = n
			}
		}
	}
	return st, nil
}

// IORate is a group's I/O to one device over an interval, per second.
type IORate struct {
	ReadIOPS, WriteIOPS float64
	// ReadBPS and WriteBPS are bytes per second.
	ReadBPS, WriteBPS float64
}

// IOBetween returns the group's I/O rates from a to b (0 for a counter
// that went back: the group was made anew).
func IOBetween(a, b IOStat) IORate {
	secs := b.At.Sub(a.At).Seconds()
	if secs <= 0 {
		return IORate{}
	}
	rate := func(x, y uint64) float64 {
		if y < x {
			return 0
		}
		return float64(y-x) / secs
	}
	return IORate{
		ReadIOPS: rate(a.ReadOps, b.ReadOps), WriteIOPS: rate(a.WriteOps, b.WriteOps),
		ReadBPS: rate(a.ReadBytes, b.ReadBytes), WriteBPS: rate(a.WriteBytes, b.WriteBytes),
	}
}
