package fio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/diskprobe"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// The files in testdata are fio 3.33's real output for the command lines
// Args builds (see the names), captured on ext4 and tmpfs.
var captured = []struct {
	file string
	mode diskprobe.SyncMode
}{
	{"ext4-fdatasync.json", diskprobe.SyncFdatasync},
	{"tmpfs-fdatasync.json", diskprobe.SyncFdatasync},
	{"ext4-odsync-direct-2jobs.json", diskprobe.SyncODsync},
}

func TestParseCapturedOutput(t *testing.T) {
	for _, c := range captured {
		t.Run(c.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			d := rep.Disk(c.mode)
			// Cross-check against the raw document, read generically.
			var generic map[string]any
			if err := json.Unmarshal(raw, &generic); err != nil {
				t.Fatal(err)
			}
			job := generic["jobs"].([]any)[0].(map[string]any)
			write := job["write"].(map[string]any)
			if d.Ops != int64(write["total_ios"].(float64)) || d.Ops == 0 {
				t.Errorf("ops %d, fio says %v", d.Ops, write["total_ios"])
			}
			if c.mode == diskprobe.SyncFdatasync {
				pct := job["sync"].(map[string]any)["lat_ns"].(map[string]any)["percentile"].(map[string]any)
				if want := pct["99.000000"].(float64) / 1e9; d.SyncLatency.P99 != want || want == 0 {
					t.Errorf("sync p99 %v, fio says %v", d.SyncLatency.P99, want)
				}
				if d.SyncLatency.Count != d.Ops {
					t.Errorf("sync count %d, ops %d", d.SyncLatency.Count, d.Ops)
				}
			} else if d.SyncLatency != nil {
				t.Errorf("odsync has no separate sync call, got sync latency %+v", d.SyncLatency)
			}
			if d.Engine != "fio" || !strings.HasPrefix(d.EngineVersion, "fio-3") {
				t.Errorf("engine %q %q", d.Engine, d.EngineVersion)
			}
			got, _ := json.MarshalIndent(d, "", "  ")
			testutil.Golden(t, strings.TrimSuffix(c.file, ".json")+".golden", append(got, '\n'))
		})
	}
}

func TestParseSkipsNotesAndRejectsGarbage(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "ext4-fdatasync.json"))
	if err != nil {
		t.Fatal(err)
	}
	noted := append([]byte("note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1\n"), raw...)
	if _, err := Parse(noted); err != nil {
		t.Errorf("a note before the JSON broke parsing: %v", err)
	}
	for _, bad := range []string{"", "fio: no such option", "{", `{"jobs": []}`, `{"jobs": [1]}`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func TestArgs(t *testing.T) {
	o := diskprobe.Options{Dir: "/d", BlockSize: 2300, Size: 22 << 20, Prealloc: true, Sync: diskprobe.SyncFdatasync, RW: diskprobe.Sequential, Jobs: 1, Runtime: 60 * time.Second}
	got := strings.Join(Args(o, ".p"), " ")
	for _, want := range []string{"--rw=write", "--ioengine=sync", "--bs=2300", "--size=23068672", "--fdatasync=1", "--fallocate=native", "--directory=/d", "--runtime=60s", "--unlink=1", "--output-format=json"} {
		if !strings.Contains(got, want) {
			t.Errorf("args %q lack %q", got, want)
		}
	}
	o.Sync, o.Direct, o.Prealloc, o.TimeBased = diskprobe.SyncODsync, true, false, true
	got = strings.Join(Args(o, ".p"), " ")
	for _, want := range []string{"--sync=dsync", "--direct=1", "--fallocate=none", "--time_based"} {
		if !strings.Contains(got, want) {
			t.Errorf("args %q lack %q", got, want)
		}
	}
	if strings.Contains(got, "fdatasync") {
		t.Errorf("odsync args still ask for fdatasync: %q", got)
	}
}

// TestRunRealFio runs the installed fio (CI installs it) on a temporary
// directory and checks the report and that no file is left behind.
func TestRunRealFio(t *testing.T) {
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("fio is not installed here (apt-get install fio); .ci/run installs it")
	}
	dir := t.TempDir()
	o := diskprobe.Options{Dir: dir, BlockSize: 4096, Size: 1 << 20, Prealloc: true, Sync: diskprobe.SyncFdatasync, RW: diskprobe.Sequential, Jobs: 2, Runtime: 20 * time.Second}
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	d := rep.Disk(o.Sync)
	// fio may skip the fdatasync after a job's last write when the file
	// ends on a block boundary: one sync fewer per job.
	if d.Ops != 2*256 || d.SyncLatency == nil || d.SyncLatency.Count < 2*255 || d.SyncLatency.P99 <= 0 {
		t.Errorf("fio report: ops %d sync %+v", d.Ops, d.SyncLatency)
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 0 {
		t.Errorf("fio left files behind: %v", left)
	}
}

func TestRunWithoutFio(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	o := diskprobe.Options{Dir: t.TempDir(), BlockSize: 4096, Size: 1 << 20, Sync: diskprobe.SyncFdatasync, RW: diskprobe.Sequential, Jobs: 1}
	_, err := Run(context.Background(), o)
	if err != ErrNotInstalled {
		t.Errorf("without fio: %v, want ErrNotInstalled", err)
	}
	if !bytes.Contains([]byte(ErrNotInstalled.Error()), []byte("apt-get install fio")) {
		t.Error("the error does not say how to install fio")
	}
}

func FuzzParse(f *testing.F) {
	for _, c := range captured {
		raw, err := os.ReadFile(filepath.Join("testdata", c.file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add([]byte(`{"jobs":[{"sync":{"lat_ns":{"percentile":{"99.000000":1}}}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rep, err := Parse(b)
		if err != nil {
			return
		}
		// Whatever parsed must convert without panicking.
		_ = rep.Disk(diskprobe.SyncFdatasync)
	})
}

// fio's directory gets the native probe's checks before fio starts: a
// file, a full file system and /proc fail with the probe's one-line
// errors, which name the path and say what to do.
func TestRunChecksTheDirectoryFirst(t *testing.T) {
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("fio is not installed here (apt-get install fio); .ci/run installs it")
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	full := testutil.MountTmpfs(t, "128k", false)
	for dir, want := range map[string]string{
		file:    "--dir must name a directory",
		full:    "free some space or lower --size",
		"/proc": "pseudo file system",
	} {
		o := diskprobe.Options{Dir: dir, BlockSize: 4096, Size: 1 << 20, Sync: diskprobe.SyncFdatasync, RW: diskprobe.Sequential, Jobs: 1}
		_, err := Run(context.Background(), o)
		var pe *diskprobe.Error
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a probe error naming it and saying %q", dir, err, want)
		}
	}
	if left, _ := os.ReadDir(full); len(left) != 0 {
		t.Errorf("fio left %v in the full file system", left)
	}
}
