package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Exit codes, as documented in the README.
const (
	ExitPass  = 0 // every check passed (warnings included)
	ExitFail  = 1 // a check or the verdict failed
	ExitError = 2 // bad usage, or the run could not be carried out
)

// exitError carries the exit code of a failed command. A silent one has
// already told the user everything (e.g. a failed verdict).
type exitError struct {
	code   int
	err    error
	silent bool
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// errVerdictFailed ends a command whose verdict was fail, after its output.
var errVerdictFailed = &exitError{code: ExitFail, silent: true}

// usageError marks bad input: a flag value, a missing argument.
func usageError(format string, args ...any) error {
	return &exitError{code: ExitError, err: fmt.Errorf(format, args...)}
}

// ExitCode maps the error a command returned to the process exit code and
// writes the one line the user needs to stderr.
func ExitCode(err error, stderr io.Writer) int {
	if err == nil {
		return ExitPass
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if !ee.silent {
			fmt.Fprintf(stderr, "etcdperf: %s\n", oneLine(ee.Error()))
		}
		return ee.code
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "etcdperf: interrupted; cleaned up")
		return ExitError
	}
	fmt.Fprintf(stderr, "etcdperf: %s\n", oneLine(err.Error()))
	return ExitError
}

// oneLine keeps joined errors on one line each, indented after the first.
func oneLine(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n  ")
}
