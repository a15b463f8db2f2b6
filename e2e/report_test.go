package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

var reportdata = filepath.Join("..", "internal", "report", "testdata")

// The report and compare commands as users run them, on a Result that a
// real `etcdperf disk` run writes in the same test.
func TestReportAndCompare(t *testing.T) {
	dir := t.TempDir()
	probe := filepath.Join(dir, "probe")
	if err := os.Mkdir(probe, 0o755); err != nil {
		t.Fatal(err)
	}
	disk, diskHTML := filepath.Join(dir, "disk.json"), filepath.Join(dir, "disk.html")
	// Any verdict will do (a busy shared disk may fail): the outputs matter.
	r := testutil.RunBinary(t, time.Minute, "disk", "--dir", probe, "--size", "256k", "-o", disk, "--html", diskHTML)
	if r.Code != 0 && r.Code != 1 {
		t.Fatalf("disk: exit %d\n%s", r.Code, r.Stderr)
	}
	page, err := os.ReadFile(diskHTML)
	if err != nil || !strings.Contains(string(page), "<svg") || !strings.Contains(string(page), "fdatasync latency by percentile") {
		t.Fatalf("--html did not write the report with its charts: %v", err)
	}

	tmpfs := filepath.Join(reportdata, "disk-tmpfs.json")
	out := filepath.Join(dir, "r.html")
	pngs := filepath.Join(dir, "png")
	r = testutil.RunBinary(t, time.Minute, "report", disk, tmpfs, "-o", out, "--png", pngs)
	if r.Code != 0 || !strings.Contains(r.Stderr, "wrote "+out) || !strings.Contains(r.Stdout, "disk-tmpfs") {
		t.Fatalf("report: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	if entries, _ := os.ReadDir(pngs); len(entries) < 4 {
		t.Errorf("--png wrote %d files", len(entries))
	}

	r = testutil.RunBinary(t, time.Minute, "compare", disk, tmpfs)
	if r.Code != 0 || !strings.Contains(r.Stdout, "disk sync p99") || !strings.Contains(r.Stdout, "better") {
		t.Errorf("compare: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}

	// Results printed by pods among their log lines (the logs of a Job's
	// pods, one after the other) are runs of their own.
	pods := filepath.Join(dir, "pods.log")
	var log strings.Builder
	for _, f := range []string{"bench-nvme.json", "bench-gp2.json"} {
		b, err := os.ReadFile(filepath.Join(reportdata, f))
		if err != nil {
			t.Fatal(err)
		}
		log.WriteString("I1122 09:00:00 pod starting\n" + string(b) + "I1122 09:00:21 done\n")
	}
	os.WriteFile(pods, []byte(log.String()), 0o644)
	r = testutil.RunBinary(t, time.Minute, "report", pods, "-o", "json")
	var both result.Result
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &both) != nil || both.Kind != result.KindCompare || len(both.Runs) != 2 {
		t.Errorf("report of a log with two Results: exit %d\n%.300s\n%s", r.Code, r.Stdout, r.Stderr)
	}

	// Without -o the page goes to report.html in the current directory.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testutil.Binary(t), "report", disk)
	cmd.Dir = dir
	if r := testutil.Wait(t, cmd, ctx); r.Code != 0 {
		t.Errorf("report without -o: exit %d\n%s", r.Code, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
		t.Errorf("report without -o: %v", err)
	}

	for _, bad := range []struct {
		args []string
		says string
	}{
		{[]string{"compare", disk}, "at least two runs"},
		{[]string{"report", filepath.Join(dir, "missing.json")}, "missing.json"},
		{[]string{"report"}, "needs a RESULT.json argument"},
		{[]string{"report", disk, "-o", filepath.Join(dir, "r.pdf")}, "not a format"},
	} {
		r := testutil.RunBinary(t, time.Minute, bad.args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, bad.says) || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q (want 2 and one line saying %q)", bad.args, r.Code, r.Stderr, bad.says)
		}
	}
}

// The report opens in a real browser, with no network, and shows its
// charts: a headless Chromium takes a screenshot, which must hold the runs'
// colours over many pixels (the chart lines), not a blank page.
func TestReportInChromium(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	r := testutil.RunBinary(t, time.Minute, "report", filepath.Join(reportdata, "disk-ext4.json"), filepath.Join(reportdata, "disk-tmpfs.json"), "-o", page)
	if r.Code != 0 {
		t.Fatalf("report: exit %d\n%s", r.Code, r.Stderr)
	}
	img := testutil.Screenshot(t, page, 1280, 4000)
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 4000 {
		t.Errorf("screenshot is %v", b)
	}
	drawn := float64(testutil.NonWhite(img)) / float64(1280*4000)
	colours := testutil.Colours(img)
	// The first two runs' colours (blue, vermillion) in the chart lines.
	blue, red := 0, 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c, g, bl, _ := img.At(x, y).RGBA()
			switch {
			case near(c, 0x00) && near(g, 0x72) && near(bl, 0xB2):
				blue++
			case near(c, 0xD5) && near(g, 0x5E) && near(bl, 0x00):
				red++
			}
		}
	}
	t.Logf("screenshot: %.1f%% drawn, %d colours, %d blue and %d vermillion pixels", drawn*100, colours, blue, red)
	if drawn < 0.02 || colours < 50 {
		t.Errorf("the page looks blank: %.1f%% of pixels drawn, %d colours", drawn*100, colours)
	}
	if blue < 500 || red < 500 {
		t.Errorf("the charts were not drawn: %d blue and %d vermillion pixels", blue, red)
	}
}

func near(v uint32, want uint8) bool {
	d := int(v>>8) - int(want)
	return d >= -24 && d <= 24
}
