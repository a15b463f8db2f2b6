package cli

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
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

// Progress intervals: a terminal's line is redrawn every terminalTick; a
// log (a pipe, a file, CI, a pod's log) gets a line of its own after
// firstLogLine, then every logEvery.
const (
	terminalTick = 200 * time.Millisecond
	firstLogLine = time.Second
	logEvery     = 5 * time.Second
)

// addQuietFlag adds the global --quiet.
func addQuietFlag(root *cobra.Command) {
	root.PersistentFlags().BoolP("quiet", "q", false, "print no progress on stderr (errors and results only)")
}

// quiet reports whether --quiet was given.
func quiet(cmd *cobra.Command) bool {
	q, _ := cmd.Flags().GetBool("quiet")
	return q
}

// startProgress reports a run's progress on the command's stderr while it
// lasts, unless --quiet: on a terminal one line redrawn in place, erased at
// the end; elsewhere (tee, CI, a pod's log) a plain line every few seconds
// with the time since the start and, when known (total > 0), how long the
// run should take. Stdout keeps only the results. The returned function
// stops it.
func startProgress(cmd *cobra.Command, total time.Duration, line func(elapsed time.Duration) string) (stop func()) {
	w := cmd.ErrOrStderr()
	if quiet(cmd) {
		return func() {}
	}
	term := isTerminal(w)
	done := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTicker(terminalTick)
		defer t.Stop()
		next := firstLogLine
		for {
			select {
			case <-done:
				if term {
					fmt.Fprint(w, "\r\033[K")
				}
				return
			case <-t.C:
				el := time.Since(start)
				switch {
				case term:
					fmt.Fprintf(w, "\r\033[K%s", line(el))
				case el >= next:
					at := el.Truncate(time.Second).String()
					if total > 0 {
						at += "/" + total.Truncate(time.Second).String()
					}
					fmt.Fprintf(w, "etcdperf: [%s] %s\n", at, plainProgress(line(el)))
					next = el.Truncate(time.Second) + logEvery
				}
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// progressBar is the bar of bytesProgress and countProgress.
var progressBar = regexp.MustCompile(`\[[#.]{10,}\] *`)

// plainProgress is a progress line without its bar, for a log.
func plainProgress(s string) string {
	loc := progressBar.FindStringIndex(s)
	if loc == nil {
		return s
	}
	before, after := strings.TrimSuffix(strings.TrimSpace(s[:loc[0]]), ":"), s[loc[1]:]
	if before == "" {
		return after
	}
	return before + ": " + after
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
