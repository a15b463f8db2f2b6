package testutil

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// MountTmpfs mounts a tmpfs of the given size (e.g. "1m") on a new
// temporary directory and unmounts it when the test ends. It skips the test,
// saying why, where mounting is not possible (not root, no CAP_SYS_ADMIN).
func MountTmpfs(t testing.TB, size string, readOnly bool) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	var flags uintptr
	if readOnly {
		flags |= unix.MS_RDONLY
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", flags, "size="+size); err != nil {
		t.Skipf("skipped: cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			_ = unix.Unmount(dir, unix.MNT_DETACH)
		}
	})
	return dir
}

// RunAsNobody returns a command that runs as the unprivileged user 65534,
// or skips the test when that is not possible.
func RunAsNobody(t testing.TB, cmd *exec.Cmd) *exec.Cmd {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: switching to an unprivileged user needs root")
	}
	setCredential(cmd, 65534, 65534)
	return cmd
}

// MountQuietDisk mounts an ext4 file system without a journal on a
// compressed RAM disk (a zram device of its own) on a new temporary
// directory, and removes it all when the test ends. It is a disk with time
// to spare: its writes and flushes are done at once by the thread that
// asks, with no kernel thread (journal, device worker) to wait for a CPU
// and no other work's I/O to queue behind, so that a test of a healthy
// member does not depend on how busy the machine is.
// It skips the test, saying why, where this cannot be done (not root, no
// zram, no mkfs.ext4).
func MountQuietDisk(t testing.TB, size string) string {
	t.Helper()
	if err := QuietDiskSupported(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	return mountQuietDisk(t, size)
}

// QuietDirOr is a MountQuietDisk of size where this machine can make one,
// and a temporary directory elsewhere, for a test that judges a disk it
// does not mean to load: on the machine's own disk the judgement follows
// how busy that disk is.
func QuietDirOr(t testing.TB, size string) string {
	t.Helper()
	if QuietDiskSupported() != nil {
		return t.TempDir()
	}
	return mountQuietDisk(t, size)
}

// QuietDiskSupported says why MountQuietDisk cannot make a disk here.
func QuietDiskSupported() error {
	if os.Geteuid() != 0 {
		return errors.New("a RAM disk needs root")
	}
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		return errors.New("mkfs.ext4 is missing (apt-get install e2fsprogs)")
	}
	if _, err := os.Stat("/sys/class/zram-control/hot_add"); err != nil {
		return fmt.Errorf("this kernel has no zram to make a RAM disk with: %v", err)
	}
	return nil
}

func mountQuietDisk(t testing.TB, size string) string {
	t.Helper()
	b, err := os.ReadFile("/sys/class/zram-control/hot_add")
	if err != nil {
		t.Skipf("skipped: this kernel has no zram to make a RAM disk with: %v", err)
	}
	n := strings.TrimSpace(string(b))
	dev := "/dev/zram" + n
	t.Cleanup(func() {
		os.WriteFile("/sys/block/zram"+n+"/reset", []byte("1"), 0)
		os.WriteFile("/sys/class/zram-control/hot_remove", []byte(n), 0)
	})
	if err := os.WriteFile("/sys/block/zram"+n+"/disksize", []byte(size), 0); err != nil {
		t.Fatalf("size %s: %v", dev, err)
	}
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", "-O", "^has_journal", dev).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4 %s: %v: %s", dev, err, out)
	}
	dir := t.TempDir()
	if err := unix.Mount(dev, dir, "ext4", 0, ""); err != nil {
		t.Skipf("skipped: cannot mount %s: %v", dev, err)
	}
	// lost+found is the file system's; the tests expect an empty folder.
	os.Remove(filepath.Join(dir, "lost+found"))
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			_ = unix.Unmount(dir, unix.MNT_DETACH)
		}
	})
	return dir
}
