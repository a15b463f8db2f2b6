// Package noise makes a directory's device busy the way neighbours do:
// image pulls, builds and log bursts of other jobs write large buffered
// chunks that the kernel writes back in bulk, which delays etcd's fsyncs
// on the same device (etcd's tuning guide: other processes' disk I/O).
package noise

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Options configure the background writer.
type Options struct {
	// Dir is where the noise files go (the device under test).
	Dir string
	// ChunkSize is the size of each buffered write (default 1 MiB).
	ChunkSize int
	// FileSize is how large a noise file grows before it is deleted and a
	// new one started (default 256 MiB); at most Writers files exist at once.
	FileSize int64
	// Writers is the number of parallel writers (default 1).
	Writers int
}

func (o *Options) defaults() {
	if o.ChunkSize <= 0 {
		o.ChunkSize = 1 << 20
	}
	if o.FileSize <= 0 {
		o.FileSize = 256 << 20
	}
	if o.Writers <= 0 {
		o.Writers = 1
	}
}

// Noise is a running background writer.
type Noise struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	bytes  atomic.Int64
	mu     sync.Mutex
	err    error
}

// Start begins writing in the background until ctx ends or Stop is called.
// It needs Writers*FileSize free bytes in Dir.
func Start(ctx context.Context, o Options) (*Noise, error) {
	o.defaults()
	var fs unix.Statfs_t
	if err := unix.Statfs(o.Dir, &fs); err != nil {
		return nil, fmt.Errorf("noise directory %s: %w", o.Dir, err)
	}
	if need := o.FileSize * int64(o.Writers); int64(fs.Bavail)*int64(fs.Bsize) < need {
		return nil, fmt.Errorf("noise directory %s: needs %d free bytes for the background writer: %w", o.Dir, need, unix.ENOSPC)
	}
	ctx, cancel := context.WithCancel(ctx)
	n := &Noise{cancel: cancel}
	buf := make([]byte, o.ChunkSize)
	_, _ = rand.Read(buf) // incompressible, like image layers
	prefix := filepath.Join(o.Dir, fmt.Sprintf(".etcdperf-noise-%d-%d", os.Getpid(), time.Now().UnixNano()))
	for i := 0; i < o.Writers; i++ {
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			if err := n.write(ctx, o, buf, fmt.Sprintf("%s-%d", prefix, i)); err != nil {
				n.mu.Lock()
				n.err = errors.Join(n.err, err)
				n.mu.Unlock()
			}
		}()
	}
	return n, nil
}

// write fills a file chunk by chunk, asking the kernel to start writing
// each chunk back without waiting for it (as bulk writers effectively get
// once dirty memory fills up), and starts over in a new file when full.
func (n *Noise) write(ctx context.Context, o Options, buf []byte, base string) error {
	for seg := 0; ctx.Err() == nil; seg++ {
		path := fmt.Sprintf("%s.%d", base, seg)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return fmt.Errorf("noise file in %s: %w", o.Dir, err)
		}
		var off int64
		for off+int64(len(buf)) <= o.FileSize && ctx.Err() == nil {
			if _, err := f.Write(buf); err != nil {
				f.Close()
				os.Remove(path)
				if errors.Is(err, unix.ENOSPC) {
					return fmt.Errorf("noise file %s: %w", path, err)
				}
				return err
			}
			_ = unix.SyncFileRange(int(f.Fd()), off, int64(len(buf)), unix.SYNC_FILE_RANGE_WRITE)
			off += int64(len(buf))
			n.bytes.Add(int64(len(buf)))
		}
		f.Close()
		os.Remove(path)
	}
	return nil
}

// Bytes returns how much has been written so far.
func (n *Noise) Bytes() int64 { return n.bytes.Load() }

// Stop ends the writers and waits until their files are removed.
func (n *Noise) Stop() error {
	n.cancel()
	n.wg.Wait()
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.err
}
