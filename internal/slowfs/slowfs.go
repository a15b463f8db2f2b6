// Package slowfs is a FUSE pass-through file system that makes storage
// slow on purpose: every fsync/fdatasync (and optionally every write) is
// delayed before it is passed to the real file system underneath. It lets
// people reproduce what etcd does on a slow disk ("apply request took too
// long", missed heartbeats, "request timed out") on any machine.
//
// Run it in its own process (etcdperf slowdisk): a FUSE server in the same
// process as etcd can deadlock on bbolt's mmap when the kernel does not
// pass reads and writes through.
package slowfs

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// Config says how slow the file system is.
type Config struct {
	// FsyncDelay is added to every fsync and fdatasync.
	FsyncDelay time.Duration
	// WriteDelay is added to every write. It needs the kernel to send
	// writes to the server, so pass-through is off when it is set.
	WriteDelay time.Duration
	// Jitter adds a uniformly random extra delay in [0, Jitter) to each
	// delayed call.
	Jitter time.Duration
	// AllowOther lets users other than the one who mounted use the mount.
	AllowOther bool
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.FsyncDelay < 0 || c.WriteDelay < 0 || c.Jitter < 0 {
		return fmt.Errorf("delays must not be negative")
	}
	if c.FsyncDelay > time.Minute || c.WriteDelay > time.Minute || c.Jitter > time.Minute {
		return fmt.Errorf("delays above one minute would stall etcd beyond any timeout; use at most 1m")
	}
	return nil
}

// Stats counts what the file system delayed.
type Stats struct {
	Fsyncs, Writes atomic.Int64
}

// Mount is a mounted slow file system.
type Mount struct {
	Src, Mnt   string
	Stats      *Stats
	server     *fuse.Server
	fsyncDelay *atomic.Int64
}

// SetFsyncDelay changes the delay added to every fsync and fdatasync from
// now on (a disk that turns slow, or recovers).
func (m *Mount) SetFsyncDelay(d time.Duration) { m.fsyncDelay.Store(int64(max(d, 0))) }

// Start mounts a slow view of src on mnt (both existing directories) and
// serves it in the background. It needs root (it mounts directly, without
// fusermount) and /dev/fuse.
func Start(src, mnt string, cfg Config) (*Mount, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	for _, d := range []string{src, mnt} {
		st, err := os.Stat(d)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("%s: not a directory", d)
		}
	}
	absSrc, err := filepath.Abs(src)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return nil, fmt.Errorf("no /dev/fuse on this machine (load the fuse module, or in a container add --device /dev/fuse): %w", err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(absSrc, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", absSrc, err)
	}
	stats := &Stats{}
	delay := &atomic.Int64{}
	delay.Store(int64(cfg.FsyncDelay))
	root := &fs.LoopbackRoot{Path: absSrc, Dev: uint64(st.Dev)}
	node := &slowNode{LoopbackNode: &fs.LoopbackNode{RootData: root}, cfg: cfg, stats: stats, fsyncDelay: delay}
	root.RootNode = node
	opts := &fs.Options{
		MountOptions: fuse.MountOptions{
			AllowOther:        cfg.AllowOther,
			FsName:            absSrc,
			Name:              "etcdperf-slowdisk",
			DirectMountStrict: true,
		},
	}
	server, err := fs.Mount(mnt, node, opts)
	if err != nil {
		if errors.Is(err, syscall.EPERM) {
			return nil, fmt.Errorf("mount %s: permission denied (mounting needs root)", mnt)
		}
		return nil, fmt.Errorf("mount %s: %w", mnt, err)
	}
	return &Mount{Src: absSrc, Mnt: mnt, Stats: stats, server: server, fsyncDelay: delay}, nil
}

// Unmount unmounts, retrying while files are still open, and as a last
// resort detaches the mount lazily (it disappears once the last file is
// closed). It reports whether it had to detach lazily.
func (m *Mount) Unmount() (lazy bool, err error) {
	if err := m.server.Unmount(); err == nil {
		return false, nil
	}
	if err := unix.Unmount(m.Mnt, unix.MNT_DETACH); err != nil {
		return false, fmt.Errorf("unmount %s: %w (unmount it by hand: umount -l %s)", m.Mnt, err, m.Mnt)
	}
	return true, nil
}

