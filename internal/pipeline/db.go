package pipeline

import (
	"context"

	"github.com/etcdperf/etcdperf/internal/dbfile"
	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
)

// DBOptions configure `etcdperf db`.
type DBOptions struct {
	// Path is the database file: a snapshot or a copy of member/snap/db.
	Path string
	// Compare, when it holds two files or more, compares the members'
	// databases instead (Path is not read).
	Compare []string
	Read    dbfile.Options
	// Criteria hold the limits it is judged by (--limit); limits.Table
	// when nil.
	Criteria []limits.Criterion
}

// DB reads an etcd database file read-only and judges it: its size
// against the quota and its free pages. A file that cannot be read (locked
// by a running member, not bbolt, truncated) is a *dbfile.FileError and no
// Result.
func DB(ctx context.Context, o DBOptions) (*result.Result, error) {
	res := result.New(result.KindDB)
	if len(o.Compare) > 1 {
		res.Params = &result.DBParams{Paths: o.Compare}
		c, err := dbfile.Compare(ctx, o.Compare)
		if err != nil {
			return nil, err
		}
		res.DBMembers = c
	} else {
		res.Params = &result.DBParams{Path: o.Path, Quota: float64(o.Read.Quota), KubePrefixes: o.Read.KubePrefixes, Top: o.Read.Top}
		db, err := dbfile.Read(ctx, o.Path, o.Read)
		if err != nil {
			return nil, err
		}
		res.DB = db
	}
	judge.Judge(res, o.Criteria)
	res.Finish()
	return res, nil
}
