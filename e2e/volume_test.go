package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// Bad capped volumes: one line, exit 2, before anything is written.
func TestVolumeUsageErrors(t *testing.T) {
	dir := t.TempDir()
	type usage struct {
		args []string
		want string
	}
	cases := []usage{
		{[]string{"bench", "put", "--data-dir", dir, "--fault", "1:volume-iops=0"}, "at least 1"},
		{[]string{"doctor", "--data-dir", dir, "--no-report", "--fault", "1:volume-iops=-5"}, "at least 1"},
		{[]string{"bench", "put", "--data-dir", dir, "--fault", "1:volume-write-bps=1k"}, "smallest"},
		{[]string{"server", "--data-dir", dir, "--volume-iops-limit", "-1"}, "cannot be negative"},
	}
	if lab.VolumeSupported() == nil {
		full := filepath.Join(dir, "full")
		if err := os.Mkdir(full, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(full, "f"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		cases = append(cases,
			usage{[]string{"doctor", "--data-dir", dir, "--no-report", "--fault", "1:volume-iops=100", "--fault", "1:iops-limit=100"}, "cannot go on the same member"},
			usage{[]string{"server", "--data-dir", full, "--volume-iops-limit", "100"}, "not empty"})
		if shm, err := os.MkdirTemp("/dev/shm", "etcdperf-e2e-"); err == nil {
			defer os.RemoveAll(shm)
			cases = append(cases,
				usage{[]string{"doctor", "--data-dir", shm, "--no-report", "--fault", "1:volume-iops=100"}, "no block device"},
				usage{[]string{"server", "--data-dir", shm + "/m", "--volume-iops-limit", "100"}, "no block device"})
		}
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			before := dirEntries(t, c.args)
			r := testutil.RunBinary(t, 30*time.Second, c.args...)
			line := strings.TrimSpace(r.Stderr)
			if r.Code != 2 || strings.Contains(line, "\n") || !strings.Contains(line, c.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line with %q", r.Code, r.Stderr, c.want)
			}
			if after := dirEntries(t, c.args); after != before {
				t.Errorf("the data dir held %q, now %q", before, after)
			}
		})
	}
	if os.Geteuid() != 0 {
		return
	}
	// Not root: refused as such.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testutil.Binary(t), "bench", "put", "--data-dir", dir, "--fault", "1:volume-iops=100")
	testutil.RunAsNobody(t, cmd)
	r := testutil.Wait(t, cmd, ctx)
	if line := strings.TrimSpace(r.Stderr); r.Code != 2 || strings.Contains(line, "\n") || !strings.Contains(line, "needs root") {
		t.Errorf("as nobody: exit %d, stderr %q; want exit 2 and one line with %q", r.Code, r.Stderr, "needs root")
	}
}

// dirEntries lists what the folder after --data-dir in args holds.
func dirEntries(t *testing.T, args []string) string {
	t.Helper()
	for i, a := range args {
		if a == "--data-dir" && i+1 < len(args) {
			ents, _ := os.ReadDir(args[i+1])
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			return strings.Join(names, ",")
		}
	}
	return ""
}
