package loadrun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/load"
	"github.com/etcdperf/etcdperf/internal/promscrape"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// endContext is the context of what follows the load (the last scrape,
// deleting the keys): it outlives an interruption, and after a stall (etcd
// stopped answering) it is bounded by the command timeout, so that a dead
// cluster cannot hold the run beyond it.
func endContext(ctx context.Context, runErr error, commandTimeout time.Duration) (context.Context, context.CancelFunc) {
	end := context.WithoutCancel(ctx)
	var se *load.StallError
	if errors.As(runErr, &se) {
		return context.WithTimeout(end, commandTimeout)
	}
	return end, func() {}
}

// allRefused reports whether the run stalled and every member then
// refused connections on its client port: etcd is down, and deleting the
// run's keys would only wait for the command timeout.
func allRefused(runErr error, after []promscrape.MemberScrape) bool {
	var se *load.StallError
	if !errors.As(runErr, &se) || len(after) == 0 {
		return false
	}
	for _, a := range after {
		if a.Err == nil || !errors.Is(a.Err, syscall.ECONNREFUSED) {
			return false
		}
	}
	return true
}

// joinCleanupErr adds a failure to delete the run's keys to the run's
// error. After a stall, where it is expected, it is folded into the stall's
// one line as advice.
func joinCleanupErr(runErr, cleanupErr error, prefix string) error {
	var se *load.StallError
	if errors.As(runErr, &se) {
		return &stalledError{stall: se, keysLeft: prefix}
	}
	return errors.Join(runErr, cleanupErr)
}

// stalledError is a run that ended because etcd stopped answering.
type stalledError struct {
	stall    *load.StallError
	keysLeft string // the prefix whose keys could not be deleted
	msg      string
}

func (e *stalledError) Error() string {
	msg := e.msg
	if msg == "" {
		msg = "etcd stopped answering: " + e.stall.Error()
	}
	if e.keysLeft != "" {
		msg += fmt.Sprintf("; the run's keys under %s could not be deleted: delete them with etcdctl del --prefix %s once etcd answers again", e.keysLeft, e.keysLeft)
	}
	return msg
}

func (e *stalledError) Unwrap() error { return e.stall }

// explainStall turns a stall into one line that says where etcd stopped
// answering, how it failed, and how far the run got, and adds the finding
// to the partial Result. Other errors pass unchanged.
func explainStall(runErr error, t *lab.Target, b *result.Bench) error {
	var se *load.StallError
	if !errors.As(runErr, &se) {
		return runErr
	}
	e := &stalledError{stall: se}
	var sd *stalledError
	if errors.As(runErr, &sd) {
		e.keysLeft = sd.keysLeft
	}
	eps := strings.Join(t.Client().Options().Endpoints, ",")
	var b2 strings.Builder
	fmt.Fprintf(&b2, "etcd at %s stopped answering: no request succeeded for %s (--command-timeout) while %d failed", eps, se.Timeout, se.Failed)
	if b != nil {
		if top, _ := load.TopError(b.Errors); top != "" {
			fmt.Fprintf(&b2, ", most with %q", top)
		}
		fmt.Fprintf(&b2, "; the run stopped early after %s and %d successful requests", units.Seconds(b.Seconds), b.Ops)
		b.Stalled = &result.Stall{Timeout: se.Timeout.Seconds(), Failed: se.Failed}
	}
	e.msg = b2.String()
	return e
}
