// Package cgroup reads and sets a process's CPU and I/O limits through the
// kernel's control groups: version 1 (the cpu controller: cpu.cfs_quota_us,
// cpu.cfs_period_us, cpu.stat's throttled_time; the blkio controller:
// blkio.throttle.*) or version 2 (cpu.max, cpu.stat's throttled_usec;
// io.max, io.stat), whichever holds each controller here.
//
// It measures (how many CPUs a member may use, and how often the kernel
// stopped it for having used them: throttling; the writes its group did on
// a device) and it makes faults (a member process in a group of its own
// with a quota, or with a cap on its writes: etcdperf's --cpu-limit,
// --iops-limit and --write-bps-limit). It prints nothing; every path is
// under Sys's root, so that tests can give it a folder shaped like
// /sys/fs/cgroup and /proc.
package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Sys is the host's /proc and cgroup file systems.
type Sys struct {
	// Root prefixes every path (the mount points that /proc/self/mountinfo
	// names, and /proc itself): "" on a live host.
	Root string
}

// Host is this host.
var Host = Sys{}

// Hierarchy is a mounted cgroup hierarchy that holds a controller (cpu, or
// blkio/io).
type Hierarchy struct {
	// Version is 1 or 2.
	Version int
	// Mount is where it is mounted, e.g. /sys/fs/cgroup/cpu (v1) or
	// /sys/fs/cgroup (v2).
	Mount string
	// Root is the part of the hierarchy mounted there ("/" but in some
	// containers): the paths in /proc/PID/cgroup are relative to the
	// hierarchy's own root.
	Root string
}

// ErrNoCPUController says that no mounted cgroup hierarchy has the cpu
// controller.
var ErrNoCPUController = errors.New("no cgroup file system with the cpu controller is mounted (neither cgroup v1's cpu controller nor cgroup v2 with cpu in cgroup.controllers)")

func (s Sys) path(p string) string { return filepath.Join(s.Root, p) }

// controller names one resource controller in both versions of cgroups.
type controller struct {
	// v1 is its name in a v1 hierarchy's mount options and in
	// /proc/PID/cgroup; v2, in cgroup.controllers.
	v1, v2 string
	// missing is the error when no hierarchy holds it.
	missing error
}

var (
	cpuController = controller{v1: "cpu", v2: "cpu", missing: ErrNoCPUController}
	ioController  = controller{v1: "blkio", v2: "io", missing: ErrNoIOController}
)

// CPUHierarchy finds the hierarchy of the cpu controller: v1's when
// mounted (a host may mount both, as this one's unified hierarchy then
// lacks cpu), else v2's when cpu is among its controllers.
func (s Sys) CPUHierarchy() (Hierarchy, error) { return s.hierarchy(cpuController) }

// hierarchy finds the hierarchy of controller c: v1's when mounted, else
// v2's when c is among its controllers.
func (s Sys) hierarchy(c controller) (Hierarchy, error) {
	f, err := os.Open(s.path("/proc/self/mountinfo"))
	if err != nil {
		return Hierarchy{}, err
	}
	defer f.Close()
	ms, err := parseMounts(f)
	if err != nil {
		return Hierarchy{}, err
	}
	var v2 *Hierarchy
	for _, m := range ms {
		switch {
		case m.fsType == "cgroup" && hasWord(m.superOpts, c.v1):
			return Hierarchy{Version: 1, Mount: m.mountPoint, Root: m.root}, nil
		case m.fsType == "cgroup2" && v2 == nil:
			b, err := os.ReadFile(s.path(filepath.Join(m.mountPoint, "cgroup.controllers")))
			if err == nil && hasWord(strings.ReplaceAll(string(b), " ", ","), c.v2) {
				v2 = &Hierarchy{Version: 2, Mount: m.mountPoint, Root: m.root}
			}
		}
	}
	if v2 != nil {
		return *v2, nil
	}
	return Hierarchy{}, c.missing
}

// hasWord reports whether the comma-separated list holds w.
func hasWord(list, w string) bool {
	for _, x := range strings.Split(strings.TrimSpace(list), ",") {
		if x == w {
			return true
		}
	}
	return false
}

type mount struct {
	root, mountPoint, fsType, superOpts string
}

// parseMounts reads the cgroup mounts of /proc/self/mountinfo text.
func parseMounts(r io.Reader) ([]mount, error) {
	var out []mount
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 || (g[0] != "cgroup" && g[0] != "cgroup2") {
			continue
		}
		out = append(out, mount{root: f[3], mountPoint: f[4], fsType: g[0], superOpts: g[2]})
	}
	return out, sc.Err()
}

// Group is one control group of a hierarchy (the cpu controller's, or the
// blkio/io controller's).
type Group struct {
	H Hierarchy
	// Path is the group's path inside the hierarchy ("/" for its root).
	Path string
	sys  Sys
}

// Dir is the group's folder.
func (g Group) Dir() string {
	rel := strings.TrimPrefix(g.Path, g.H.Root)
	return g.sys.path(filepath.Join(g.H.Mount, rel))
}

func (g Group) file(name string) string { return filepath.Join(g.Dir(), name) }

// Of returns the cpu group of process pid.
func (s Sys) Of(pid int) (Group, error) { return s.of(pid, cpuController) }

