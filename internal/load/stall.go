package load

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// StallError ends a run in which etcd stopped answering: no request
// succeeded for Timeout while Failed requests failed.
type StallError struct {
	// Timeout is how long no request succeeded (Options.StallTimeout).
	Timeout time.Duration
	// Failed counts the requests that failed since the last success.
	Failed int64
}

func (e *StallError) Error() string {
	return fmt.Sprintf("no request succeeded for %s while %d failed", e.Timeout, e.Failed)
}

// watchStall returns a context that is cancelled with a *StallError as
// its cause when p shows failures and no success for timeout. The clock
// starts with the call; stop ends the watch.
func watchStall(ctx context.Context, p *Progress, timeout time.Duration) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(min(max(timeout/20, 10*time.Millisecond), 100*time.Millisecond))
		defer tick.Stop()
		lastOK, failedAtOK := p.Succeeded(), p.Failed()
		lastOKAt := time.Now()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case now := <-tick.C:
				ok, failed := p.Succeeded(), p.Failed()
				if ok > lastOK {
					lastOK, failedAtOK, lastOKAt = ok, failed, now
					continue
				}
				if failed > failedAtOK && now.Sub(lastOKAt) >= timeout {
					cancel(&StallError{Timeout: timeout, Failed: failed - failedAtOK})
					return
				}
			}
		}
	}()
	return ctx, func() {
		close(done)
		cancel(nil)
	}
}

// stallCause replaces the cancellation of a stalled run with its
// *StallError.
func stallCause(ctx context.Context, err error) error {
	var se *StallError
	if err != nil && errors.As(context.Cause(ctx), &se) {
		return se
	}
	return err
}
