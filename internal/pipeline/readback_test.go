package pipeline

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/diskprobe"
	"github.com/etcdperf/etcdperf/internal/render"
	"github.com/etcdperf/etcdperf/internal/result"
)

// sameTextReadBack fails the test when the text view of a Result as a
// command built it differs from the text view of the same Result written to
// JSON and read back, as `etcdperf report run.json` reads it.
func sameTextReadBack(t *testing.T, res *result.Result) {
	t.Helper()
	var live, back, js bytes.Buffer
	if err := render.Text(&live, res); err != nil {
		t.Fatal(err)
	}
	if err := result.Encode(&js, res); err != nil {
		t.Fatal(err)
	}
	read, err := result.Decode(&js)
	if err != nil {
		t.Fatal(err)
	}
	if err := render.Text(&back, read); err != nil {
		t.Fatal(err)
	}
	a, b := strings.Split(live.String(), "\n"), strings.Split(back.String(), "\n")
	for i := range max(len(a), len(b)) {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			t.Errorf("the %s Result read back from JSON reads differently from line %d:\nas run:    %q\nread back: %q", res.Kind, i+1, at(a, i), at(b, i))
			return
		}
	}
}

// `etcdperf disk --jobs 2 -o run.json` says "2 jobs" in its header, and so
// does `etcdperf report run.json`.
func TestDiskJobsReadBack(t *testing.T) {
	res, err := Disk(context.Background(), DiskOptions{Engine: EngineNative, Probe: diskprobe.Options{
		Dir: t.TempDir(), BlockSize: 2300, Size: 64 << 10, Prealloc: true, Sync: diskprobe.SyncFdatasync, RW: diskprobe.Sequential, Jobs: 2,
	}})
	if err != nil {
		t.Fatal(err)
	}
	var live bytes.Buffer
	if err := render.Text(&live, res); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(live.Bytes(), []byte(", 2 jobs; engine native")) {
		t.Errorf("no jobs in the header:\n%s", live.String())
	}
	sameTextReadBack(t, res)
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(end)"
}
