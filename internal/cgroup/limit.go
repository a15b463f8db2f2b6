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
func (s Sys) CanLimit() error {
	self, err := s.Of(os.Getpid())
	if err != nil {
		return explain(err)
	}
	var errs []error
	for _, parent := range candidates(self) {
		err := unix.Access(parent.Dir(), unix.W_OK)
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", parent.Dir(), err))
	}
	return explain(errors.Join(errs...))
}

// Limited is a group this package created for one process, with a CPU
// quota.
type Limited struct {
	Group
	// from is the group the process left, to go back to.
	from Group
	pid  int
}

// Limit moves process pid into a new group of its own whose quota is cores
// CPUs: under the process's group when the hierarchy allows it, else under
// the hierarchy's root (cgroup v2 lets only the root have both processes
// and subgroups with the cpu controller). Release undoes it. Groups left by
// earlier processes that were killed are removed first.
func (s Sys) Limit(pid int, cores float64) (*Limited, error) {
	if cores < MinCores {
		return nil, fmt.Errorf("a CPU limit of %g is under the kernel's smallest (%g)", cores, MinCores)
	}
	from, err := s.Of(pid)
	if err != nil {
		return nil, explain(err)
	}
	s.RemoveStale()
	name := ownPrefix + strconv.Itoa(pid)
	var errs []error
	for _, parent := range candidates(from) {
		g, err := s.create(parent, name, cores)
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
	return nil, explain(errors.Join(errs...))
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

// create makes the group name under parent with a quota of cores.
func (s Sys) create(parent Group, name string, cores float64) (Group, error) {
	g := parent
	g.Path = filepath.Join(parent.Path, name)
	if parent.H.Version == 2 {
		// The cpu controller must be enabled for the parent's children.
		sub := parent.file("cgroup.subtree_control")
		b, err := os.ReadFile(sub)
		if err != nil {
			return g, err
		}
		if !hasWord(strings.ReplaceAll(strings.TrimSpace(string(b)), " ", ","), "cpu") {
			if err := writeFile(sub, "+cpu"); err != nil {
				return g, fmt.Errorf("enable the cpu controller in %s: %w", sub, err)
			}
		}
	}
	if err := mkdirGroup(g.Dir()); err != nil {
		return g, fmt.Errorf("create the cgroup %s: %w", g.Dir(), err)
	}
	quota := int64(cores*period + 0.5)
	var err error
	if g.H.Version == 2 {
		err = writeFile(g.file("cpu.max"), fmt.Sprintf("%d %d", quota, period))
	} else {
		err = writeFile(g.file("cpu.cfs_period_us"), strconv.Itoa(period))
		if err == nil {
			err = writeFile(g.file("cpu.cfs_quota_us"), strconv.FormatInt(quota, 10))
		}
	}
	if err != nil {
		rmdirGroup(g.Dir())
		return g, fmt.Errorf("set the CPU quota of %s: %w", g.Dir(), err)
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

// Release moves the process back to the group it came from and removes
// its own group.
func (l *Limited) Release() error {
	if err := writeFile(l.from.file("cgroup.procs"), strconv.Itoa(l.pid)); err != nil && !errors.Is(err, errNoProcess) {
		return fmt.Errorf("move process %d back to %s: %w", l.pid, l.from.Dir(), err)
	}
	if err := rmdirGroup(l.Dir()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove the cgroup %s: %w", l.Dir(), err)
	}
	return nil
}

// errNoProcess is what writing an ended process to cgroup.procs returns.
var errNoProcess = errors.New("no such process")

// RemoveStale removes the groups this package created for processes that
// have ended (a member killed outright cannot remove its own). A group
// still holding a process is left alone: the kernel refuses to remove it.
func (s Sys) RemoveStale() {
	self, err := s.Of(os.Getpid())
	if err != nil {
		return
	}
	seen := map[string]bool{}
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

// explain turns a failure to limit the CPU into what to do about it.
func explain(err error) error {
	if err == nil {
		return nil
	}
	what := "a CPU limit needs a cgroup this process can write: cgroup v1's cpu controller (cpu.cfs_quota_us) or cgroup v2 with the cpu controller (cpu.max)"
	if errors.Is(err, os.ErrPermission) {
		return fmt.Errorf("%s; permission denied (run as root, or in a container whose cgroup file system is writable): %v", what, err)
	}
	return fmt.Errorf("%s: %v", what, err)
}