// Wait blocks until the file system is unmounted (also from outside).
func (m *Mount) Wait() { m.server.Wait() }

// slowNode is a loopback node whose syncs and writes are delayed.
type slowNode struct {
	*fs.LoopbackNode
	cfg   Config
	stats *Stats
	// fsyncDelay is the mount's fsync delay (Mount.SetFsyncDelay).
	fsyncDelay *atomic.Int64
}

var (
	_ fs.NodeWrapChilder = (*slowNode)(nil)
	_ fs.NodeFsyncer     = (*slowNode)(nil)
	_ fs.NodeOpener      = (*slowNode)(nil)
	_ fs.NodeCreater     = (*slowNode)(nil)
)

// WrapChild makes every node below the root slow too.
func (n *slowNode) WrapChild(ctx context.Context, ops fs.InodeEmbedder) fs.InodeEmbedder {
	if ln, ok := ops.(*fs.LoopbackNode); ok {
		return &slowNode{LoopbackNode: ln, cfg: n.cfg, stats: n.stats, fsyncDelay: n.fsyncDelay}
	}
	return ops
}

// sleep waits d plus jitter. It deliberately ignores the request's
// context: the kernel interrupts a FUSE request when the calling thread gets
// a signal (Go sends its threads preemption signals all the time), and
// failing the fsync with EINTR would make etcd exit. A slow disk does not
// return early either.
func (n *slowNode) sleep(d time.Duration) {
	if n.cfg.Jitter > 0 {
		d += time.Duration(rand.Int64N(int64(n.cfg.Jitter)))
	}
	if d > 0 {
		time.Sleep(d)
	}
}

// Fsync delays, then syncs the underlying file: fdatasync when the caller
// asked for it (FUSE_FSYNC_FDATASYNC), else fsync.
func (n *slowNode) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno {
	n.stats.Fsyncs.Add(1)
	n.sleep(time.Duration(n.fsyncDelay.Load()))
	sf, ok := f.(*slowFile)
	if !ok {
		if fy, ok := f.(fs.FileFsyncer); ok {
			return fy.Fsync(ctx, flags)
		}
		return syscall.ENOTSUP
	}
	fd, ok := sf.LoopbackFile.PassthroughFd()
	if !ok {
		return sf.LoopbackFile.Fsync(ctx, flags)
	}
	var err error
	for {
		if flags&1 != 0 {
			err = unix.Fdatasync(fd)
		} else {
			err = unix.Fsync(fd)
		}
		if err != unix.EINTR {
			break
		}
	}
	return fs.ToErrno(err)
}

// Open wraps the file handle so that writes can be delayed.
func (n *slowNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, fl, errno := n.LoopbackNode.Open(ctx, flags)
	return n.wrap(fh), fl, errno
}

// Create wraps the new file's handle likewise.
func (n *slowNode) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	in, fh, fl, errno := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	return in, n.wrap(fh), fl, errno
}

func (n *slowNode) wrap(fh fs.FileHandle) fs.FileHandle {
	lf, ok := fh.(*fs.LoopbackFile)
	if !ok {
		return fh
	}
	return &slowFile{LoopbackFile: lf, node: n}
}

// slowFile is a loopback file handle with delayed writes.
type slowFile struct {
	*fs.LoopbackFile
	node *slowNode
}

// Write delays, then writes.
func (f *slowFile) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	f.node.stats.Writes.Add(1)
	f.node.sleep(f.node.cfg.WriteDelay)
	return f.LoopbackFile.Write(ctx, data, off)
}

// PassthroughFd lets the kernel bypass the server for reads and writes,
// except when writes must be delayed.
func (f *slowFile) PassthroughFd() (int, bool) {
	if f.node.cfg.WriteDelay > 0 {
		return -1, false
	}
	return f.LoopbackFile.PassthroughFd()
}
