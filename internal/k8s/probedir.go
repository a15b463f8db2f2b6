package k8s

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrNotEmpty says that the probe directory was left in place because
// something else is in it: another run on the same node, or the files of
// a run that was killed.
var ErrNotEmpty = errors.New("not empty")

// ProbeDir is the directory a pod creates on a node, beside etcd's data
// dir, for the files of its probe.
type ProbeDir struct {
	Path string
	// Device is the file system's device number, as major:minor.
	Device string
}

// CreateProbeDir creates dir (one level, mode 0700) after checking that it
// would be on the same file system as beside, etcd's data dir as the pod
// sees it: otherwise the probe would measure another disk than etcd's. A
// directory already there (another run on this node, or one that was
// killed) is used as it is; a symbolic link is refused.
func CreateProbeDir(dir, beside string) (*ProbeDir, error) {
	dir = filepath.Clean(dir)
	parent := filepath.Dir(dir)
	var pst unix.Stat_t
	if err := unix.Stat(parent, &pst); err != nil {
		return nil, &fs.PathError{Op: "probe directory", Path: parent, Err: err}
	}
	if pst.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil, &fs.PathError{Op: "probe directory", Path: parent, Err: syscall.ENOTDIR}
	}
	if beside != "" {
		var bst unix.Stat_t
		if err := unix.Stat(beside, &bst); err != nil {
			return nil, fmt.Errorf("etcd's data dir %s: %w (is this an etcd node, and is --etcd-data-dir right?)", beside, err)
		}
		if bst.Dev != pst.Dev {
			return nil, fmt.Errorf("%s is on device %s but etcd's data %s is on device %s: the probe would measure another disk than etcd's; etcd's data dir is a mount of its own, so make the manifest again with --host-dir set to the data dir (the probe then writes beside member/, never in it)",
				parent, devString(pst.Dev), beside, devString(bst.Dev))
		}
	}
	err := os.Mkdir(dir, 0o700)
	if errors.Is(err, fs.ErrExist) {
		st, lerr := os.Lstat(dir)
		switch {
		case lerr != nil:
			err = lerr
		case st.Mode()&fs.ModeSymlink != 0:
			err = fmt.Errorf("it is a symbolic link; etcdperf writes only in a real directory of its own")
		case !st.IsDir():
			err = syscall.ENOTDIR
		default:
			err = nil
		}
	}
	if errors.Is(err, fs.ErrPermission) {
		return nil, fmt.Errorf("create probe directory %s: %w: %s belongs to uid %d and this process runs as uid %d without the capability to write there; make the manifest again with --run-as-user %d",
			dir, syscall.EACCES, parent, pst.Uid, os.Geteuid(), pst.Uid)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "create probe directory", Path: dir, Err: unwrapPathError(err)}
	}
	return &ProbeDir{Path: dir, Device: devString(pst.Dev)}, nil
}

// Remove removes the directory when it is empty. When it is not, it leaves
// it and returns an error wrapping ErrNotEmpty.
func (p *ProbeDir) Remove() error {
	err := os.Remove(p.Path)
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist):
		return nil
	case errors.Is(err, syscall.ENOTEMPTY), errors.Is(err, syscall.EEXIST):
		return fmt.Errorf("left %s in place: it is %w (another etcdperf run on this node, or the files of one that was killed)", p.Path, ErrNotEmpty)
	}
	return fmt.Errorf("remove probe directory: %w", err)
}

func devString(dev uint64) string {
	return fmt.Sprintf("%d:%d", unix.Major(dev), unix.Minor(dev))
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
