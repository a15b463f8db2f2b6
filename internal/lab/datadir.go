package lab

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// memberSpace is the free space one embedded member needs to start: etcd
// pre-allocates its WAL in 64 MiB segments, and its database and
// snapshots need a little more. Without it etcd panics while starting.
const memberSpace = 70 << 20

// checkDataDirSpace tells, before anything is written, that dir cannot
// hold n embedded members: it is read-only or has too little free space.
func checkDataDirSpace(dir string, n int) error {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return nil // not knowing is no reason to refuse; etcd will tell
	}
	if st.Flags&unix.ST_RDONLY != 0 {
		return explainDataDirErr(dir, syscall.EROFS)
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	if need := int64(n) * memberSpace; free < need {
		return fmt.Errorf("--data-dir %s has %d MiB free: %d embedded etcd member(s) need at least %d MiB (etcd pre-allocates its WAL in 64 MiB segments); free some space or choose another --data-dir (%w)",
			dir, free>>20, n, need>>20, syscall.ENOSPC)
	}
	return nil
}

// explainDataDirErr says what to do when the run folder cannot be created
// in dir.
func explainDataDirErr(dir string, err error) error {
	switch {
	case errors.Is(err, syscall.EROFS):
		return fmt.Errorf("--data-dir %s is on a read-only file system: choose a writable directory on the storage to test (%w)", dir, err)
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return fmt.Errorf("--data-dir %s: permission denied: run as a user who may write there, or choose another directory (%w)", dir, err)
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return fmt.Errorf("--data-dir %s is full: free some space or choose another directory (%w)", dir, err)
	}
	return fmt.Errorf("create the embedded etcd's folder in --data-dir: %w", err)
}
