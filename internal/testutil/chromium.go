package testutil

import (
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Screenshot opens the HTML file page in a headless Chromium with no
// network and returns its screenshot at width x height. It skips the
// test, saying why, where no Chromium is installed.
func Screenshot(t testing.TB, page string, width, height int) image.Image {
	t.Helper()
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("chromium is not installed (Debian: apt-get install chromium); this test opens the HTML report in it")
	}
	dir := t.TempDir()
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--hide-scrollbars",
		"--screenshot="+shot, "--window-size="+strconv.Itoa(width)+","+strconv.Itoa(height), "file://"+page)
	// Chromium starts helper processes: end its whole process group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if run := Wait(t, cmd, ctx); run.Code != 0 {
		t.Fatalf("chromium: exit %d\n%s", run.Code, run.Stderr)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("chromium wrote no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}
