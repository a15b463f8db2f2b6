package etcdlog

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Journal is what a systemd unit logged, read from journalctl as it runs.
type Journal struct {
	// Source is the command line that reads it.
	Source string
	// Inputs is its one input, the journal's lines.
	Inputs []Input
	cmd    *exec.Cmd
	out    io.ReadCloser
	stderr strings.Builder
}

// OpenJournal starts reading what unit logged since then from the journal
// (journalctl -u UNIT -o json, with --root for a node's files mounted
// elsewhere when root is neither "" nor "/"); member names the lines'
// member. ctx bounds journalctl; Wait ends it.
func OpenJournal(ctx context.Context, unit, root, member string, since time.Time) (*Journal, error) {
	args := []string{"-u", unit, "-o", "json", "--no-pager", "-q", "--since", "@" + strconv.FormatInt(since.Unix(), 10)}
	if root != "" && root != "/" {
		args = append([]string{"--root", root}, args...)
	}
	j := &Journal{Source: "journalctl " + strings.Join(args, " ")}
	j.cmd = exec.CommandContext(ctx, "journalctl", args...)
	j.cmd.Stderr = &j.stderr
	var err error
	if j.out, err = j.cmd.StdoutPipe(); err == nil {
		err = j.cmd.Start()
	}
	if err != nil {
		return j, fmt.Errorf("read the member's journal: %w", err)
	}
	j.Inputs, err = Inputs([]string{"-"}, j.out)
	if err == nil && member != "" {
		j.Inputs[0].Member = member
	}
	return j, err
}

// Wait reads what is left of the journal and ends journalctl; it says how
// journalctl failed (nothing when it did not start).
func (j *Journal) Wait() error {
	if j.cmd.Process == nil {
		return nil
	}
	io.Copy(io.Discard, j.out)
	if err := j.cmd.Wait(); err != nil {
		return fmt.Errorf("journalctl: %v %s", err, strings.TrimSpace(j.stderr.String()))
	}
	return nil
}
