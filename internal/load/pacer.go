package load

import (
	"context"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// ticket is one intended send: the request's number, when it is due, and
// how much of the time since then the pacer spent waiting for a free
// worker (every client waiting for etcd): the part of the send's lag that
// the server, not the load generator, caused. busy counts the waits for
// earlier tickets; waitFrom, when set, is when the pacer began to wait
// for a worker to take this one.
type ticket struct {
	i        int64
	due      time.Time
	busy     time.Duration
	waitFrom time.Time
}

// busyAtHandOver returns how much of the ticket's lag, up to its
// hand-over (now: the worker that took it has just received it), the
// pacer spent waiting for a free worker. A ticket a free worker took at
// once reads no clock: the request loop's hot path stays as it was.
func (tk ticket) busyAtHandOver() time.Duration {
	if tk.waitFrom.IsZero() {
		return tk.busy
	}
	return tk.busy + max(0, time.Since(tk.waitFrom))
}

// busyLog records when the pacer waited for a free worker, so that each
// ticket can be told how much of the time since it was due went to such
// waits. Tickets are due in order, so the waits before a due time are
// dropped once counted.
type busyLog struct {
	before time.Duration // the waits that ended before the last due time asked
	waits  []busyWait    // the later ones, in order
	total  time.Duration // every wait so far
}

type busyWait struct{ from, to time.Time }

func (b *busyLog) add(from, to time.Time) {
	b.waits = append(b.waits, busyWait{from, to})
	b.total += to.Sub(from)
}

// since returns how long the pacer waited for a free worker after t. The
// times asked must not go back.
func (b *busyLog) since(t time.Time) time.Duration {
	n := 0
	for ; n < len(b.waits) && !b.waits[n].to.After(t); n++ {
		b.before += b.waits[n].to.Sub(b.waits[n].from)
	}
	b.waits = b.waits[n:]
	upTo := b.before
	if len(b.waits) > 0 && b.waits[0].from.Before(t) {
		upTo += t.Sub(b.waits[0].from)
	}
	return b.total - upTo
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
// late, as an open loop should count it, and the ticket says how much of
// its lag such waits made.
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
	var busy busyLog
	for i := int64(0); sh.total <= 0 || i < sh.total; i++ {
		due := sh.start.Add(time.Duration(float64(i) * sh.interval))
		if !sh.end.IsZero() && !due.Before(sh.end) {
			return
		}
		if !waitUntil(ctx, sh.stop, timer, due) {
			return
		}
		tk := ticket{i: i, due: due, busy: busy.since(due)}
		select {
		case out <- tk: // a worker was free
			continue
		default:
		}
		tk.waitFrom = time.Now()
		select {
		case <-ctx.Done():
			return
		case <-sh.stop:
			return
		case out <- tk:
		}
		busy.add(tk.waitFrom, time.Now())
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
