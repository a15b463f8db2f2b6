package testutil

import (
	"os"
	"os/exec"
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
