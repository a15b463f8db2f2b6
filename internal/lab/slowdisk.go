package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/etcdperf/etcdperf/internal/sysinfo"
)

// SlowDiskFSType is the file system type of an `etcdperf slowdisk` mount as
// /proc/self/mountinfo shows it.
const SlowDiskFSType = "fuse.etcdperf-slowdisk"

// The folders of a member's data dir when it runs on a slow disk: the
// files really live in SlowDiskReal, and etcd's data dir is the slow view
// of them mounted on SlowDiskView.
const (
	SlowDiskReal = "real"
	SlowDiskView = "slow"
)

// slowDiskMountTimeout bounds waiting for the slow view's mount, and
// slowDiskStopGrace its unmount.
const (
	slowDiskMountTimeout = 15 * time.Second
	slowDiskStopGrace    = 10 * time.Second
)

// SlowDisk is a slow view of a directory (every fsync/fdatasync delayed),
// served by `etcdperf slowdisk` in a process of its own: a FUSE server in
// the same process as etcd can deadlock on bbolt's memory map.
type SlowDisk struct {
	// View is the mount point of the slow view: put etcd's data there.
	View string
	// Real is the directory that holds the files.
	Real string
	// Log receives what the slowdisk process says.
	Log string

	cmd  *exec.Cmd
	done chan struct{}
	err  error
	once sync.Once
}

// SlowDiskSupported says why a slow disk cannot be mounted here, or nil
// when it can: mounting FUSE directly needs root and /dev/fuse.
func SlowDiskSupported() error {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return errors.New("a slow disk needs /dev/fuse, which this machine lacks (load the fuse module: modprobe fuse; in a container add --device /dev/fuse)")
	}
	if os.Geteuid() != 0 {
		return errors.New("a slow disk needs root: it mounts a FUSE file system (run etcdperf as root, or in a container with CAP_SYS_ADMIN)")
	}
	return nil
}

// StartSlowDisk mounts a slow view of dir/real on dir/slow, each fsync and
// fdatasync delayed by delay, and returns once the view is mounted (at
// most 15s). command runs `etcdperf slowdisk`; empty means this executable.
// dir is created (mode 0700) when missing. Stop unmounts; the files stay
// in dir/real.
func StartSlowDisk(ctx context.Context, command []string, dir string, delay time.Duration) (*SlowDisk, error) {
	if err := SlowDiskSupported(); err != nil {
		return nil, err
	}
	if delay <= 0 {
		return nil, errors.New("the slow disk's fsync delay must be positive")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	s := &SlowDisk{View: filepath.Join(abs, SlowDiskView), Real: filepath.Join(abs, SlowDiskReal),
		Log: filepath.Join(abs, "slowdisk.log"), done: make(chan struct{})}
	if err := os.MkdirAll(s.Real, 0o700); err != nil {
		return nil, fmt.Errorf("slow disk: %w", err)
	}
	// A file, not a pipe: a slowdisk process that outlives the member must
	// still be able to say something (SIGPIPE would kill it before it
	// unmounts).
	logf, err := os.OpenFile(s.Log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("slow disk: %w", err)
	}
	defer logf.Close()
	if len(command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find etcdperf's executable to serve the slow disk: %w", err)
		}
		command = []string{exe, "slowdisk"}
	}
	args := append(append([]string{}, command[1:]...), "--src", s.Real, "--mnt", s.View, "--fsync-delay", delay.String())
	s.cmd = exec.Command(command[0], args...)
	// Its own process group: a terminal's Ctrl-C reaches the member, which
	// stops etcd before the file system under it. Pdeathsig unmounts when
	// the member dies.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the slow disk (%s): %w", command[0], err)
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.done)
	}()
	if err := s.waitMounted(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// waitMounted polls the mount table until the view is mounted.
func (s *SlowDisk) waitMounted(ctx context.Context) error {
	t := time.NewTimer(slowDiskMountTimeout)
	defer t.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if m, err := sysinfo.FindMount(s.View); err == nil && m.MountPoint == s.View && m.FSType == SlowDiskFSType {
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("the slow disk on %s did not mount: %v%s", s.View, s.err, s.output())
		case <-t.C:
			return fmt.Errorf("the slow disk on %s was not mounted within %s%s", s.View, slowDiskMountTimeout, s.output())
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// output is what the slowdisk process said, for an error message.
func (s *SlowDisk) output() string {
	b, _ := os.ReadFile(s.Log)
	out := strings.TrimSpace(string(b))
	if out == "" {
		return ""
	}
	lines := strings.Split(out, "\n")
	return ": " + truncate(strings.TrimPrefix(lines[len(lines)-1], "etcdperf: "), 300)
}

// Stop unmounts the view (close every file under it first): it asks the
// slowdisk process to stop, and after 10s kills it and detaches the mount
// lazily. It removes nothing from Real.
func (s *SlowDisk) Stop() error {
	var err error
	s.once.Do(func() {
		terminate(s.cmd, s.done, slowDiskStopGrace)
		if m, merr := sysinfo.FindMount(s.View); merr == nil && m.MountPoint == s.View && m.FSType == SlowDiskFSType {
			if uerr := unix.Unmount(s.View, unix.MNT_DETACH); uerr != nil {
				err = fmt.Errorf("unmount the slow disk %s: %w (umount -l %s)", s.View, uerr, s.View)
				return
			}
		}
		if s.err != nil {
			err = fmt.Errorf("the slow disk on %s: %v%s", s.View, s.err, s.output())
		}
	})
	return err
}

// InsideSlowDisk is a slow view of a folder made for it inside the
// storage under test, so that the files behind the view live on that
// storage: Remove unmounts it and removes the folder.
type InsideSlowDisk struct {
	*SlowDisk
	// Root is the folder made for it, which holds the view and the files.
	Root string
}

// StartSlowDiskInside creates the folder etcdperf-slowdisk-<runID> in dir
// and mounts a slow view in it (StartSlowDisk), waiting until the mount is
// there. On failure everything is removed.
func StartSlowDiskInside(ctx context.Context, command []string, dir, runID string, delay time.Duration) (*InsideSlowDisk, error) {
	if err := SlowDiskSupported(); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	root := filepath.Join(abs, "etcdperf-slowdisk-"+runID)
	if err := os.Mkdir(root, 0o700); err != nil {
		return nil, fmt.Errorf("create the slow disk's folder in %s: %w", abs, err)
	}
	sd, err := StartSlowDisk(ctx, command, root, delay)
	if err != nil {
		os.RemoveAll(root)
		return nil, err
	}
	return &InsideSlowDisk{SlowDisk: sd, Root: root}, nil
}

// Remove unmounts the view (Stop) and removes the folder with the files
// etcd left in it.
func (s *InsideSlowDisk) Remove() error {
	err := s.Stop()
	if rerr := os.RemoveAll(s.Root); rerr != nil {
		err = errors.Join(err, fmt.Errorf("remove the slow disk's folder %s: %w", s.Root, rerr))
	}
	return err
}
