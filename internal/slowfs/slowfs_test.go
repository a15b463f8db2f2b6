package slowfs

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func mount(t *testing.T, cfg Config) *Mount {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: mounting FUSE needs root")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("skipped: no /dev/fuse: %v", err)
	}
	m, err := Start(t.TempDir(), t.TempDir(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Unmount() })
	return m
}

func TestDelaysFsyncAndWrites(t *testing.T) {
	m := mount(t, Config{FsyncDelay: 20 * time.Millisecond, WriteDelay: 10 * time.Millisecond})
	path := filepath.Join(m.Mnt, "f")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := f.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	wrote := time.Since(start)
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		t.Fatal(err)
	}
	synced := time.Since(start) - wrote
	f.Close()
	if wrote < 10*time.Millisecond || synced < 20*time.Millisecond {
		t.Errorf("write took %v (want >= 10ms), fdatasync %v (want >= 20ms)", wrote, synced)
	}
	if m.Stats.Fsyncs.Load() != 1 || m.Stats.Writes.Load() != 1 {
		t.Errorf("stats: %d fsyncs, %d writes", m.Stats.Fsyncs.Load(), m.Stats.Writes.Load())
	}
	// The data is in the source directory.
	if b, err := os.ReadFile(filepath.Join(m.Src, "f")); err != nil || string(b) != "x" {
		t.Errorf("source file: %q %v", b, err)
	}
}

func TestUnmountWithOpenFileDetaches(t *testing.T) {
	m := mount(t, Config{})
	f, err := os.Create(filepath.Join(m.Mnt, "open"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lazy, err := m.Unmount()
	if err != nil {
		t.Fatal(err)
	}
	if !lazy {
		t.Error("unmount with an open file was not lazy")
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []Config{{FsyncDelay: -1}, {Jitter: 2 * time.Minute}, {WriteDelay: -time.Second}} {
		if c.Validate() == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	if _, err := Start("/nonexistent-etcdperf", t.TempDir(), Config{}); err == nil {
		t.Error("missing source accepted")
	}
}

// A file opened before the delay changes (a member's WAL, opened as it
// starts) follows the change both ways.
func TestSetFsyncDelay(t *testing.T) {
	m := mount(t, Config{})
	f, err := os.Create(filepath.Join(m.Mnt, "wal"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sync := func() time.Duration {
		start := time.Now()
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	const slow = 500 * time.Millisecond
	m.SetFsyncDelay(slow)
	if took := sync(); took < slow {
		t.Errorf("fdatasync after SetFsyncDelay(%v) took %v", slow, took)
	}
	m.SetFsyncDelay(0)
	if took := sync(); took >= slow {
		t.Errorf("fdatasync after SetFsyncDelay(0) took %v, as slow as before", took)
	}
}
