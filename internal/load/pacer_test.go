package load

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/hist"
)

// The pacer hands out every request once, in order, none before its time,
// and stops at the end of the run.
func TestPacerSchedule(t *testing.T) {
	sh := &shared{total: 20, start: time.Now(), interval: float64(5 * time.Millisecond)}
	out := make(chan ticket)
	go pace(context.Background(), sh, out)
	var n int64
	for tk := range out {
		if tk.i != n {
			t.Fatalf("ticket %d after %d", tk.i, n-1)
		}
		if now := time.Now(); now.Before(tk.due) {
			t.Errorf("ticket %d handed out %s before its time", tk.i, tk.due.Sub(now))
		}
		n++
	}
	if n != 20 {
		t.Errorf("%d tickets, want 20", n)
	}
	// A run with an end stops there; a cancelled one at once.
	start := time.Now()
	sh = &shared{start: start, end: start.Add(30 * time.Millisecond), interval: float64(10 * time.Millisecond)}
	out = make(chan ticket)
	go pace(context.Background(), sh, out)
	n = 0
	for range out {
		n++
	}
	if n != 3 {
		t.Errorf("%d tickets in 30ms at one per 10ms, want 3", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sh = &shared{start: time.Now(), interval: float64(time.Hour)}
	out = make(chan ticket)
	go pace(ctx, sh, out)
	<-out // the first is due at once
	cancel()
	select {
	case _, ok := <-out:
		if ok {
			t.Error("a ticket after cancel")
		}
	case <-time.After(time.Second):
		t.Error("the pacer did not stop within 1s of cancel")
	}
}

// A child process started with Pdeathsig dies with the thread that forked
// it, not with the process. The pacer locks a thread of the runtime: it
// must give it back alive, or a run would kill the etcd members started
// from it (seen: a doctor run's member gone at the end of the load, its
// keys then impossible to delete).
func TestPacerKeepsItsThreadAlive(t *testing.T) {
	var children []*exec.Cmd
	defer func() {
		for _, c := range children {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}()
	// Children forked from as many of the runtime's threads as possible.
	for range 8 {
		done := make(chan *exec.Cmd)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			c := exec.Command("sleep", "60")
			c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			if err := c.Start(); err != nil {
				t.Error(err)
				c = nil
			}
			done <- c
		}()
		if c := <-done; c != nil {
			children = append(children, c)
		}
	}
	for range 50 {
		sh := &shared{total: 3, start: time.Now(), interval: float64(time.Millisecond)}
		out := make(chan ticket)
		go pace(context.Background(), sh, out)
		for range out {
		}
	}
	time.Sleep(50 * time.Millisecond)
	for _, c := range children {
		// A killed child is a zombie until waited for: read its state.
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.Process.Pid))
		if f := strings.Fields(string(stat)); err != nil || len(f) < 3 || f[2] == "Z" {
			t.Fatalf("a child forked by one of the runtime's threads died: %q %v", stat, err)
		}
	}
}

// lags collects how late sends left, from several workers.
type lags struct {
	mu sync.Mutex
	h  *hist.Histogram
}

func (l *lags) add(due time.Time) {
	d := time.Since(due)
	l.mu.Lock()
	l.h.Record(d)
	l.mu.Unlock()
}

// workers runs f in n goroutines and waits for them.
func workers(n int, f func()) {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f()
		}()
	}
	wg.Wait()
}

// timerPace is the pacing the pacer replaced, for comparison: each worker
// sleeps on a Go timer until its request is due.
func timerPace(sh *shared, n int, l *lags) {
	workers(n, func() {
		timer := stoppedTimer()
		for {
			i := sh.next.Add(1) - 1
			if i >= sh.total {
				return
			}
			due := sh.start.Add(time.Duration(float64(i) * sh.interval))
			if d := time.Until(due); d > 0 {
				timer.Reset(d)
				<-timer.C
			}
			l.add(due)
		}
	})
}

