package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/etcdperf/etcdperf/internal/cgroup"
	"github.com/etcdperf/etcdperf/internal/sysinfo"
)

// VolumeSize is the size of a capped volume, at most: three quarters of
// the room on the disk under it where that is less, and no less than
// minVolumeSize (the member's WAL segments are 64 MiB each).
const (
	VolumeSize    = 1 << 30
	minVolumeSize = 256 << 20
)

// volumeSize is the size of a volume over a file in dir.
func volumeSize(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	size := min(VolumeSize, free/4*3) &^ (1<<20 - 1)
	if size < minVolumeSize {
		return 0, fmt.Errorf("a volume needs %d MiB free under %s, which has %d MiB", minVolumeSize*4/3>>20, dir, free>>20)
	}
	return size, nil
}

// allocate writes size bytes of zeros to f, synced, so that the volume's
// writes land on blocks the file system under it has allocated already,
// as a cloud volume's do: in a sparse (or fallocated) file, each first
// write to a block also commits the file system's metadata for it, which
// slows every fdatasync (docs/evidence.md, "Notes behind the rules").
func allocate(f *os.File, size int64) error {
	buf := make([]byte, 4<<20)
	for off := int64(0); off < size; off += int64(len(buf)) {
		if _, err := f.Write(buf[:min(int64(len(buf)), size-off)]); err != nil {
			return err
		}
	}
	return f.Sync()
}

// volumeSuffix marks a volume's backing file: .NAME.etcdperf-volume-RANDOM
// beside the data dir NAME.
const volumeSuffix = ".etcdperf-volume-"

// volumeBlockSize is the loop device's logical block size: a multiple of
// any disk's, so that its direct I/O to the file is never refused (a zram
// disk takes no less than 4096 bytes).
const volumeBlockSize = 4096

// Volume is a file system of its own for a member's data: ext4 (without a
// journal) on a loop device over a file of zeros (allocate) on the disk of the data dir's parent, mounted
// on the data dir. The loop device does direct I/O to the file, in the
// cgroup of the process that writes: a cap on that process's writes to
// the disk under the file (Backing) holds the volume's writes back below
// the member's own device, as a cloud volume's cap does: the loop device
// shows them queued, and no cap on the member's writes to it exists.
type Volume struct {
	// Dir is the mount point (the member's data dir).
	Dir string
	// File is the backing file.
	File string
	// Loop is the loop device (/dev/loopN).
	Loop string
	// Backing is the disk that holds File: the one to cap.
	Backing cgroup.Device

	mounted bool
	// made are the folders made for the mount point, deepest last.
	made []string
}

// VolumeSupported says why a capped volume cannot be made here, or nil
// when it can: it needs root, the loop driver and mkfs.ext4.
func VolumeSupported() error {
	if os.Geteuid() != 0 {
		return errors.New("a capped volume needs root: it attaches a loop device and mounts a file system (run etcdperf as root)")
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		return errors.New("a capped volume needs loop devices, which this machine lacks (/dev/loop-control: load the loop module, modprobe loop; in a container add --device /dev/loop-control and the /dev/loop* devices)")
	}
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		return errors.New("a capped volume needs mkfs.ext4, which is not on the PATH (install e2fsprogs)")
	}
	return nil
}

// CheckVolumeDir says why dir cannot take a volume: a volume is mounted
// on it, hiding what it holds, so it must be an empty folder or missing.
func CheckVolumeDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if len(ents) > 0 {
		return fmt.Errorf("%s is not empty: a capped volume is mounted on the data dir, which would hide what it holds; give a new or empty folder", dir)
	}
	return nil
}

