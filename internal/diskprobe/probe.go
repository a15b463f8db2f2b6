package diskprobe

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/etcdperf/etcdperf/internal/hist"
	"github.com/etcdperf/etcdperf/internal/units"
)

// Outcome is what a probe run measured.
type Outcome struct {
	// Write and Sync are the latencies of all jobs together. Sync is empty
	// with SyncNone and SyncODsync (there, Write includes the flush).
	Write, Sync *hist.Histogram
	Jobs        []JobOutcome
	Ops, Bytes  int64
	Elapsed     time.Duration
	// Notes are facts the reader needs to trust the numbers.
	Notes []string
	// Interrupted is true when the run was cancelled before it finished;
	// the numbers cover what was done until then.
	Interrupted bool
}

// JobOutcome is one writer's share.
type JobOutcome struct {
	File        string
	Ops, Bytes  int64
	Write, Sync *hist.Histogram
}

// Progress reports how far a running probe is; safe for concurrent use.
type Progress struct {
	bytes atomic.Int64
}

// Bytes returns how many bytes have been written so far.
func (p *Progress) Bytes() int64 { return p.bytes.Load() }

// Run probes o.Dir and removes every file it made before returning. When
// ctx is cancelled it stops, cleans up and returns what it measured with
// Interrupted set, and ctx's error. prog may be nil.
func Run(ctx context.Context, o Options, prog *Progress) (*Outcome, error) {
	out, err := run(ctx, o, prog)
	return out, o.named(err)
}

func run(ctx context.Context, o Options, prog *Progress) (*Outcome, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if err := CheckDir(o); err != nil {
		return nil, err
	}
	if prog == nil {
		prog = &Progress{}
	}
	runID := fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
	// Raw syscalls hold a P each; keep one P free for the rest of the
	// program (signals, progress), else fall back to the scheduler's path.
	raw := o.Jobs < runtime.GOMAXPROCS(0)
	jobs := make([]*job, o.Jobs)
	for i := range jobs {
		jobs[i] = &job{opts: o, prog: prog, raw: raw, prefix: filepath.Join(o.Dir, fmt.Sprintf(".etcdperf-probe-%s-%d", runID, i))}
	}
	// Every job sets up its first file before any starts measuring, so
	// that one job's fallocate does not disturb another's timings.
	var err error
	for _, j := range jobs {
		if err = j.openSegment(); err != nil {
			break
		}
	}
	if err != nil {
		for _, j := range jobs {
			j.closeSegment()
			j.release()
		}
		return nil, err
	}

	var stop atomic.Bool
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-runCtx.Done()
		stop.Store(true)
	}()
	var deadline time.Time
	start := time.Now()
	if o.Runtime > 0 {
		deadline = start.Add(o.Runtime)
	}
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j.run(&stop, deadline)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cancel()

	out := &Outcome{Write: hist.New(), Sync: hist.New(), Elapsed: elapsed}
	var errs []error
	for _, j := range jobs {
		j.closeSegment()
		j.release()
		if j.err != nil {
			errs = append(errs, j.err)
		}
		out.Jobs = append(out.Jobs, JobOutcome{File: j.firstFile, Ops: j.ops, Bytes: j.bytes, Write: j.write, Sync: j.sync})
		out.Ops += j.ops
		out.Bytes += j.bytes
		out.Write.Merge(j.write)
		out.Sync.Merge(j.sync)
		if j.noPrealloc {
			out.Notes = appendOnce(out.Notes, "this file system does not support fallocate: the files were not pre-allocated, so every write also extended the file")
		}
	}
	if err := errors.Join(errs...); err != nil {
		return out, err
	}
	if ctx.Err() != nil {
		out.Interrupted = true
		return out, ctx.Err()
	}
	return out, nil
}

// probeFiles says "1 probe file", "4 probe files".
func probeFiles(n int) string {
	if n == 1 {
		return "1 probe file"
	}
	return fmt.Sprintf("%d probe files", n)
}