// of returns the group of process pid in the hierarchy of controller c.
func (s Sys) of(pid int, c controller) (Group, error) {
	h, err := s.hierarchy(c)
	if err != nil {
		return Group{}, err
	}
	b, err := os.ReadFile(s.path(fmt.Sprintf("/proc/%d/cgroup", pid)))
	if err != nil {
		return Group{}, fmt.Errorf("read the cgroup of process %d: %w", pid, err)
	}
	p, ok := groupPath(string(b), h.Version, c.v1)
	if !ok {
		return Group{}, fmt.Errorf("process %d is in no cgroup of the %s controller (v%d)", pid, c.v1, h.Version)
	}
	return Group{H: h, Path: p, sys: s}, nil
}

// groupPath reads a process's path in the hierarchy of the v1 controller
// named v1 (or in the v2 hierarchy) from its /proc/PID/cgroup text.
func groupPath(text string, version int, v1 string) (string, bool) {
	for _, l := range strings.Split(text, "\n") {
		parts := strings.SplitN(l, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if version == 2 && parts[0] == "0" && parts[1] == "" {
			return parts[2], true
		}
		if version == 1 && hasWord(parts[1], v1) {
			return parts[2], true
		}
	}
	return "", false
}

// Parent is the group above g (g itself at the root).
func (g Group) Parent() Group {
	p := g
	p.Path = filepath.Dir(g.Path)
	if p.Path == "." {
		p.Path = "/"
	}
	return p
}

// Quota is the CPUs a group may use (its quota over its period), 0 when it
// has no quota of its own.
func (g Group) Quota() (float64, error) {
	if g.H.Version == 2 {
		b, err := os.ReadFile(g.file("cpu.max"))
		if err != nil {
			return 0, err
		}
		return parseCPUMax(string(b))
	}
	q, err := readInt(g.file("cpu.cfs_quota_us"))
	if err != nil {
		return 0, err
	}
	p, err := readInt(g.file("cpu.cfs_period_us"))
	if err != nil {
		return 0, err
	}
	if q <= 0 || p <= 0 {
		return 0, nil
	}
	return float64(q) / float64(p), nil
}

// parseCPUMax reads cgroup v2's cpu.max: "max 100000" (no quota) or
// "QUOTA PERIOD" in microseconds.
func parseCPUMax(s string) (float64, error) {
	f := strings.Fields(s)
	if len(f) == 0 || len(f) > 2 {
		return 0, fmt.Errorf("cpu.max %q: want QUOTA [PERIOD]", strings.TrimSpace(s))
	}
	if f[0] == "max" {
		return 0, nil
	}
	q, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("cpu.max %q: quota is not a number", strings.TrimSpace(s))
	}
	period := int64(100000)
	if len(f) == 2 {
		if period, err = strconv.ParseInt(f[1], 10, 64); err != nil || period <= 0 {
			return 0, fmt.Errorf("cpu.max %q: period is not a positive number", strings.TrimSpace(s))
		}
	}
	return float64(q) / float64(period), nil
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// Stat is a group's CPU throttling counters at one instant.
type Stat struct {
	At time.Time
	// Periods is the number of enforcement periods in which the group had
	// runnable threads; Throttled, of those in which it ran out of quota.
	Periods, Throttled uint64
	// ThrottledTime is the total time its threads were stopped for it.
	ThrottledTime time.Duration
}

// Stat reads the group's cpu.stat.
func (g Group) Stat() (Stat, error) {
	b, err := os.ReadFile(g.file("cpu.stat"))
	if err != nil {
		return Stat{}, err
	}
	return ParseStat(string(b), g.H.Version)
}

// ParseStat reads cpu.stat text of a v1 (throttled_time in ns) or v2
// (throttled_usec) group.
func ParseStat(text string, version int) (Stat, error) {
	st := Stat{At: time.Now()}
	for _, l := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), " ")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return st, fmt.Errorf("cpu.stat: %s %q is not a number", k, v)
		}
		switch {
		case k == "nr_periods":
			st.Periods = n
		case k == "nr_throttled":
			st.Throttled = n
		case k == "throttled_time" && version == 1:
			st.ThrottledTime = time.Duration(n)
		case k == "throttled_usec" && version == 2:
			st.ThrottledTime = time.Duration(n) * time.Microsecond
		}
	}
	return st, nil
}

// Throttling is a group's throttling over an interval.
type Throttling struct {
	// Share is the fraction of the periods with runnable threads in which
	// the group ran out of its quota.
	Share float64
	// Time is the time its threads were stopped per second of the interval.
	Time float64
}

// Between returns the throttling from a to b.
func Between(a, b Stat) Throttling {
	var t Throttling
	if p := float64(b.Periods) - float64(a.Periods); p > 0 {
		t.Share = max(0, float64(b.Throttled)-float64(a.Throttled)) / p
	}
	if secs := b.At.Sub(a.At).Seconds(); secs > 0 {
		t.Time = max(0, (b.ThrottledTime-a.ThrottledTime).Seconds()) / secs
	}
	return t
}

// Limiting returns the group that limits process pid's CPU: the one with
// the smallest quota among its group and their parents (a Kubernetes pod's
// limit sits on its container's or its pod's group), and that quota in
// CPUs; ok is false when no group above the process has a quota.
func (s Sys) Limiting(pid int) (g Group, cores float64, ok bool, err error) {
	g, err = s.Of(pid)
	if err != nil {
		return g, 0, false, err
	}
	best := Group{}
	for cur := g; ; cur = cur.Parent() {
		if q, qerr := cur.Quota(); qerr == nil && q > 0 && (!ok || q < cores) {
			best, cores, ok = cur, q, true
		}
		if cur.Path == "/" || cur.Path == g.H.Root {
			break
		}
	}
	if !ok {
		return g, 0, false, nil
	}
	return best, cores, true, nil
}
