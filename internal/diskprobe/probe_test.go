package diskprobe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/testutil"
)

func opts(dir string) Options {
	return Options{Dir: dir, BlockSize: 2300, Size: 256 << 10, Prealloc: true, Sync: SyncFdatasync, RW: Sequential, Jobs: 1}
}

func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Errorf("probe left files behind in %s: %v", dir, names)
	}
}

func TestRunWritesSizeAndCleansUp(t *testing.T) {
	dir := t.TempDir()
	o := opts(dir)
	out, err := Run(context.Background(), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := o.Size / int64(o.BlockSize)
	if out.Ops != want || out.Bytes != want*int64(o.BlockSize) {
		t.Errorf("ops %d bytes %d, want %d ops", out.Ops, out.Bytes, want)
	}
	if out.Sync.Count() != want || out.Write.Count() != want {
		t.Errorf("recorded %d syncs and %d writes, want %d each", out.Sync.Count(), out.Write.Count(), want)
	}
	if out.Sync.Quantile(99) <= 0 || out.IOPS() <= 0 || out.Elapsed <= 0 {
		t.Errorf("no timings: p99 %v iops %v elapsed %v", out.Sync.Quantile(99), out.IOPS(), out.Elapsed)
	}
	assertEmpty(t, dir)
}

func TestModesAndJobs(t *testing.T) {
	cases := []struct {
		name   string
		change func(*Options)
	}{
		{"fsync", func(o *Options) { o.Sync = SyncFsync }},
		{"odsync", func(o *Options) { o.Sync = SyncODsync }},
		{"none", func(o *Options) { o.Sync = SyncNone }},
		{"randwrite", func(o *Options) { o.RW = Random }},
		{"no-prealloc", func(o *Options) { o.Prealloc = false }},
		{"randwrite-no-prealloc", func(o *Options) { o.RW, o.Prealloc = Random, false }},
		{"direct", func(o *Options) { o.Direct, o.BlockSize = true, 4096 }},
		{"3 jobs", func(o *Options) { o.Jobs = 3 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			o := opts(dir)
			c.change(&o)
			out, err := Run(context.Background(), o, nil)
			if err != nil {
				t.Fatal(err)
			}
			per := o.Size / int64(o.BlockSize)
			if out.Ops != per*int64(o.Jobs) || len(out.Jobs) != o.Jobs {
				t.Errorf("ops %d over %d jobs, want %d", out.Ops, len(out.Jobs), per*int64(o.Jobs))
			}
			synced := o.Sync == SyncFdatasync || o.Sync == SyncFsync
			if synced != (out.Sync.Count() == out.Ops) {
				t.Errorf("sync %s: %d sync samples for %d ops", o.Sync, out.Sync.Count(), out.Ops)
			}
			assertEmpty(t, dir)
		})
	}
}

func TestTimeBasedCutsSegments(t *testing.T) {
	dir := t.TempDir()
	o := opts(dir)
	o.Size = 64 << 10
	o.Runtime = 300 * time.Millisecond
	o.TimeBased = true
	o.Sync = SyncNone // fast, so that several segments fill up
	out, err := Run(context.Background(), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Bytes <= o.Size {
		t.Errorf("time-based run wrote %d bytes, no more than one segment of %d", out.Bytes, o.Size)
	}
	if out.Elapsed < o.Runtime || out.Elapsed > o.Runtime+2*time.Second {
		t.Errorf("time-based run lasted %v for a runtime of %v", out.Elapsed, o.Runtime)
	}
	assertEmpty(t, dir)
}

func TestRuntimeBoundsASizeRun(t *testing.T) {
	dir := t.TempDir()
	o := opts(dir)
	o.Size = 1 << 30
	o.Runtime = 200 * time.Millisecond
	o.Prealloc = false // do not allocate 1 GiB for nothing
	start := time.Now()
	out, err := Run(context.Background(), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("--runtime 200ms run took %v", el)
	}
	if out.Bytes >= o.Size || out.Ops == 0 {
		t.Errorf("wrote %d bytes", out.Bytes)
	}
	assertEmpty(t, dir)
}

func TestCancelStopsAndCleansUp(t *testing.T) {
	dir := t.TempDir()
	o := opts(dir)
	o.Size = 64 << 10
	o.Runtime = time.Minute
	o.TimeBased = true
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	out, err := Run(ctx, o, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's", err)
	}
	if out == nil || !out.Interrupted || out.Ops == 0 {
		t.Errorf("cancelled run: %+v", out)
	}
	assertEmpty(t, dir)
}

func TestNeverTouchesExistingFiles(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "member")
	if err := os.WriteFile(mine, []byte("etcd data"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), opts(dir), nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(mine)
	if err != nil || string(b) != "etcd data" {
		t.Errorf("existing file changed: %q %v", b, err)
	}
}

func TestErrors(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	os.WriteFile(file, nil, 0o600)
	cases := []struct {
		name  string
		dir   string
		errno syscall.Errno
		text  string
	}{
		{"missing", filepath.Join(tmp, "nope"), syscall.ENOENT, "no such file or directory"},
		{"not a dir", file, syscall.ENOTDIR, "not a directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Run(context.Background(), opts(c.dir), nil)
			var pe *Error
			if !errors.As(err, &pe) || !errors.Is(err, c.errno) {
				t.Fatalf("err = %v, want a probe error with %v", err, c.errno)
			}
			if !strings.Contains(err.Error(), c.dir) || !strings.Contains(err.Error(), c.text) {
				t.Errorf("message %q does not name %s and %q", err, c.dir, c.text)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	bad := []func(*Options){
		func(o *Options) { o.BlockSize = 0 },
		func(o *Options) { o.Size = 100 },
		func(o *Options) { o.Sync = "sometimes" },
		func(o *Options) { o.RW = "read" },
		func(o *Options) { o.Direct = true }, // 2300 is not aligned
		func(o *Options) { o.Jobs = 0 },
		func(o *Options) { o.TimeBased = true },
		func(o *Options) { o.Runtime = -time.Second },
		func(o *Options) { o.Dir = "" },
	}
	for i, b := range bad {
		o := opts("/tmp")
		b(&o)
		if err := o.Validate(); err == nil {
			t.Errorf("case %d: %+v accepted", i, o)
		}
	}
}

func TestReadOnlyFileSystem(t *testing.T) {
	dir := testutil.MountTmpfs(t, "4m", true)
	_, err := Run(context.Background(), opts(dir), nil)
	if !errors.Is(err, syscall.EROFS) || !strings.Contains(err.Error(), "read-only file system") || !strings.Contains(err.Error(), dir) {
		t.Errorf("err = %v, want EROFS naming %s", err, dir)
	}
}

func TestNoSpaceBeforeStart(t *testing.T) {
	dir := testutil.MountTmpfs(t, "128k", false)
	_, err := Run(context.Background(), opts(dir), nil)
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "no space left") {
		t.Errorf("err = %v, want ENOSPC", err)
	}
	assertEmpty(t, dir)
}

// TestNoSpaceWhileAllocating fills the file system between the free-space
// check and the allocation, as another writer could.
func TestNoSpaceWhileAllocating(t *testing.T) {
	dir := testutil.MountTmpfs(t, "512k", false)
	j := &job{opts: opts(dir), prog: &Progress{}, prefix: filepath.Join(dir, ".etcdperf-probe-test")}
	j.opts.Size = 1 << 20
	err := j.openSegment()
	j.release()
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "no space left") {
		t.Errorf("err = %v, want ENOSPC", err)
	}
	assertEmpty(t, dir)
}

func TestPseudoFileSystemIsNotStorage(t *testing.T) {
	_, err := Run(context.Background(), opts("/proc"), nil)
	if err == nil || !strings.Contains(err.Error(), "pseudo file system") {
		t.Errorf("/proc: %v", err)
	}
}

// The hints name the flags of the command that ran the probe: doctor's are
// --data-dir and --disk-size.
func TestErrorNamesTheCallersFlags(t *testing.T) {
	e := &Error{Op: "create probe file in", Path: "/ro", Err: syscall.EROFS}
	if got := e.Error(); !strings.HasSuffix(got, "(choose a writable --dir)") {
		t.Errorf("default: %q", got)
	}
	o := Options{DirFlag: "--data-dir", SizeFlag: "--disk-size"}
	err := o.named(&Error{Op: "probe directory", Path: "/small", Err: fmt.Errorf("needs 22 MiB: %w", syscall.ENOSPC)})
	if got := err.Error(); !strings.Contains(got, "lower --disk-size") {
		t.Errorf("doctor's flags: %q", got)
	}
	e.DirFlag = "--data-dir"
	if got := e.Error(); !strings.HasSuffix(got, "(choose a writable --data-dir)") {
		t.Errorf("doctor's flags: %q", got)
	}
	// Through Run, on a directory too small for the file.
	dir := t.TempDir()
	ro := opts(dir)
	ro.Size = 1 << 50
	ro.DirFlag, ro.SizeFlag = "--data-dir", "--disk-size"
	if _, err := Run(context.Background(), ro, nil); err == nil || !strings.Contains(err.Error(), "lower --disk-size") || !strings.Contains(err.Error(), "needs 1024 TiB for 1 probe file") {
		t.Errorf("Run: %v", err)
	}
}

func TestExplainKeepsDetail(t *testing.T) {
	e := fmt.Errorf("needs 100 bytes but only 10 are free: %w", syscall.ENOSPC)
	got := Explain(e)
	if !strings.Contains(got, "only 10 are free") || !strings.Contains(got, "no space left on device") || !strings.Contains(got, "lower --size") {
		t.Errorf("Explain lost detail or hint: %q", got)
	}
	_, perr := os.Stat("/nonexistent-etcdperf")
	if got := Explain(perr); strings.Contains(got, "stat ") || !strings.HasPrefix(got, "no such file or directory") {
		t.Errorf("Explain of a path error: %q", got)
	}
}

// A paced probe never writes faster than its rate, over one job or
// several: beside a live etcd member it must leave the device to etcd.
// The same run unpaced (on the same directory) writes faster, so the pace
// is what held it back.
func TestRatePacesWrites(t *testing.T) {
	dir := testutil.MountTmpfs(t, "128m", false)
	for _, jobs := range []int{1, 2} {
		o := opts(dir)
		o.Size = 64 << 20
		o.Prealloc = false
		o.Jobs = jobs
		o.Runtime = 1500 * time.Millisecond
		o.Rate = 40
		out, err := Run(context.Background(), o, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Each job's n-th write starts n intervals after its first: at
		// most rate*elapsed writes, plus each job's first.
		if limit := o.Rate*out.Elapsed.Seconds() + float64(jobs); float64(out.Ops) > limit || out.Ops == 0 {
			t.Errorf("%d jobs at %g/s for %v: %d writes, want at most %.0f", jobs, o.Rate, out.Elapsed, out.Ops, limit)
		}
		o.Rate = 0
		o.Runtime = 300 * time.Millisecond
		free, err := Run(context.Background(), o, nil)
		if err != nil {
			t.Fatal(err)
		}
		if free.IOPS() < 3*40 {
			t.Errorf("unpaced on tmpfs: %.0f writes/s; want well above the 40/s pace to tell the pace from the device", free.IOPS())
		}
		assertEmpty(t, dir)
	}
	o := opts(dir)
	o.Rate = -1
	if err := o.Validate(); err == nil {
		t.Error("a negative rate was accepted")
	}
}