func appendOnce(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// CheckDir fails early, with a clear *Error, when o.Dir is missing, not a
// directory, a kernel pseudo file system, or lacks the space for the
// files. Run calls it; so does any other engine that writes o's files.
func CheckDir(o Options) error { return o.named(checkDir(o)) }

func checkDir(o Options) error {
	st, err := os.Stat(o.Dir)
	if err != nil {
		return &Error{Op: "probe directory", Path: o.Dir, Err: err}
	}
	if !st.IsDir() {
		return &Error{Op: "probe directory", Path: o.Dir, Err: syscall.ENOTDIR}
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(o.Dir, &fs); err != nil {
		return &Error{Op: "probe directory", Path: o.Dir, Err: err}
	}
	if name, pseudo := pseudoFS[int64(fs.Type)]; pseudo {
		return &Error{Op: "probe directory", Path: o.Dir, Err: fmt.Errorf("%s is a kernel pseudo file system, not storage (choose a directory on the disk etcd uses)", name)}
	}
	need := o.Size * int64(o.Jobs)
	free := int64(fs.Bavail) * int64(fs.Bsize)
	if free < need {
		return &Error{Op: "probe directory", Path: o.Dir, Err: fmt.Errorf("needs %s for %s but only %s are free: %w", units.Size(need), probeFiles(o.Jobs), units.Bytes(float64(free)), syscall.ENOSPC)}
	}
	return nil
}

// pseudoFS are the statfs magic numbers of file systems that hold no
// storage at all.
var pseudoFS = map[int64]string{
	unix.PROC_SUPER_MAGIC:    "proc",
	unix.SYSFS_MAGIC:         "sysfs",
	unix.DEVPTS_SUPER_MAGIC:  "devpts",
	unix.CGROUP_SUPER_MAGIC:  "cgroup",
	unix.CGROUP2_SUPER_MAGIC: "cgroup2",
	unix.DEBUGFS_MAGIC:       "debugfs",
	unix.TRACEFS_MAGIC:       "tracefs",
	unix.SECURITYFS_MAGIC:    "securityfs",
	unix.BPF_FS_MAGIC:        "bpf",
}

// job is one writer: it owns its files and histograms.
type job struct {
	opts   Options
	prog   *Progress
	prefix string

	fd         int
	file       string
	firstFile  string
	segment    int
	noPrealloc bool
	buf        []byte
	rng        *mrand.Rand

	// raw makes the timed calls with RawSyscall: the goroutine keeps its P
	// while it waits for the disk, so it needs a P of its own.
	raw bool

	ops, bytes  int64
	write, sync *hist.Histogram
	err         error
}

// openSegment creates and pre-allocates the job's next file. O_EXCL makes
// sure an existing file is never opened, let alone overwritten.
func (j *job) openSegment() error {
	o := j.opts
	if j.buf == nil {
		if err := j.init(); err != nil {
			return err
		}
	}
	j.file = fmt.Sprintf("%s.%d", j.prefix, j.segment)
	j.segment++
	flags := unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL | unix.O_CLOEXEC
	if o.Direct {
		flags |= unix.O_DIRECT
	}
	if o.Sync == SyncODsync {
		flags |= unix.O_DSYNC
	}
	fd, err := unix.Open(j.file, flags, 0o600)
	if err != nil {
		if o.Direct && errors.Is(err, unix.EINVAL) {
			return &Error{Op: "open probe file with O_DIRECT", Path: j.file, Err: fmt.Errorf("this file system does not support direct I/O (drop --direct)")}
		}
		return &Error{Op: "create probe file in", Path: o.Dir, Err: err}
	}
	j.fd = fd
	if j.firstFile == "" {
		j.firstFile = j.file
	}
	if o.Prealloc {
		// Mode 0 allocates the blocks and sets the size, as fio's default
		// fallocate=native does and as etcd does for WAL segments.
		if err := unix.Fallocate(fd, 0, 0, o.Size); err != nil {
			if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
				j.noPrealloc = true
			} else {
				j.closeSegment()
				return &Error{Op: "pre-allocate probe file", Path: j.file, Err: err}
			}
		}
	}
	if o.RW == Random && (!o.Prealloc || j.noPrealloc) {
		if err := unix.Ftruncate(fd, o.Size); err != nil {
			j.closeSegment()
			return &Error{Op: "size probe file", Path: j.file, Err: err}
		}
	}
	return nil
}

func (j *job) init() error {
	o := j.opts
	j.write, j.sync = hist.New(), hist.New()
	// An anonymous mapping is page aligned, as O_DIRECT needs.
	n := (o.BlockSize + os.Getpagesize() - 1) / os.Getpagesize() * os.Getpagesize()
	buf, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return fmt.Errorf("allocate write buffer: %w", err)
	}
	// Random, incompressible data, as fio writes by default.
	_, _ = rand.Read(buf)
	j.buf = buf[:o.BlockSize]
	var state [16]byte
	_, _ = rand.Read(state[:])
	j.rng = mrand.New(mrand.NewPCG(uint64FromBytes(state[:8]), uint64FromBytes(state[8:])))
	return nil
}

