// Package fio runs the real fio with the disk probe's parameters and reads
// its JSON output into the same shapes as the native probe.
package fio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/diskprobe"
)

// ErrNotInstalled is returned when no fio binary can be found.
var ErrNotInstalled = errors.New("fio is not installed (install it with `apt-get install fio`, `dnf install fio` or `brew install fio`, or use the native engine)")

// Percentiles are the quantiles requested from fio, matching Latency's.
var Percentiles = []float64{50, 90, 99, 99.9, 99.99}

// Args returns fio's command line for the probe options, writing to files
// named namePrefix.<job> in o.Dir.
func Args(o diskprobe.Options, namePrefix string) []string {
	args := []string{
		"--name=etcdperf",
		"--directory=" + o.Dir,
		"--filename_format=" + namePrefix + ".$jobnum",
		"--rw=" + string(o.RW),
		"--ioengine=sync",
		"--bs=" + strconv.Itoa(o.BlockSize),
		"--size=" + strconv.FormatInt(o.Size, 10),
		"--numjobs=" + strconv.Itoa(o.Jobs),
		"--group_reporting",
		"--unlink=1",
		"--output-format=json",
		"--percentile_list=" + percentileList(),
	}
	switch o.Sync {
	case diskprobe.SyncFdatasync:
		args = append(args, "--fdatasync=1")
	case diskprobe.SyncFsync:
		args = append(args, "--fsync=1")
	case diskprobe.SyncODsync:
		args = append(args, "--sync=dsync")
	}
	if o.Direct {
		args = append(args, "--direct=1")
	}
	if o.Prealloc {
		args = append(args, "--fallocate=native")
	} else {
		args = append(args, "--fallocate=none")
	}
	if o.Runtime > 0 {
		args = append(args, "--runtime="+strconv.FormatFloat(o.Runtime.Seconds(), 'f', -1, 64)+"s")
	}
	if o.TimeBased {
		args = append(args, "--time_based")
	}
	return args
}

func percentileList() string {
	parts := make([]string, len(Percentiles))
	for i, p := range Percentiles {
		parts[i] = strconv.FormatFloat(p, 'f', -1, 64)
	}
	return strings.Join(parts, ":")
}

// Run runs fio in o.Dir and returns its parsed report. The files fio writes
// carry a unique name and are removed afterwards, also when fio fails or ctx
// is cancelled.
func Run(ctx context.Context, o diskprobe.Options) (*Report, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	bin, err := exec.LookPath("fio")
	if err != nil {
		return nil, ErrNotInstalled
	}
	if err := diskprobe.CheckDir(o); err != nil {
		return nil, err
	}
	prefix := fmt.Sprintf(".etcdperf-fio-%d-%d", os.Getpid(), time.Now().UnixNano())
	defer removeFiles(o.Dir, prefix)

	cmd := exec.CommandContext(ctx, bin, Args(o, prefix)...)
	// Stop fio with SIGINT first, so that it cleans up after itself too.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	rep, perr := Parse(stdout.Bytes())
	if runErr != nil || perr != nil {
		msg := firstLine(stderr.String())
		if msg == "" && perr == nil {
			msg = runErr.Error()
		}
		if msg == "" {
			msg = perr.Error()
		}
		return nil, fmt.Errorf("fio failed in %s: %s", o.Dir, msg)
	}
	if j := rep.Jobs; len(j) > 0 && j[0].Error != 0 {
		return nil, fmt.Errorf("fio failed in %s: error %d (%s)", o.Dir, j[0].Error, firstLine(stderr.String()))
	}
	return rep, nil
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

func removeFiles(dir, prefix string) {
	matches, _ := filepath.Glob(filepath.Join(dir, prefix+".*"))
	for _, m := range matches {
		os.Remove(m)
	}
}
