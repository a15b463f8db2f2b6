// Package procstats reads what the kernel knows of one process on this
// host: the CPU time its threads ran, how long they waited in a run queue
// for a CPU (/proc/PID/task/*/schedstat), which process listens on a TCP
// address (/proc/net/tcp), and which etcd files it has open. It reads
// /proc only; the root is injectable for tests.
package procstats

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Proc is the /proc file system to read: "/proc" on a live host.
type Proc string

// Host is this host's /proc.
const Host Proc = "/proc"

func (p Proc) path(parts ...string) string {
	return filepath.Join(append([]string{string(p)}, parts...)...)
}

// Sched is a process's scheduling counters at one instant, summed over its
// threads (/proc/PID/task/*/schedstat: time on a CPU, time runnable but
// waiting in a run queue, and the number of times a thread got a CPU).
type Sched struct {
	At      time.Time
	Run     time.Duration
	Wait    time.Duration
	Slices  uint64
	Threads int
}

// ReadSched sums the scheduling counters of every thread of pid. A thread
// that ends between two reads takes its counters with it: SchedBetween
// never returns negative figures for that.
func (p Proc) ReadSched(pid int) (Sched, error) {
	s := Sched{At: time.Now()}
	dir := p.path(strconv.Itoa(pid), "task")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return s, fmt.Errorf("read the threads of process %d: %w", pid, err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "schedstat"))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) { // the thread ended
				continue
			}
			return s, fmt.Errorf("read the scheduler statistics of process %d: %w", pid, err)
		}
		run, wait, slices, err := ParseSchedstat(string(b))
		if err != nil {
			return s, fmt.Errorf("process %d thread %s: %w", pid, e.Name(), err)
		}
		s.Run += run
		s.Wait += wait
		s.Slices += slices
		s.Threads++
	}
	if s.Threads == 0 {
		return s, fmt.Errorf("process %d has no thread left: it has ended", pid)
	}
	return s, nil
}

// ParseSchedstat reads one /proc/.../schedstat line: nanoseconds on a CPU,
// nanoseconds waiting in a run queue, and the number of timeslices.
func ParseSchedstat(line string) (run, wait time.Duration, slices uint64, err error) {
	f := strings.Fields(line)
	if len(f) < 3 {
		return 0, 0, 0, fmt.Errorf("schedstat %q: want 3 numbers", strings.TrimSpace(line))
	}
	var v [3]uint64
	for i := range v {
		if v[i], err = strconv.ParseUint(f[i], 10, 63); err != nil {
			return 0, 0, 0, fmt.Errorf("schedstat %q: %q is not a number", strings.TrimSpace(line), f[i])
		}
	}
	return time.Duration(v[0]), time.Duration(v[1]), v[2], nil
}

// SchedRates are a process's scheduling figures over an interval.
type SchedRates struct {
	Seconds float64
	// CPU is the CPU time used per second of the interval (cores).
	CPU float64
	// Wait is the time its threads spent runnable but waiting for a CPU,
	// per second of the interval (summed over threads).
	Wait float64
	// WaitPerSlice is the mean wait before a thread got a CPU: the
	// scheduling latency of the process.
	WaitPerSlice float64
}

// SchedBetween returns the rates from a to b.
func SchedBetween(a, b Sched) SchedRates {
	r := SchedRates{Seconds: b.At.Sub(a.At).Seconds()}
	if r.Seconds <= 0 {
		return r
	}
	run := max(0, b.Run-a.Run).Seconds()
	wait := max(0, b.Wait-a.Wait).Seconds()
	r.CPU, r.Wait = run/r.Seconds, wait/r.Seconds
	if b.Slices > a.Slices {
		r.WaitPerSlice = wait / float64(b.Slices-a.Slices)
	}
	return r
}

// Alive reports whether process pid exists.
func (p Proc) Alive(pid int) bool {
	_, err := os.Stat(p.path(strconv.Itoa(pid)))
	return err == nil
}

// RSS is process pid's resident memory in bytes (/proc/PID/statm's
// second field, in pages).
func (p Proc) RSS(pid int) (float64, error) {
	b, err := os.ReadFile(p.path(strconv.Itoa(pid), "statm"))
	if err != nil {
		return 0, fmt.Errorf("read the memory of process %d: %w", pid, err)
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, fmt.Errorf("process %d: statm %q has no resident size", pid, strings.TrimSpace(string(b)))
	}
	pages, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("process %d: statm's resident size %q is not a number", pid, f[1])
	}
	return float64(pages) * float64(os.Getpagesize()), nil
}
