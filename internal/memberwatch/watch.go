package memberwatch

import (
	"context"
	"net/http"
	"time"

	"github.com/etcdperf/etcdperf/internal/cluster"
)

// WatchOptions shape a watch.
type WatchOptions struct {
	// Interval is the time between two marks, counted from the first
	// scrape so that a slow round does not push the others back.
	Interval time.Duration
	// Timeout bounds one round of scrapes (0: only ctx does).
	Timeout time.Duration
	// SkipLate skips the rounds whose time passed while a round ran (a
	// poll that wants no backlog); without it they run at once, one after
	// the other, so that a series has a mark for every interval.
	SkipLate bool
}

// Tick is one round of a watch: N is the interval it ends, counted from 0
// (the window's first scrape, whose Mark has no Before), At is when it began, and Window
// is the window being marked, for what it measured since its start.
type Tick struct {
	N      int
	At     time.Time
	Mark   Mark
	Window *Window
}

// Watch is the one watch loop over members: it opens a window (without
// the host's sampler, which a watch has no end to stop), hands its first
// scrape to each, then marks the window every interval and hands
// each mark to each, until each returns false or ctx ends. A round that
// ctx interrupted is not handed on. It returns the window, which the
// caller may end (End) for its Observation.
func Watch(ctx context.Context, client *http.Client, members []cluster.Member, o WatchOptions, each func(Tick) bool) *Window {
	start := time.Now()
	var w *Window
	round := func(n int) bool {
		rctx, cancel := ctx, context.CancelFunc(func() {})
		if o.Timeout > 0 {
			rctx, cancel = context.WithTimeout(ctx, o.Timeout)
		}
		defer cancel()
		t := Tick{N: n, At: time.Now()}
		if w == nil {
			w = Start(rctx, client, members, Options{})
			t.Mark = Mark{After: w.First()}
		} else {
			t.Mark = w.Mark(rctx)
		}
		t.Window = w
		return ctx.Err() == nil && each(t)
	}
	if !round(0) {
		return w
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for n := 1; ; n++ {
		for o.SkipLate && time.Until(start.Add(time.Duration(n)*o.Interval)) < 0 {
			n++
		}
		timer.Reset(time.Until(start.Add(time.Duration(n) * o.Interval)))
		select {
		case <-ctx.Done():
			return w
		case <-timer.C:
		}
		if !round(n) {
			return w
		}
	}
}