// tickerLag runs the pacer with workers that only note how late each
// request would have left.
func tickerLag(sh *shared, n int, l *lags) {
	out := make(chan ticket)
	go pace(context.Background(), sh, out)
	workers(n, func() {
		for tk := range out {
			l.add(tk.due)
		}
	})
}

// BenchmarkPacerLag measures how late a send leaves after its intended
// time, with the pacer and with the Go timers it replaced, side by side in
// one run, at profile s (150/s, 50 clients) and at 10/s with one client:
//
//	go test -run XXX -bench PacerLag -benchtime 1x ./internal/load/
//
// It reports the mean and p99 lag in µs of each and their ratio.
func BenchmarkPacerLag(b *testing.B) {
	for _, c := range []struct {
		name    string
		rate    float64
		workers int
		total   int64
	}{{"s-150-per-s-50-clients", 150, 50, 600}, {"10-per-s-1-client", 10, 1, 40}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				iv := float64(time.Second) / c.rate
				newLag, oldLag := &lags{h: hist.New()}, &lags{h: hist.New()}
				tickerLag(&shared{total: c.total, start: time.Now(), interval: iv}, c.workers, newLag)
				timerPace(&shared{total: c.total, start: time.Now(), interval: iv}, c.workers, oldLag)
				nl, ol := newLag.h.Latency(false), oldLag.h.Latency(false)
				b.ReportMetric(nl.Mean*1e6, "pacer-mean-µs")
				b.ReportMetric(nl.P99*1e6, "pacer-p99-µs")
				b.ReportMetric(ol.Mean*1e6, "timer-mean-µs")
				b.ReportMetric(ol.P99*1e6, "timer-p99-µs")
				b.ReportMetric(ol.Mean/nl.Mean, "timer/pacer-mean")
			}
		})
	}
}

// busyLog tells each due time how long the pacer waited for a free
// worker after it, counting a wait that straddles it in part.
func TestBusyLogSince(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	var b busyLog
	b.add(at(10), at(20))
	b.add(at(30), at(60))
	for _, c := range []struct{ due, want int }{{0, 40}, {10, 40}, {15, 35}, {20, 30}, {45, 15}, {60, 0}} {
		if got := b.since(at(c.due)); got != time.Duration(c.want)*time.Millisecond {
			t.Errorf("since %dms: %s, want %dms", c.due, got, c.want)
		}
	}
	b.add(at(70), at(75))
	if got := b.since(at(65)); got != 5*time.Millisecond {
		t.Errorf("since 65ms after a later wait: %s, want 5ms", got)
	}
	if len(b.waits) != 1 {
		t.Errorf("%d waits kept, want only the one after the last due time", len(b.waits))
	}
}

// With its one worker busy 4 intervals per request, the pacer falls
// behind, and the tickets say that nearly all of their lag went to
// waiting for the worker; when a ticket never waits (room in the
// channel), none did.
func TestPacerBusyLag(t *testing.T) {
	run := func(work time.Duration, room int) (lag, busy time.Duration) {
		sh := &shared{total: 20, start: time.Now(), interval: float64(5 * time.Millisecond)}
		out := make(chan ticket, room)
		go pace(context.Background(), sh, out)
		for tk := range out {
			busy += tk.busyAtHandOver()
			lag += time.Since(tk.due) // read after: a lag holds its busy part
			time.Sleep(work)
		}
		return lag, busy
	}
	lag, busy := run(20*time.Millisecond, 0)
	if lag < 500*time.Millisecond || busy < lag*8/10 || busy > lag {
		t.Errorf("worker busy 4 intervals per request: lag %s, of it waiting for the worker %s; want most of the lag (at least 0.5s)", lag, busy)
	}
	if _, busy = run(0, 20); busy != 0 {
		t.Errorf("room for every ticket: %s waiting for a worker, want none", busy)
	}
}
