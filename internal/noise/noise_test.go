package noise

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/hoststats"
	"github.com/etcdperf/etcdperf/internal/sysinfo"
)

func TestNoiseWritesToTheDeviceAndCleansUp(t *testing.T) {
	dir := t.TempDir()
	var before hoststats.Snapshot
	m, err := sysinfo.FindMount(dir)
	if err == nil && m.Device != "" {
		before, _ = hoststats.Take(m.Device)
	}
	n, err := Start(context.Background(), Options{Dir: dir, FileSize: 8 << 20, ChunkSize: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if err := n.Stop(); err != nil {
		t.Fatal(err)
	}
	if n.Bytes() < 8<<20 {
		t.Errorf("wrote %d bytes in 300ms, want at least one 8 MiB file", n.Bytes())
	}
	if before.HasDev {
		after, _ := hoststats.Take(m.Device)
		if h := hoststats.Between(before, after); h.WriteBytes <= 0 {
			t.Errorf("the device %s saw no writes: %+v", m.Device, h)
		}
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 0 {
		t.Errorf("noise files left: %v", left)
	}
}

func TestNoiseNeedsSpace(t *testing.T) {
	if _, err := Start(context.Background(), Options{Dir: t.TempDir(), FileSize: 1 << 60}); err == nil {
		t.Error("a writer that cannot fit was started")
	}
	if _, err := Start(context.Background(), Options{Dir: "/nonexistent-etcdperf"}); err == nil {
		t.Error("a missing directory was accepted")
	}
}
