package pipeline

import (
	"errors"
	"fmt"

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
