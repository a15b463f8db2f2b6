package etcdlog

import (
	"context"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
)

// MemberLog says where a member's log is: a file, or the systemd unit
// whose journal holds it (Root: the node's files mounted elsewhere;
// Member: the name its lines are given).
type MemberLog struct {
	File, Unit, Root, Member string
}

// journalTimeout bounds reading a member's journal.
const journalTimeout = 30 * time.Second

// ReadSince reads what the member logged since then into a Result's logs
// section, for the judgement, and says in params where the log came from
// and what went wrong reading it: a log that cannot be read does not stop
// a run. It reads nothing when the log is neither a file nor a unit. It
// reads to the end even when ctx has ended (a journal is bounded by
// journalTimeout).
func (m MemberLog) ReadSince(ctx context.Context, since time.Time, params *result.NodeLogParams) *result.Logs {
	ctx = context.WithoutCancel(ctx)
	var (
		inputs []Input
		err    error
		wait   func() error
	)
	switch {
	case m.File != "":
		params.LogFile = m.File
		inputs, err = Inputs([]string{m.File}, nil)
	case m.Unit != "":
		jctx, cancel := context.WithTimeout(ctx, journalTimeout)
		defer cancel()
		var j *Journal
		j, err = OpenJournal(jctx, m.Unit, m.Root, m.Member, since)
		params.LogJournal, inputs, wait = j.Source, j.Inputs, j.Wait
	default:
		return nil
	}
	var logs *result.Logs
	if err == nil {
		var sum *Summary
		sum, err = Scan(ctx, inputs, ScanOptions{Summary: SummaryOptions{Since: since, Bucket: time.Minute}})
		if sum != nil {
			logs = sum.Result()
		}
	}
	if wait != nil {
		if werr := wait(); err == nil {
			err = werr
		}
	}
	if err != nil {
		params.LogError = err.Error()
	}
	return logs
}
