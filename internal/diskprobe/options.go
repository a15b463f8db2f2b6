// Package diskprobe measures a directory's storage the way etcd's WAL uses
// it: small sequential writes, each followed by fdatasync, into a
// pre-allocated file. It only creates its own uniquely named files and
// removes them before it returns, also on errors and cancellation.
package diskprobe

import (
	"errors"
	"fmt"
	"time"
)

// SyncMode says how each write is made durable.
type SyncMode string

// The sync modes, named as in fio.
const (
	SyncFdatasync SyncMode = "fdatasync" // write(), then fdatasync(): what etcd's WAL does
	SyncFsync     SyncMode = "fsync"     // write(), then fsync()
	SyncODsync    SyncMode = "odsync"    // open with O_DSYNC: every write() is durable
	SyncNone      SyncMode = "none"      // no sync: measures the page cache
)

// Pattern is the order of the writes.
type Pattern string

// The write patterns, named as in fio's --rw.
const (
	Sequential Pattern = "write"
	Random     Pattern = "randwrite"
)

// Defaults of the probe: the WAL test of the etcd community (fio
// --rw=write --ioengine=sync --fdatasync=1 --size=22m --bs=2300).
const (
	DefaultBlockSize = 2300
	DefaultSize      = 22 << 20
	DefaultRuntime   = 60 * time.Second
)

// Options configure a probe run.
type Options struct {
	// Dir is the directory under test; the probe files are created in it.
	Dir string
	// BlockSize is the size of each write, in bytes.
	BlockSize int
	// Size is the number of bytes each job writes (the file size).
	Size int64
	// Runtime bounds the run; 0 means no time limit.
	Runtime time.Duration
	// TimeBased keeps writing until Runtime has passed: when a file is
	// full, the job starts a new pre-allocated file, as etcd cuts a new WAL
	// segment, instead of stopping.
	TimeBased bool
	// Prealloc pre-allocates each file with fallocate before writing, as
	// fio does by default and as etcd does for its WAL segments.
	Prealloc bool
	Sync     SyncMode
	// Direct opens the files with O_DIRECT; BlockSize must then be a
	// multiple of the device's logical block size.
	Direct bool
	RW     Pattern
	// Jobs is the number of parallel writers, each on its own file.
	Jobs int
	// Rate paces the writes: at most this many per second over all jobs
	// (each followed by its sync); 0 writes as fast as the device allows.
	// Beside a live etcd member the probe is paced so that it leaves the
	// device to etcd.
	Rate float64
	// DirFlag and SizeFlag name the options that set Dir and Size in the
	// hints of errors ("choose a writable --data-dir"); by default --dir
	// and --size, the disk command's.
	DirFlag, SizeFlag string
}

// named sets the flags that errors' hints name on an *Error of o.
func (o *Options) named(err error) error {
	var e *Error
	if errors.As(err, &e) {
		e.DirFlag, e.SizeFlag = o.DirFlag, o.SizeFlag
	}
	return err
}

// Validate checks the options and returns a usage error naming the bad one.
func (o *Options) Validate() error {
	if o.Dir == "" {
		return fmt.Errorf("no directory to probe")
	}
	if o.BlockSize <= 0 {
		return fmt.Errorf("--bs must be positive, got %d", o.BlockSize)
	}
	if o.BlockSize > 64<<20 {
		return fmt.Errorf("--bs must be at most 64MiB, got %d", o.BlockSize)
	}
	if o.Size < int64(o.BlockSize) {
		return fmt.Errorf("--size (%d bytes) must hold at least one block of --bs %d bytes", o.Size, o.BlockSize)
	}
	if o.Runtime < 0 {
		return fmt.Errorf("--runtime must not be negative")
	}
	if o.TimeBased && o.Runtime == 0 {
		return fmt.Errorf("a time-based run needs --runtime")
	}
	if o.Rate < 0 {
		return fmt.Errorf("the probe's rate must not be negative, got %g", o.Rate)
	}
	switch o.Sync {
	case SyncFdatasync, SyncFsync, SyncODsync, SyncNone:
	default:
		return fmt.Errorf("--sync must be fdatasync, fsync, odsync or none, got %q", o.Sync)
	}
	switch o.RW {
	case Sequential, Random:
	default:
		return fmt.Errorf("--rw must be write or randwrite, got %q", o.RW)
	}
	if o.Direct && o.BlockSize%512 != 0 {
		return fmt.Errorf("--direct needs --bs to be a multiple of the device's logical block size (512 or 4096 bytes); %d is not", o.BlockSize)
	}
	if o.Jobs < 1 || o.Jobs > 256 {
		return fmt.Errorf("--jobs must be between 1 and 256, got %d", o.Jobs)
	}
	return nil
}
