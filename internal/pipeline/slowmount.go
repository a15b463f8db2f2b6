package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/etcdperf/etcdperf/internal/sysinfo"
)

// slowdiskFSType is the file system type `etcdperf slowdisk` mounts.
const slowdiskFSType = "fuse.etcdperf-slowdisk"

// slowMountTimeout bounds waiting for the slow view to be mounted.
const slowMountTimeout = 15 * time.Second

// ErrNoFUSE says that a slow view of a directory cannot be mounted here.
var ErrNoFUSE = errors.New("--simulate-fsync-delay mounts a FUSE file system: it needs root and /dev/fuse")

// CanMountFUSE reports why a slow view cannot be mounted here, nil when it
// can.
func CanMountFUSE() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w (run as root)", ErrNoFUSE)
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fmt.Errorf("%w (%v; in a container, pass --device /dev/fuse --cap-add SYS_ADMIN)", ErrNoFUSE, err)
	}
	return nil
}

// slowMount is a slow view of a folder inside the storage under test,
// served by `etcdperf slowdisk` in a child process: root/src holds the
// files, root/mnt is the view whose fsyncs wait.
type slowMount struct {
	root, src, mnt string
	cmd            *exec.Cmd
	done           chan struct{}
	stderr         strings.Builder
}

// mountSlow creates the folder etcdperf-slowdisk-<runID> in dir and
// mounts its slow view with command (`etcdperf slowdisk`), waiting until
// the mount is there. On failure everything is removed.
func mountSlow(ctx context.Context, dir, runID string, delay time.Duration, command []string) (*slowMount, error) {
	if err := CanMountFUSE(); err != nil {
		return nil, err
	}
	if len(command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find etcdperf's executable to run slowdisk: %w", err)
		}
		command = []string{exe, "slowdisk"}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	s := &slowMount{root: filepath.Join(abs, "etcdperf-slowdisk-"+runID), done: make(chan struct{})}
	s.src, s.mnt = filepath.Join(s.root, "src"), filepath.Join(s.root, "mnt")
	if err := os.Mkdir(s.root, 0o700); err != nil {
		return nil, fmt.Errorf("create the slow disk's folder in %s: %w", abs, err)
	}
	for _, d := range []string{s.src, s.mnt} {
		if err := os.Mkdir(d, 0o700); err != nil {
			os.RemoveAll(s.root)
			return nil, fmt.Errorf("create the slow disk's folder: %w", err)
		}
	}
	args := append(append([]string{}, command[1:]...), "--src", s.src, "--mnt", s.mnt, "--fsync-delay", delay.String())
	s.cmd = exec.Command(command[0], args...)
	// Its own process group: a terminal's Ctrl-C reaches etcdperf only,
	// which stops etcd before it unmounts. Pdeathsig unmounts if etcdperf
	// dies.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	s.cmd.Stderr = &s.stderr
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(s.root)
		return nil, fmt.Errorf("start etcdperf slowdisk: %w", err)
	}
	go func() {
		_ = s.cmd.Wait()
		close(s.done)
	}()
	deadline := time.NewTimer(slowMountTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if m, err := sysinfo.FindMount(s.mnt); err == nil && m.MountPoint == m.Dir && m.FSType == slowdiskFSType {
			return s, nil
		}
		select {
		case <-s.done:
			err := fmt.Errorf("etcdperf slowdisk ended before mounting %s: %s", s.mnt, strings.TrimSpace(s.stderr.String()))
			s.stop()
			return nil, err
		case <-deadline.C:
			s.stop()
			return nil, fmt.Errorf("etcdperf slowdisk did not mount %s within %s", s.mnt, slowMountTimeout)
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// stop unmounts (SIGTERM to slowdisk, a kill after a grace period) and
// removes the folder with the files etcd left in it.
func (s *slowMount) stop() error {
	select {
	case <-s.done:
	default:
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(15 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	}
	if m, err := sysinfo.FindMount(s.mnt); err == nil && m.MountPoint == m.Dir && m.FSType == slowdiskFSType {
		_ = syscall.Unmount(s.mnt, syscall.MNT_DETACH)
	}
	if err := os.RemoveAll(s.root); err != nil {
		return fmt.Errorf("remove the slow disk's folder %s: %w", s.root, err)
	}
	return nil
}
