package diskprobe

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The probe's timed calls go straight to the kernel with RawSyscall when
// the job may keep its P (see job.raw). The ordinary path (unix.Pwrite,
// unix.Fdatasync) tells the Go scheduler about the blocking call; on a
// 2-vCPU VM that handoff added ~15% to fdatasync's median and more to its
// p99 compared with C and fio (bench/diskparity; DEVELOPERS notes in the
// closing note of the disk issue). Both paths retry on EINTR, which a FUSE
// file system may return when the runtime's preemption signal arrives.

func rawPwrite(fd int, b []byte, off int64) (int, error) {
	for {
		n, _, e := unix.RawSyscall6(unix.SYS_PWRITE64, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(off), 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return int(n), e
		}
		return int(n), nil
	}
}

func rawSync(fd int, trap uintptr) error {
	for {
		_, _, e := unix.RawSyscall(trap, uintptr(fd), 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return e
		}
		return nil
	}
}

func schedPwrite(fd int, b []byte, off int64) (int, error) {
	for {
		n, err := unix.Pwrite(fd, b, off)
		if err == unix.EINTR {
			continue
		}
		return n, err
	}
}

func schedSync(fd int, trap uintptr) error {
	for {
		_, _, e := unix.Syscall(trap, uintptr(fd), 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return e
		}
		return nil
	}
}
