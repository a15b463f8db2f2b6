package cli

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/etcdperf/etcdperf/internal/units"
)

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// startProgress draws a one-line progress report on w every 200ms while
// the run lasts, only when w is a terminal. The returned function erases it.
func startProgress(w io.Writer, line func(elapsed time.Duration) string) (stop func()) {
	if !isTerminal(w) {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(w, "\r\033[K")
				return
			case <-t.C:
				fmt.Fprintf(w, "\r\033[K%s", line(time.Since(start)))
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// bytesProgress formats progress through a known number of bytes.
func bytesProgress(done, total int64, elapsed, limit time.Duration) string {
	frac := float64(done) / float64(total)
	if limit > 0 {
		frac = max(frac, elapsed.Seconds()/limit.Seconds())
	}
	frac = min(frac, 1)
	const width = 30
	n := int(frac * width)
	bar := make([]byte, width)
	for i := range bar {
		if i < n {
			bar[i] = '#'
		} else {
			bar[i] = '.'
		}
	}
	return fmt.Sprintf("[%s] %3.0f%% %s in %s", bar, frac*100, units.Bytes(float64(done)), elapsed.Truncate(time.Second))
}