func uint64FromBytes(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}

// release frees the write buffer.
func (j *job) release() {
	if j.buf != nil {
		_ = unix.Munmap(j.buf[:cap(j.buf)])
		j.buf = nil
	}
}

// closeSegment closes and removes the current file.
func (j *job) closeSegment() {
	if j.file == "" {
		return
	}
	unix.Close(j.fd)
	os.Remove(j.file)
	j.file = ""
}

// run writes until the file is full, the deadline passes or stop is set.
// It does not lock its OS thread: with raw syscalls the goroutine stays on
// its thread anyway, and a locked thread turns every preemption by the
// runtime into a thread handoff, which showed in the p99.
func (j *job) run(stop *atomic.Bool, deadline time.Time) {
	o := j.opts
	bs := int64(o.BlockSize)
	blocks := o.Size / bs
	timed := !deadline.IsZero()
	pwrite, syncf := schedPwrite, schedSync
	if j.raw {
		pwrite, syncf = rawPwrite, rawSync
	}
	var trap uintptr
	switch o.Sync {
	case SyncFdatasync:
		trap = unix.SYS_FDATASYNC
	case SyncFsync:
		trap = unix.SYS_FSYNC
	}
	// With a Rate, the job's n-th write starts no sooner than n intervals
	// after its first (an open-loop pace: a slow sync is not made up for
	// by a burst, since the pace is a ceiling).
	var interval time.Duration
	if o.Rate > 0 {
		interval = time.Duration(float64(time.Second) * float64(max(o.Jobs, 1)) / o.Rate)
	}
	began := time.Now()
	var off int64
	for !stop.Load() {
		if interval > 0 && !j.wait(stop, began.Add(time.Duration(j.ops)*interval), deadline) {
			return
		}
		if off+bs > o.Size {
			if !o.TimeBased {
				return
			}
			j.closeSegment()
			if err := j.openSegment(); err != nil {
				j.err = err
				return
			}
			off = 0
		}
		pos := off
		if o.RW == Random {
			pos = j.rng.Int64N(blocks) * bs
		}
		// Nothing but the call itself sits between a pair of clock reads;
		// the bookkeeping comes after the sync.
		t0 := time.Now()
		n, werr := pwrite(j.fd, j.buf, pos)
		t1 := time.Now()
		var serr error
		t2 := t1
		if trap != 0 && werr == nil {
			serr = syncf(j.fd, trap)
			t2 = time.Now()
		}
		if werr == nil && n != len(j.buf) {
			werr = fmt.Errorf("short write of %d bytes", n)
		}
		if werr != nil {
			j.err = &Error{Op: "write probe file", Path: j.file, Err: werr}
			return
		}
		if serr != nil {
			j.err = &Error{Op: "sync probe file", Path: j.file, Err: serr}
			return
		}
		j.write.Record(t1.Sub(t0))
		if trap != 0 {
			j.sync.Record(t2.Sub(t1))
		}
		j.ops++
		j.bytes += bs
		j.prog.bytes.Add(bs)
		off += bs
		if timed && t2.After(deadline) {
			return
		}
	}
}

// wait sleeps until next, the paced start of the job's next write; it
// returns false when the run is to end first (stop, or the deadline comes
// before next).
func (j *job) wait(stop *atomic.Bool, next, deadline time.Time) bool {
	if !deadline.IsZero() && next.After(deadline) {
		return false
	}
	for d := time.Until(next); d > 0; d = time.Until(next) {
		if stop.Load() {
			return false
		}
		time.Sleep(min(d, 50*time.Millisecond))
	}
	return !stop.Load()
}

// IOPS returns operations per second over the elapsed time.
func (o *Outcome) IOPS() float64 {
	if o.Elapsed <= 0 {
		return 0
	}
	return float64(o.Ops) / o.Elapsed.Seconds()
}

// Bandwidth returns bytes per second over the elapsed time.
func (o *Outcome) Bandwidth() float64 {
	if o.Elapsed <= 0 {
		return 0
	}
	return math.Round(float64(o.Bytes) / o.Elapsed.Seconds())
}
