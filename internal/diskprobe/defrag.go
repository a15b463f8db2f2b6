package diskprobe

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Defaults of the defragmentation rehearsal: a database of 64 MiB of
// 1 KiB values (a Kubernetes object's size) copied as etcd defragments.
const (
	DefaultRehearsalSize  = 64 << 20
	DefaultRehearsalValue = 1 << 10
	// defragLimit is etcd's: its defragmentation commits the new file
	// every 10,000 keys (server/storage/backend/backend.go).
	defragLimit = 10000
)

// Rehearsal is what a defragmentation rehearsal measured.
type Rehearsal struct {
	// Bytes is the live data copied (keys and values), in Keys keys of
	// Value bytes each; Elapsed the copy's time, its commits' fdatasyncs
	// included.
	Bytes   int64
	Keys    int
	Value   int
	Elapsed time.Duration
}

// Rate returns the bytes of live data a defragmentation copies per second.
func (r Rehearsal) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Bytes) / r.Elapsed.Seconds()
}

// RehearseDefrag measures what a defragmentation costs on dir's storage,
// in little: it builds a bbolt database of size bytes of value-sized
// values in a file of its own (not timed), then copies it into a second
// new file as etcd's defragmentation does (bucket by bucket, key by key,
// a commit and its fdatasync every 10,000 keys: etcd's defragdb) and
// times the copy. Both files are created with O_EXCL and removed before
// it returns, also on errors and cancellation.
func RehearseDefrag(ctx context.Context, dir string, size int64, value int) (Rehearsal, error) {
	if value < 1 || size < int64(value) {
		return Rehearsal{}, fmt.Errorf("defragmentation rehearsal: size %d must hold at least one value of %d bytes", size, value)
	}
	// The source, the copy, and bbolt's growth of each.
	if err := checkDir(Options{Dir: dir, Size: 3 * size, Jobs: 1}); err != nil {
		return Rehearsal{}, err
	}
	base := filepath.Join(dir, fmt.Sprintf(".etcdperf-defrag-%d-%d", os.Getpid(), time.Now().UnixNano()))
	src, err := openBolt(base+".src", true)
	if err != nil {
		return Rehearsal{}, err
	}
	defer os.Remove(base + ".src")
	defer src.Close()
	r := Rehearsal{Value: value}
	if r.Keys, r.Bytes, err = fill(ctx, src, size, value); err != nil {
		return r, err
	}
	dst, err := openBolt(base+".dst", false)
	if err != nil {
		return r, err
	}
	defer os.Remove(base + ".dst")
	defer dst.Close()
	start := time.Now()
	if err := copyBolt(ctx, src, dst); err != nil {
		return r, &Error{Op: "copy the rehearsal's database into", Path: dst.Path(), Err: err}
	}
	r.Elapsed = time.Since(start)
	return r, nil
}

// openBolt creates a new bbolt file at path; noSync for the source, whose
// writing is not measured.
func openBolt(path string, noSync bool) (*bolt.DB, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, &Error{Op: "create the defragmentation rehearsal's file in", Path: filepath.Dir(path), Err: err}
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{NoSync: noSync, NoFreelistSync: true, FreelistType: bolt.FreelistMapType,
		OpenFile: func(string, int, os.FileMode) (*os.File, error) { return f, nil }})
	if err != nil {
		f.Close()
		return nil, &Error{Op: "open the defragmentation rehearsal's database", Path: path, Err: err}
	}
	return db, nil
}

// fill writes size bytes of random values under etcd's revision keys
// (8-byte main and sub revisions, as its "key" bucket holds them).
func fill(ctx context.Context, db *bolt.DB, size int64, value int) (int, int64, error) {
	v := make([]byte, value)
	_, _ = rand.Read(v)
	keys, bytes := 0, int64(0)
	for bytes < size {
		err := db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("key"))
			if err != nil {
				return err
			}
			// etcd puts its revisions in order, at 90 % (UnsafeSeqPut).
			b.FillPercent = 0.9
			for i := 0; i < defragLimit && bytes < size; i++ {
				k := make([]byte, 17)
				binary.BigEndian.PutUint64(k, uint64(keys+1))
				k[8] = '_'
				if err := b.Put(k, v); err != nil {
					return err
				}
				keys++
				bytes += int64(len(k) + len(v))
			}
			return nil
		})
		if err != nil {
			return keys, bytes, &Error{Op: "fill the defragmentation rehearsal's database", Path: db.Path(), Err: err}
		}
		if err := ctx.Err(); err != nil {
			return keys, bytes, err
		}
	}
	if err := db.Sync(); err != nil {
		return keys, bytes, err
	}
	// What etcd reports as the database's size in use
	// (etcd_mvcc_db_total_size_in_use_in_bytes): the file's pages less
	// the free ones.
	err := db.View(func(tx *bolt.Tx) error {
		bytes = tx.Size() - int64(db.Stats().FreePageN)*int64(db.Info().PageSize)
		return nil
	})
	return keys, bytes, err
}

// copyBolt copies every bucket of src into dst as etcd's defragdb does.
func copyBolt(ctx context.Context, src, dst *bolt.DB) (err error) {
	tx, err := src.Begin(false)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	out, err := dst.Begin(true)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			out.Rollback()
		}
	}()
	count := 0
	err = tx.ForEach(func(name []byte, b *bolt.Bucket) error {
		ob, err := out.CreateBucketIfNotExists(name)
		if err != nil {
			return err
		}
		ob.FillPercent = 0.9
		return b.ForEach(func(k, v []byte) error {
			if count++; count > defragLimit {
				if err := out.Commit(); err != nil {
					return err
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				if out, err = dst.Begin(true); err != nil {
					return err
				}
				ob = out.Bucket(name)
				ob.FillPercent = 0.9
				count = 0
			}
			return ob.Put(k, v)
		})
	})
	if err != nil {
		return err
	}
	return out.Commit()
}