// MountVolume makes a volume of VolumeSize for dir and mounts it there:
// the backing file (created with O_EXCL beside dir), a loop device on it
// with direct I/O that detaches itself once unmounted, ext4 on it. dir
// must be empty or missing (it is made, with its missing parents, mode
// 0700). On error nothing is left behind. Remove undoes it all.
func MountVolume(ctx context.Context, dir string) (v *Volume, err error) {
	if err := VolumeSupported(); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := CheckVolumeDir(abs); err != nil {
		return nil, err
	}
	v = &Volume{Dir: abs}
	defer func() {
		if err != nil {
			err = errors.Join(err, v.Remove())
			v = nil
		}
	}()
	if err := v.makeDir(); err != nil {
		return v, err
	}
	// The real path: the loop device names its file by it.
	parent, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return v, err
	}
	if v.Backing, err = cgroup.Host.DeviceOf(parent); err != nil {
		return v, err
	}
	f, err := os.CreateTemp(parent, "."+filepath.Base(abs)+volumeSuffix+"*")
	if err != nil {
		return v, fmt.Errorf("the volume's file beside %s: %w", abs, err)
	}
	v.File = f.Name()
	size, err := volumeSize(parent)
	if err == nil {
		err = allocate(f, size)
	}
	if err != nil {
		f.Close()
		return v, fmt.Errorf("write the volume's file %s: %w", v.File, err)
	}
	loop, err := attachLoop(f)
	f.Close()
	if err != nil {
		return v, err
	}
	// Our descriptor keeps the loop device bound while mkfs opens and
	// closes it; after the mount the mount does.
	defer loop.Close()
	v.Loop = loop.Name()
	if err := checkDirectIO(v.Loop); err != nil {
		return v, err
	}
	// No journal: a journal's commits are written by a kernel thread, in
	// no cgroup of the member's, out of the cap's reach (with one, about a
	// third of a capped member's writes to the disk under the volume went
	// uncounted; without, a fifth: the kernel's writeback of metadata).
	// No discard and lazy inode tables: mkfs writes little; noinit_itable
	// keeps the kernel from writing the tables later, beside etcd.
	mkfs := exec.CommandContext(ctx, "mkfs.ext4", "-q", "-F", "-O", "^has_journal", "-E", "lazy_itable_init=1,lazy_journal_init=1,nodiscard", v.Loop)
	if out, err := mkfs.CombinedOutput(); err != nil {
		return v, fmt.Errorf("mkfs.ext4 %s (the volume's file %s): %v: %s", v.Loop, v.File, err, strings.TrimSpace(string(out)))
	}
	if err := unix.Mount(v.Loop, abs, "ext4", unix.MS_NOATIME, "noinit_itable"); err != nil {
		return v, fmt.Errorf("mount the volume %s on %s: %w", v.Loop, abs, err)
	}
	v.mounted = true
	// An empty private folder, as etcd makes its data dir.
	if err := os.Remove(filepath.Join(abs, "lost+found")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return v, fmt.Errorf("the volume on %s: %w", abs, err)
	}
	if err := os.Chmod(abs, 0o700); err != nil {
		return v, fmt.Errorf("the volume on %s: %w", abs, err)
	}
	return v, nil
}

// makeDir makes the mount point and its missing parents, remembering
// which, so that Remove leaves the folders as they were found.
func (v *Volume) makeDir() error {
	var missing []string
	for p := v.Dir; ; p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil || p == filepath.Dir(p) {
			break
		}
		missing = append(missing, p)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o700); err != nil {
			return fmt.Errorf("make the volume's mount point: %w", err)
		}
		v.made = append(v.made, missing[i])
	}
	return nil
}

// attachLoop binds a free loop device to f with direct I/O, detached
// automatically when its last user closes it. It returns the device open.
func attachLoop(f *os.File) (*os.File, error) {
	ctl, err := os.OpenFile("/dev/loop-control", os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("loop devices: %w", err)
	}
	defer ctl.Close()
	cfg := unix.LoopConfig{Fd: uint32(f.Fd()), Size: volumeBlockSize}
	cfg.Info.Flags = unix.LO_FLAGS_DIRECT_IO | unix.LO_FLAGS_AUTOCLEAR
	copy(cfg.Info.File_name[:len(cfg.Info.File_name)-1], f.Name())
	var last error
	// Another process may take the free device between the two calls.
	for range 10 {
		n, err := unix.IoctlRetInt(int(ctl.Fd()), unix.LOOP_CTL_GET_FREE)
		if err != nil {
			return nil, fmt.Errorf("find a free loop device: %w", err)
		}
		name := "/dev/loop" + strconv.Itoa(n)
		dev, err := os.OpenFile(name, os.O_RDWR, 0)
		if err != nil {
			return nil, fmt.Errorf("loop device %s: %w", name, err)
		}
		err = unix.IoctlLoopConfigure(int(dev.Fd()), &cfg)
		if err == nil {
			return dev, nil
		}
		dev.Close()
		last = err
		if !errors.Is(err, unix.EBUSY) {
			break
		}
	}
	if errors.Is(last, unix.ENOTTY) || errors.Is(last, unix.EINVAL) {
		return nil, fmt.Errorf("attach a loop device to %s: %w (LOOP_CONFIGURE needs Linux 5.8 or later)", f.Name(), last)
	}
	return nil, fmt.Errorf("attach a loop device to %s: %w", f.Name(), last)
}

