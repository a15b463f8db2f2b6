package dbfile

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"

	bolt "go.etcd.io/bbolt"

	"github.com/etcdperf/etcdperf/internal/result"
)

// Compare reads the databases of several members of one cluster (copies
// of their member/snap/db, or snapshots) and says where each stands: the
// raft position it was written at (consistent index, term), its newest and
// compacted revision, and a hash of the revisions they all hold, so that
// the one to restore from (etcd-io/etcd issue 20217: the newest, before a
// --force-new-cluster) and any that diverged are named. A file that cannot
// be read is said in its entry; it fails only when ctx ends.
func Compare(ctx context.Context, paths []string) (*result.DBMembers, error) {
	out := &result.DBMembers{}
	type opened struct {
		db *bolt.DB
		i  int
	}
	var dbs []opened
	defer func() {
		for _, o := range dbs {
			o.db.Close()
		}
	}()
	for i, p := range paths {
		m := result.DBMember{Path: p}
		db, _, err := openChecked(p)
		if err == nil {
			err = position(db, &m)
		}
		if err != nil {
			if db != nil {
				db.Close()
			}
			m.Error = err.Error()
		} else {
			dbs = append(dbs, opened{db, i})
		}
		out.Files = append(out.Files, m)
	}
	// The revisions every file holds: after the latest compaction of any
	// of them, up to the oldest newest revision.
	from, to := int64(0), int64(0)
	for _, o := range dbs {
		m := out.Files[o.i]
		from = max(from, m.CompactRevision)
		if to == 0 || m.Revision < to {
			to = m.Revision
		}
	}
	if len(dbs) < 2 {
		return out, ctx.Err()
	}
	if to <= from {
		out.Notes = append(out.Notes, fmt.Sprintf("the files hold no revision in common (the latest compaction of one is at %d, the newest revision of another at %d): their key-value stores cannot be compared", from, to))
		return out, ctx.Err()
	}
	out.HashFrom, out.HashTo = from, to
	for _, o := range dbs {
		m := &out.Files[o.i]
		h, err := hashRange(ctx, o.db, m.Path, from, to)
		if err != nil {
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			m.Error = err.Error()
			continue
		}
		m.Hash, m.Hashed = h, true
	}
	return out, nil
}

// position reads the raft position and the revisions of db into m.
func position(db *bolt.DB, m *result.DBMember) error {
	return view(db, m.Path, func(tx *bolt.Tx) error {
		meta, keys := tx.Bucket([]byte("meta")), tx.Bucket([]byte("key"))
		if meta == nil || keys == nil {
			return notDB(m.Path, "it is a bbolt file without etcd's key and meta buckets")
		}
		var d result.DB
		readMeta(meta, &d)
		m.ConsistentIndex, m.Term, m.CompactRevision = d.ConsistentIndex, d.Term, d.CompactRevision
		if k, _ := keys.Cursor().Last(); len(k) >= 8 {
			m.Revision = int64(binary.BigEndian.Uint64(k[:8]))
		}
		return nil
	})
}

// castagnoli is CRC-32C's table, as etcd's HashKV uses.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// hashRange is the CRC-32C (Castagnoli, as etcd's HashKV) of every
// revision key and value of the key bucket whose main revision is in
// (from, to], in the bucket's order: equal for two stores that hold the
// same history over that range.
func hashRange(ctx context.Context, db *bolt.DB, path string, from, to int64) (uint32, error) {
	h := crc32.New(castagnoli)
	start := make([]byte, 8)
	binary.BigEndian.PutUint64(start, uint64(from+1))
	err := view(db, path, func(tx *bolt.Tx) error {
		c := tx.Bucket([]byte("key")).Cursor()
		n := 0
		for k, v := c.Seek(start); k != nil; k, v = c.Next() {
			if len(k) < 8 || int64(binary.BigEndian.Uint64(k[:8])) > to {
				break
			}
			if n++; n%8192 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			h.Write(k)
			h.Write(v)
		}
		return nil
	})
	return h.Sum32(), err
}
