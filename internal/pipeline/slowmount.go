package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/etcdperf/etcdperf/internal/lab"
)

// ErrNoFUSE says that a slow view of a directory cannot be mounted here.
var ErrNoFUSE = errors.New("--simulate-fsync-delay mounts a FUSE file system: it needs root and /dev/fuse")

// CanMountFUSE reports why a slow view cannot be mounted here, nil when it
// can.
func CanMountFUSE() error {
	if err := lab.SlowDiskSupported(); err != nil {
		return fmt.Errorf("%w (%v)", ErrNoFUSE, err)
	}
	return nil
}

// slowMount is a slow view of a folder inside the storage under test,
// served by `etcdperf slowdisk` in a child process (lab.SlowDisk):
// the view is mnt, whose fsyncs wait; the files live beside it in root.
type slowMount struct {
	root, mnt string
	disk      *lab.SlowDisk
}

// mountSlow creates the folder etcdperf-slowdisk-<runID> in dir and
// mounts its slow view with command (`etcdperf slowdisk`), waiting until
// the mount is there. On failure everything is removed.
func mountSlow(ctx context.Context, dir, runID string, delay time.Duration, command []string) (*slowMount, error) {
	if err := CanMountFUSE(); err != nil {
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
	sd, err := lab.StartSlowDisk(ctx, command, root, delay)
	if err != nil {
		os.RemoveAll(root)
		return nil, err
	}
	return &slowMount{root: root, mnt: sd.View, disk: sd}, nil
}

// stop unmounts (SIGTERM to slowdisk, a kill after a grace period) and
// removes the folder with the files etcd left in it.
func (s *slowMount) stop() error {
	err := s.disk.Stop()
	if rerr := os.RemoveAll(s.root); rerr != nil {
		err = errors.Join(err, fmt.Errorf("remove the slow disk's folder %s: %w", s.root, rerr))
	}
	return err
}