// checkDirectIO says so when the loop device does not do direct I/O to its
// file (a file system without O_DIRECT): its writes would then reach the
// disk later, from the kernel's flusher, out of the cap's reach.
func checkDirectIO(loop string) error {
	b, err := os.ReadFile("/sys/block/" + filepath.Base(loop) + "/loop/dio")
	if err != nil {
		return fmt.Errorf("loop device %s: %w", loop, err)
	}
	if strings.TrimSpace(string(b)) != "1" {
		return fmt.Errorf("loop device %s does not do direct I/O to its file: the file system of the data dir's parent does not take it; give a data dir on a disk (ext4, xfs)", loop)
	}
	return nil
}

// Remove unmounts the volume (the loop device then detaches itself),
// removes its file and the folders made for it. It does what is left to
// do of that, so it may be called again.
func (v *Volume) Remove() error {
	var errs []error
	if v.mounted {
		if err := unmountRetry(v.Dir); err != nil {
			errs = append(errs, err)
		} else {
			v.mounted = false
		}
	}
	if v.Loop != "" && !v.mounted {
		if err := waitLoopFree(v.Loop, v.File); err != nil {
			errs = append(errs, err)
		}
	}
	if v.File != "" {
		if err := os.Remove(v.File); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove the volume's file: %w", err))
		} else {
			v.File = ""
		}
	}
	if !v.mounted {
		for i := len(v.made) - 1; i >= 0; i-- {
			if err := os.Remove(v.made[i]); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, fmt.Errorf("remove the volume's mount point: %w", err))
				break
			}
			v.made = v.made[:i]
		}
	}
	return errors.Join(errs...)
}

// unmountRetry unmounts dir, trying again for a while when it is busy (a
// file still being closed), then detaching it lazily.
func unmountRetry(dir string) error {
	var err error
	for range 50 {
		if err = unix.Unmount(dir, 0); err == nil || errors.Is(err, unix.EINVAL) {
			return nil // EINVAL: not mounted any more
		}
		if !errors.Is(err, unix.EBUSY) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if derr := unix.Unmount(dir, unix.MNT_DETACH); derr != nil {
		return fmt.Errorf("unmount the volume on %s: %w (umount -l %s)", dir, err, dir)
	}
	return nil
}

// waitLoopFree waits a little for the loop device to detach itself from
// file after the unmount, and detaches it when it did not.
func waitLoopFree(loop, file string) error {
	bound := func() bool {
		b, err := os.ReadFile("/sys/block/" + filepath.Base(loop) + "/loop/backing_file")
		return err == nil && strings.HasPrefix(strings.TrimSpace(string(b)), file)
	}
	for range 50 {
		if !bound() {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	f, err := os.OpenFile(loop, os.O_RDWR, 0)
	if err == nil {
		err = unix.IoctlSetInt(int(f.Fd()), unix.LOOP_CLR_FD, 0)
		f.Close()
	}
	if err != nil && bound() {
		return fmt.Errorf("detach the loop device %s: %w (losetup -d %s)", loop, err, loop)
	}
	return nil
}

// removeVolumeLeft undoes what a member process killed outright left of
// its volume on dir: the mount (the loop device detaches itself) and the
// file beside it.
func removeVolumeLeft(dir string) error {
	var errs []error
	if m, err := sysinfo.FindMount(dir); err == nil && m.MountPoint == dir {
		errs = append(errs, unmountRetry(dir))
	}
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+volumeSuffix+"*"))
	for _, f := range files {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
