package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// period is the enforcement period of the groups this package creates, the
// kernel's default: 100ms.
const period = 100000 // microseconds

// MinCores is the smallest limit the kernel takes: a quota of 1ms per
// 100ms period.
const MinCores = 0.01

// ownPrefix starts the names of the groups this package creates; the
// process ID follows.
const ownPrefix = "etcdperf-member-"

// ValidateCores checks a CPU limit: at least MinCores, and less than this
// host's CPUs (a larger one limits nothing).
func ValidateCores(cores float64) error {
	if cores < MinCores {
		return fmt.Errorf("%g CPUs is under the kernel's smallest quota (%g CPUs: 1ms per 100ms)", cores, MinCores)
	}
	if n := runtime.NumCPU(); cores >= float64(n) {
		return fmt.Errorf("%g CPUs limits nothing on this host, which has %d", cores, n)
	}
	return nil
}

// CanLimit says why this process could not give a process a CPU limit
// (nil when it can): the cpu controller must be mounted, and the folder
// of its group (or of the hierarchy's root) writable.
func (s Sys) CanLimit() error { return s.canLimit(cpuController) }

// canLimit says why this process could not put a process in a group of
// its own in the hierarchy of controller c.
func (s Sys) canLimit(c controller) error {
	self, err := s.of(os.Getpid(), c)
	if err != nil {
		return explain(c, err)
	}
	var errs []error
	for _, parent := range candidates(self) {
		err := unix.Access(parent.Dir(), unix.W_OK)
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", parent.Dir(), err))
	}
	return explain(c, errors.Join(errs...))
}

// Limited is a group this package created for one process, with a CPU
// quota or a cap on its I/O.
type Limited struct {
	Group
	// from is the group the process left, to go back to.
	from Group
	pid  int
	// shared is set when the process was already in a group of its own
	// (cgroup v2 has one group per process: a CPU quota and an I/O cap
	// share it); Release then only lifts this limit, writing lift.
	shared bool
	lift   []setting
}

// setting is one line written to one file of a group.
type setting struct{ file, value string }

// Limit moves process pid into a new group of its own whose quota is cores
// CPUs: under the process's group when the hierarchy allows it, else under
// the hierarchy's root (cgroup v2 lets only the root have both processes
// and subgroups with the cpu controller). Release undoes it. Groups left by
// earlier processes that were killed are removed first.
func (s Sys) Limit(pid int, cores float64) (*Limited, error) {
	if cores < MinCores {
		return nil, fmt.Errorf("a CPU limit of %g is under the kernel's smallest (%g)", cores, MinCores)
	}
	h, err := s.hierarchy(cpuController)
	if err != nil {
		return nil, explain(cpuController, err)
	}
	quota := int64(cores*period + 0.5)
	set := []setting{{"cpu.cfs_period_us", strconv.Itoa(period)}, {"cpu.cfs_quota_us", strconv.FormatInt(quota, 10)}}
	lift := []setting{{"cpu.cfs_quota_us", "-1"}}
	if h.Version == 2 {
		set = []setting{{"cpu.max", fmt.Sprintf("%d %d", quota, period)}}
		lift = []setting{{"cpu.max", "max"}}
	}
	return s.own(pid, cpuController, set, lift)
}

// own moves process pid into a group of its own in controller c's
// hierarchy, with the settings set; lift undoes them (for a group shared
// with another limit). Errors say what to do.
func (s Sys) own(pid int, c controller, set, lift []setting) (*Limited, error) {
	from, err := s.of(pid, c)
	if err != nil {
		return nil, explain(c, err)
	}
	s.RemoveStale()
	name := ownPrefix + strconv.Itoa(pid)
	if from.H.Version == 2 && filepath.Base(from.Path) == name {
		// Already in the group another limit made for it: add this one.
		if err := enable(from.Parent(), c); err != nil {
			return nil, explain(c, err)
		}
		if err := apply(from, set); err != nil {
			return nil, explain(c, err)
		}
		return &Limited{Group: from, from: from, pid: pid, shared: true, lift: lift}, nil
	}
	var errs []error
	for _, parent := range candidates(from) {
		g, err := s.create(parent, name, c, set)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		l := &Limited{Group: g, from: from, pid: pid}
		if err := writeFile(g.file("cgroup.procs"), strconv.Itoa(pid)); err != nil {
			rmdirGroup(g.Dir())
			errs = append(errs, fmt.Errorf("move process %d into %s: %w", pid, g.Dir(), err))
			continue
		}
		return l, nil
	}
	return nil, explain(c, errors.Join(errs...))
}

// candidates are the groups under which a process's own group may go: its
// current group, then the root.
func candidates(from Group) []Group {
	root := from
	root.Path = from.H.Root
	if root.Path == "" {
		root.Path = "/"
	}
	if from.Path == root.Path {
		return []Group{from}
	}
	return []Group{from, root}
}

