package load

import (
	"context"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// ticket is one intended send: the request's number and when it is due.
type ticket struct {
	i   int64
	due time.Time
}

// fineSleep is how long before a send is due the pacer stops sleeping on
// a Go timer and sleeps with nanosleep instead: Go's timers wake up to a
// millisecond late on Linux (they ride on epoll_wait's millisecond
// timeout), and every percentile measured from the intended send would
// carry that lag.
const fineSleep = 2 * time.Millisecond

// pollStop bounds one sleep of the pacer, so that a slow rate still sees
// ctx end or Stop close promptly.
const pollStop = 50 * time.Millisecond

// pace hands the request numbers to the workers at their intended send
// times (an absolute schedule: a late send does not delay the next ones)
// until the total, the end of the run, ctx or sh.stop; then it closes out.
// A ticket waits for a free worker: with every worker busy the send is
// late, as an open loop should count it.
func pace(ctx context.Context, sh *shared, out chan<- ticket) {
	defer close(out)
	// The last stretch of each wait is a nanosleep on a thread of this
	// goroutine's own with a timer slack of 1ns (the default 50µs would
	// be added to every wake-up). The thread goes back to the runtime at
	// the end with its slack restored: a locked thread that ended with
	// its goroutine would take down the child processes it happened to
	// start (the etcd members, whose Pdeathsig follows the thread that
	// forked them, not the process).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0) == nil {
		defer unix.Prctl(unix.PR_SET_TIMERSLACK, 0, 0, 0, 0) // 0: the thread's default
	}
	timer := stoppedTimer()
	defer timer.Stop()
	for i := int64(0); sh.total <= 0 || i < sh.total; i++ {
		due := sh.start.Add(time.Duration(float64(i) * sh.interval))
		if !sh.end.IsZero() && !due.Before(sh.end) {
			return
		}
		if !waitUntil(ctx, sh.stop, timer, due) {
			return
		}
		select {
		case out <- ticket{i: i, due: due}:
		case <-ctx.Done():
			return
		case <-sh.stop:
			return
		}
	}
}

// waitUntil sleeps until due: on timer until fineSleep before it, then
// with nanosleep. It reports false when ctx ended or stop closed first.
func waitUntil(ctx context.Context, stop <-chan struct{}, timer *time.Timer, due time.Time) bool {
	for {
		d := time.Until(due) - fineSleep
		if d <= 0 {
			break
		}
		timer.Reset(min(d, pollStop))
		select {
		case <-timer.C:
		case <-ctx.Done():
			return false
		case <-stop:
			return false
		}
	}
	if ctx.Err() != nil || stopped(stop) {
		return false
	}
	for d := time.Until(due); d > 0; d = time.Until(due) {
		ts := unix.NsecToTimespec(int64(d))
		_ = unix.Nanosleep(&ts, nil) // interrupted: sleep the rest
	}
	return true
}
