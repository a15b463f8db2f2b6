package hoststats

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/sysinfo"
)

func TestParseCaptured(t *testing.T) {
	f, err := os.Open("testdata/diskstats-6.18")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := ParseDiskStats(f, "vda")
	if err != nil {
		t.Fatal(err)
	}
	if c.WriteIOs == 0 || c.WriteSectors == 0 || !c.HasFlush {
		t.Errorf("vda counters %+v", c)
	}
	f2, err := os.Open("testdata/stat-6.18")
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	cpu, err := ParseCPU(f2)
	if err != nil || cpu.Total() == 0 || cpu.Idle == 0 {
		t.Errorf("cpu %+v %v", cpu, err)
	}
}

func TestParseOldKernelAndErrors(t *testing.T) {
	// Before 4.18 there were 11 fields and no discard or flush counters.
	old := "   8       0 sda 100 0 800 50 200 10 1600 400 0 300 450\n"
	c, err := ParseDiskStats(strings.NewReader(old), "sda")
	if err != nil || c.WriteIOs != 200 || c.WriteMs != 400 || c.IOMs != 300 || c.HasFlush {
		t.Errorf("old format: %+v %v", c, err)
	}
	if _, err := ParseDiskStats(strings.NewReader(old), "nvme0n1"); err == nil || !strings.Contains(err.Error(), "nvme0n1") {
		t.Errorf("missing device: %v", err)
	}
	if _, err := ParseDiskStats(strings.NewReader("8 0 sda x 0 0 0 0 0 0 0 0 0 0\n"), "sda"); err == nil {
		t.Error("garbage accepted")
	}
	if _, err := ParseCPU(strings.NewReader("intr 1 2 3\n")); err == nil {
		t.Error("no cpu line accepted")
	}
}

func TestBetween(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := Snapshot{At: t0, HasDev: true,
		Disk: DiskCounters{WriteIOs: 1000, WriteSectors: 8000, WriteMs: 500, IOMs: 1000, WeightedMs: 2000, FlushIOs: 10, FlushMs: 20, HasFlush: true},
		CPU:  CPUCounters{User: 100, System: 100, Idle: 700, IOWait: 100}}
	b := Snapshot{At: t0.Add(2 * time.Second), HasDev: true,
		Disk: DiskCounters{WriteIOs: 1400, WriteSectors: 12000, WriteMs: 900, IOMs: 2500, WeightedMs: 3000, FlushIOs: 210, FlushMs: 420, HasFlush: true},
		CPU:  CPUCounters{User: 150, System: 150, Idle: 800, IOWait: 200}}
	h := Between(a, b)
	near := func(name string, got, want float64) {
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("util", h.Util, 0.75)              // 1500ms busy in 2s
	near("write iops", h.WriteIOPS, 200)    // 400 writes in 2s
	near("write await", h.WriteAwait, 1e-3) // 400ms over 400 writes
	near("avg write size", h.AvgWriteSize, 4000*512/400.0)
	near("queue depth", h.QueueDepth, 0.5)
	near("flush iops", h.FlushIOPS, 100)
	near("flush await", h.FlushAwait, 2e-3)
	near("iowait", h.IOWait, 100/300.0)
	near("cpu busy", h.CPUBusy, 100/300.0)
	// A counter that went backwards (device re-created) gives zero, not garbage.
	b.Disk.WriteIOs = 10
	if h := Between(a, b); h.WriteIOPS != 0 {
		t.Errorf("wrapped counter gave %v IOPS", h.WriteIOPS)
	}
}

// TestSamplerSeesWrites writes synced data on the device under a temporary
// directory and expects the sampler to count the writes.
func TestSamplerSeesWrites(t *testing.T) {
	dir := t.TempDir()
	m, err := sysinfo.FindMount(dir)
	if err != nil || m.Device == "" {
		t.Skipf("skipped: no block device under %s (%v)", dir, err)
	}
	if _, err := ReadDisk(m.Device); err != nil {
		t.Skipf("skipped: %v", err)
	}
	s, err := Start(m.Device, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "w"))
	if err != nil {
		t.Fatal(err)
	}
	// Synced writes for 300ms: the device's busy time counts in whole
	// clock ticks (io_ticks), which a burst of writes of tens of
	// microseconds each within one tick can leave at 0.
	buf := make([]byte, 4096)
	for t0 := time.Now(); time.Since(t0) < 300*time.Millisecond; {
		f.Write(buf)
		f.Sync()
	}
	f.Close()
	time.Sleep(120 * time.Millisecond)
	h, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if h.Summary.WriteIOPS <= 0 || h.Summary.Util <= 0 || len(h.Series) == 0 || h.Device != m.Device {
		t.Errorf("sampler saw no writes on %s: %+v", m.Device, h.Summary)
	}
}