// enable makes controller c available to the children of a v2 group.
func enable(parent Group, c controller) error {
	if parent.H.Version != 2 {
		return nil
	}
	sub := parent.file("cgroup.subtree_control")
	b, err := os.ReadFile(sub)
	if err != nil {
		return err
	}
	if hasWord(strings.ReplaceAll(strings.TrimSpace(string(b)), " ", ","), c.v2) {
		return nil
	}
	if err := writeFile(sub, "+"+c.v2); err != nil {
		return fmt.Errorf("enable the %s controller in %s: %w", c.v2, sub, err)
	}
	return nil
}

// apply writes the settings into g's files.
func apply(g Group, set []setting) error {
	for _, st := range set {
		if err := writeFile(g.file(st.file), st.value); err != nil {
			return fmt.Errorf("write %q to %s: %w", st.value, g.file(st.file), err)
		}
	}
	return nil
}

// create makes the group name under parent with the settings set.
func (s Sys) create(parent Group, name string, c controller, set []setting) (Group, error) {
	g := parent
	g.Path = filepath.Join(parent.Path, name)
	// On v2 the controller must be enabled for the parent's children.
	if err := enable(parent, c); err != nil {
		return g, err
	}
	if err := mkdirGroup(g.Dir()); err != nil {
		return g, fmt.Errorf("create the cgroup %s: %w", g.Dir(), err)
	}
	if err := apply(g, set); err != nil {
		rmdirGroup(g.Dir())
		return g, err
	}
	return g, nil
}

// mkdirGroup creates a group's folder, which the kernel fills with the
// controllers' files; rmdirGroup removes it, files and all, once it holds
// no process. Tests replace them to do the kernel's part.
var (
	mkdirGroup = func(dir string) error { return os.Mkdir(dir, 0o755) }
	rmdirGroup = os.Remove
)

// Release moves the process back to the group it came from, with any
// process it started meanwhile (they were born in its group), and removes
// its own group. A limit that shared the group of another is lifted
// instead, and the group left to the other.
func (l *Limited) Release() error {
	if l.shared {
		err := apply(l.Group, l.lift)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	pids := []string{strconv.Itoa(l.pid)}
	if b, err := os.ReadFile(l.file("cgroup.procs")); err == nil {
		for _, p := range strings.Fields(string(b)) {
			if p != pids[0] {
				pids = append(pids, p)
			}
		}
	}
	for _, p := range pids {
		if err := writeFile(l.from.file("cgroup.procs"), p); err != nil && !errors.Is(err, errNoProcess) {
			return fmt.Errorf("move process %s back to %s: %w", p, l.from.Dir(), err)
		}
	}
	if err := rmdirGroup(l.Dir()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove the cgroup %s: %w", l.Dir(), err)
	}
	return nil
}

// errNoProcess is what writing an ended process to cgroup.procs returns.
var errNoProcess = errors.New("no such process")

// RemoveStale removes the groups this package created for processes that
// have ended (a member killed outright cannot remove its own), in the
// hierarchies of the cpu and the blkio/io controllers. A group still
// holding a process is left alone: the kernel refuses to remove it.
func (s Sys) RemoveStale() {
	seen := map[string]bool{}
	for _, c := range []controller{cpuController, ioController} {
		self, err := s.of(os.Getpid(), c)
		if err != nil {
			continue
		}
		for _, parent := range candidates(self) {
			dir := parent.Dir()
			if seen[dir] {
				continue
			}
			seen[dir] = true
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				pid, ok := strings.CutPrefix(e.Name(), ownPrefix)
				if !e.IsDir() || !ok {
					continue
				}
				if n, err := strconv.Atoi(pid); err == nil && !s.alive(n) {
					rmdirGroup(filepath.Join(dir, e.Name()))
				}
			}
		}
	}
}

func (s Sys) alive(pid int) bool {
	_, err := os.Stat(s.path("/proc/" + strconv.Itoa(pid)))
	return err == nil
}

// writeFile writes s to a cgroup file (which must exist).
func writeFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(s)
	cerr := f.Close()
	if werr != nil {
		if strings.Contains(werr.Error(), "no such process") {
			return fmt.Errorf("%w: %v", errNoProcess, werr)
		}
		return werr
	}
	return cerr
}

// explain turns a failure to limit a process into what to do about it.
func explain(c controller, err error) error {
	if err == nil {
		return nil
	}
	what := "a CPU limit needs a cgroup this process can write: cgroup v1's cpu controller (cpu.cfs_quota_us) or cgroup v2 with the cpu controller (cpu.max)"
	if c == ioController {
		what = "an I/O cap needs a cgroup this process can write: cgroup v1's blkio controller (blkio.throttle.write_iops_device) or cgroup v2 with the io controller (io.max)"
	}
	if errors.Is(err, os.ErrPermission) {
		return fmt.Errorf("%s; permission denied (run as root, or in a container whose cgroup file system is writable): %v", what, err)
	}
	return fmt.Errorf("%s: %v", what, err)
}
