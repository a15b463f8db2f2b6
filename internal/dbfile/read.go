// Package dbfile reads an etcd database file (a snapshot from etcdctl
// snapshot save, or a copy of a member's member/snap/db) read-only with
// bbolt, etcd's own storage, and says what fills it: the keys, their
// bytes and the history kept per Kubernetes resource and per namespace,
// the keys with the most revisions, the leases, and the file against the
// B-tree in use. It never writes to the file and never waits on the lock
// a running member holds on it.
package dbfile

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/server/v3/lease/leasepb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// DefaultQuota is etcd's default --quota-backend-bytes: 2 GiB.
const DefaultQuota = 2 << 30

// DefaultTop is how many namespaces, keys and leases are listed.
const DefaultTop = 10

// Options say how to read a file.
type Options struct {
	// KubePrefixes are kube-apiserver's --etcd-prefix values, each ending
	// in /; DefaultKubePrefixes when empty.
	KubePrefixes []string
	// Top bounds the namespaces, churned keys and leases listed.
	Top int
	// Quota is --quota-backend-bytes; 0 is etcd's default.
	Quota int64
}

// FileError says why a file cannot be read as an etcd database: locked by
// a running member, not a bbolt file, or truncated. Nothing was read.
type FileError struct {
	Path string
	// Locked is true when a running member holds the file.
	Locked bool
	Msg    string
}

func (e *FileError) Error() string { return e.Msg }

func lockedError(path string) *FileError {
	return &FileError{Path: path, Locked: true, Msg: fmt.Sprintf("%s is locked by a running etcd member: take a snapshot instead (etcdctl snapshot save snap.db) and run etcdperf db snap.db", path)}
}

func notDB(path, why string) *FileError {
	return &FileError{Path: path, Msg: fmt.Sprintf("%s is not an etcd database (bbolt): %s; give a snapshot (etcdctl snapshot save snap.db) or a copy of a member's member/snap/db", path, why)}
}

// minPage is the smallest page bbolt writes (etcd's are the OS page, 4 KiB).
const minPage = 4096

// lockWait is how long Open tries for the shared lock: bbolt tries once,
// and would wait for ever with no timeout.
const lockWait = time.Millisecond

// hashLen is the SHA-256 that etcd's snapshot stream appends to the
// database (etcdutl checks it on restore when size%512 == 32).
const hashLen = sha256.Size

// Read reads the database file at path.
func Read(ctx context.Context, path string, o Options) (*result.DB, error) {
	if len(o.KubePrefixes) == 0 {
		o.KubePrefixes = DefaultKubePrefixes
	}
	if o.Top <= 0 {
		o.Top = DefaultTop
	}
	db, fi, err := openChecked(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	out := &result.DB{Path: path, FileSize: float64(fi.Size()), KubePrefixes: o.KubePrefixes, Quota: float64(o.Quota),
		QuotaSource: "--quota-backend-bytes"}
	if o.Quota <= 0 {
		out.Quota, out.QuotaSource = DefaultQuota, "etcd's default --quota-backend-bytes"
	}
	out.PageSize = db.Info().PageSize
	// A snapshot is its pages and their SHA-256 (a size of 32 past a
	// multiple of 512; a database file is whole pages): hashed beside the
	// walk, on another CPU.
	type hashed struct {
		ok  bool
		err error
	}
	var hash chan hashed
	if fi.Size()%512 == hashLen && fi.Size() > hashLen {
		hash = make(chan hashed, 1)
		hctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			ok, err := snapshotHashOK(hctx, path, fi.Size()-hashLen)
			hash <- hashed{ok, err}
		}()
	}
	if err := walk(ctx, db, o, out); err != nil {
		return nil, err
	}
	out.Size = float64(out.Pages) * float64(out.PageSize)
	out.SizeInUse = out.Size - float64(out.FreePages+out.PendingPages)*float64(out.PageSize)
	dataEnd := fi.Size()
	if hash != nil && fi.Size()-hashLen >= int64(out.Size) {
		out.Snapshot = true
		dataEnd -= hashLen
		h := <-hash
		ok, err := h.ok, h.err
		if err != nil {
			return nil, err
		}
		out.SnapshotHash = "ok"
		if !ok {
			out.SnapshotHash = "mismatch"
			out.Notes = append(out.Notes, "the snapshot's SHA-256 does not match its content: the file was changed or cut after etcd wrote it, and etcdutl snapshot restore would refuse it")
		}
	}
	out.Reclaimable = float64(dataEnd) - out.SizeInUse
	if tail := float64(dataEnd) - out.Size; tail > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("the file is %s larger than its B-tree: bbolt grew it ahead of its pages (a copy of a live member's file); a defragmentation gives that back too", units.Bytes(tail)))
	}
	return out, nil
}

// openChecked opens the database file at path read-only once it is known
// to be one that can be read: a regular file, not empty, at least its two
// meta pages, and its B-tree within it (a first look at the meta pages
// only: a page past the end of a mapped file is a SIGBUS, not an error).
func openChecked(path string) (*bolt.DB, os.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, &FileError{Path: path, Msg: fmt.Sprintf("%s does not exist: give a snapshot (etcdctl snapshot save snap.db) or a copy of a member's member/snap/db", path)}
		}
		return nil, nil, &FileError{Path: path, Msg: err.Error()}
	}
	if fi.IsDir() {
		msg := fmt.Sprintf("%s is a directory: give the database file, a snapshot (etcdctl snapshot save snap.db) or a copy of a member's member/snap/db", path)
		if db := filepath.Join(path, "member", "snap", "db"); fileExists(db) {
			msg = fmt.Sprintf("%s is a member's data directory: its database is %s, which a running member locks; take a snapshot (etcdctl snapshot save snap.db) and run etcdperf db snap.db", path, db)
		}
		return nil, nil, &FileError{Path: path, Msg: msg}
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, notDB(path, "it is not a regular file")
	}
	if fi.Size() == 0 {
		// bbolt would initialise an empty file: never let it try.
		return nil, nil, notDB(path, "it is empty")
	}
	if fi.Size() < 2*minPage {
		return nil, nil, notDB(path, fmt.Sprintf("it holds %d bytes, less than the two meta pages that start a bbolt file: it is truncated or not a database", fi.Size()))
	}
	hwm, err := treeSize(path)
	if err != nil {
		return nil, nil, err
	}
	if hwm > fi.Size() {
		return nil, nil, &FileError{Path: path, Msg: fmt.Sprintf("%s is truncated: its B-tree runs to %d bytes but the file holds %d; copy it again whole, or take a snapshot (etcdctl snapshot save snap.db)", path, hwm, fi.Size())}
	}
	db, err := open(path)
	return db, fi, err
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// open opens path read-only under a shared lock, refused at once when a
// running member holds it. bbolt's free list is not loaded: etcd keeps
// none in the file (NoFreelistSync), and bbolt would find the free pages by
// walking the tree in a goroutine of its own, where a damaged page's
// assertion crashes the process; walk counts them instead.
func open(path string) (db *bolt.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			if db != nil {
				db.Close()
			}
			db, err = nil, notDB(path, fmt.Sprintf("bbolt failed on it (%v)", r))
		}
	}()
	db, err = bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: lockWait})
	switch {
	case err == nil:
		return db, nil
	case errors.Is(err, berrors.ErrTimeout):
		return nil, lockedError(path)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrVersionMismatch):
		return nil, notDB(path, err.Error())
	case errors.Is(err, os.ErrPermission):
		return nil, &FileError{Path: path, Msg: fmt.Sprintf("%s cannot be read: %v (run as its owner, or read a copy)", path, err)}
	}
	return nil, notDB(path, err.Error())
}

// treeSize opens path without walking it and returns the size of its
// B-tree (the high-water mark of its pages).
func treeSize(path string) (int64, error) {
	db, err := open(path)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var size int64
	err = db.View(func(tx *bolt.Tx) error { size = tx.Size(); return nil })
	return size, err
}

func snapshotHashOK(ctx context.Context, path string, n int64) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	h := sha256.New()
	buf := make([]byte, 1<<20)
	r := io.LimitReader(f, n)
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		k, err := r.Read(buf)
		h.Write(buf[:k])
		if err == io.EOF {
			break
		}
		if err != nil {
			return false, fmt.Errorf("reading %s: %w", path, err)
		}
	}
	want := make([]byte, hashLen)
	if _, err := f.ReadAt(want, n); err != nil {
		return false, fmt.Errorf("reading %s: %w", path, err)
	}
	return bytes.Equal(h.Sum(nil), want), nil
}

// keyStat is what the key bucket holds of one key.
type keyStat struct {
	revs         int64
	tomb         bool
	lastData     int64
	data, stored int64
	lease        int64
}

// view runs f in a read transaction of db (the file at path), in this
// goroutine: a page that cannot be read (a page damaged inside, a fault
// on the mapped file) is an error naming the damage, not a crash.
func view(db *bolt.DB, path string, f func(tx *bolt.Tx) error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	defer func() {
		if r := recover(); r != nil {
			err = notDB(path, fmt.Sprintf("a page could not be read (%v): the file is damaged", r))
		}
	}()
	return db.View(f)
}

// walk reads the buckets in one read transaction. A page that cannot be
// read (a file damaged inside) is an error, not a crash.
func walk(ctx context.Context, db *bolt.DB, o Options, out *result.DB) error {
	return view(db, out.Path, func(tx *bolt.Tx) error {
		out.Pages = tx.Size() / int64(db.Info().PageSize)
		// Every page the tree reaches (the bucket of buckets and every
		// bucket in it); the others, past the two meta pages, are free.
		all := tx.Cursor().Bucket().Stats()
		reached := int64(all.BranchPageN + all.BranchOverflowN + all.LeafPageN + all.LeafOverflowN)
		out.FreePages = max(0, out.Pages-2-reached)
		if err := tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			s := b.Stats()
			out.Buckets = append(out.Buckets, result.DBBucket{Name: string(name), Keys: int64(s.KeyN),
				InUse: float64(s.LeafInuse + s.BranchInuse), Pages: int64(s.LeafPageN + s.BranchPageN + s.LeafOverflowN + s.BranchOverflowN)})
			return nil
		}); err != nil {
			return err
		}
		if tx.Bucket([]byte("key")) == nil || tx.Bucket([]byte("meta")) == nil {
			return notDB(out.Path, "it is a bbolt file without etcd's key and meta buckets")
		}
		readMeta(tx.Bucket([]byte("meta")), out)
		readAlarms(tx.Bucket([]byte("alarm")), out)
		keyN := 0
		for _, b := range out.Buckets {
			if b.Name == "key" {
				keyN = int(b.Keys)
			}
		}
		keys, stats, err := readKeys(ctx, tx.Bucket([]byte("key")), keyN, out)
		if err != nil {
			return err
		}
		leases := readLeases(tx.Bucket([]byte("lease")))
		summarise(keys, stats, leases, o, out)
		return nil
	})
}

func readMeta(b *bolt.Bucket, out *result.DB) {
	u64 := func(name string) uint64 {
		if v := b.Get([]byte(name)); len(v) >= 8 {
			return binary.BigEndian.Uint64(v)
		}
		return 0
	}
	out.ConsistentIndex, out.Term = u64("consistent_index"), u64("term")
	out.CompactRevision = int64(u64("finishedCompactRev"))
	if s := int64(u64("scheduledCompactRev")); s != out.CompactRevision {
		out.ScheduledCompactRevision = s
	}
}

func readAlarms(b *bolt.Bucket, out *result.DB) {
	if b == nil {
		return
	}
	_ = b.ForEach(func(k, _ []byte) error {
		var a pb.AlarmMember
		if proto.Unmarshal(k, &a) == nil && a.Alarm != pb.AlarmType_NONE {
			out.Alarms = append(out.Alarms, fmt.Sprintf("%s (member %x)", a.Alarm, a.MemberID))
		}
		return nil
	})
}

// revLen is a revision key's length: 8 bytes of main revision, '_', 8 of
// sub revision; a deletion (tombstone) has a 't' after them.
const revLen = 17

// readKeys reads every revision in the key bucket b into one entry per
// key (in the order keys first appear): its revisions, sizes, whether its
// last revision deletes it, and its lease. The values are parsed in place
// (keyValue), not copied: the database's pages are mapped, and a copy of
// each value would be the file's size again in garbage. keyN, the bucket's
// entries, sizes the lists (untouched capacity costs no memory).
func readKeys(ctx context.Context, b *bolt.Bucket, keyN int, out *result.DB) ([]string, []keyStat, error) {
	index := map[string]int32{}
	keys := make([]string, 0, keyN)
	stats := make([]keyStat, 0, keyN)
	bad := 0
	c := b.Cursor()
	n := 0
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if n++; n%8192 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		if (len(k) != revLen && !(len(k) == revLen+1 && k[revLen] == 't')) || k[8] != '_' {
			bad++
			continue
		}
		main := int64(binary.BigEndian.Uint64(k[:8]))
		key, valueLen, lease, ok := keyValue(v)
		if !ok {
			bad++
			continue
		}
		tomb := len(k) == revLen+1
		i, seen := index[string(key)]
		if !seen {
			ks := string(key)
			i = int32(len(stats))
			index[ks] = i
			keys = append(keys, ks)
			stats = append(stats, keyStat{})
		}
		s := &stats[i]
		data := int64(len(key) + valueLen)
		s.revs++
		s.data += data
		s.stored += int64(len(k) + len(v))
		s.lastData, s.tomb, s.lease = data, tomb, lease
		if main > out.Revision {
			out.Revision = main
		}
	}
	if bad > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d entries of the key bucket are not etcd revisions and were skipped", bad))
	}
	return keys, stats, nil
}

// keyValue reads an mvccpb.KeyValue's key (a slice of v), its value's
// length and its lease from the protobuf encoding v, skipping the other
// fields; ok is false when v is not such an encoding.
func keyValue(v []byte) (key []byte, valueLen int, lease int64, ok bool) {
	for len(v) > 0 {
		num, typ, n := protowire.ConsumeTag(v)
		if n < 0 {
			return nil, 0, 0, false
		}
		v = v[n:]
		switch {
		case num == 1 && typ == protowire.BytesType:
			key, n = protowire.ConsumeBytes(v)
		case num == 5 && typ == protowire.BytesType:
			var val []byte
			val, n = protowire.ConsumeBytes(v)
			valueLen = len(val)
		case num == 6 && typ == protowire.VarintType:
			var x uint64
			x, n = protowire.ConsumeVarint(v)
			lease = int64(x)
		default:
			n = protowire.ConsumeFieldValue(num, typ, v)
		}
		if n < 0 {
			return nil, 0, 0, false
		}
		v = v[n:]
	}
	return key, valueLen, lease, key != nil
}

type leaseAgg struct {
	id, ttl, remaining, keys int64
	resources                map[string]int64
}

func readLeases(b *bolt.Bucket) map[int64]*leaseAgg {
	out := map[int64]*leaseAgg{}
	if b == nil {
		return out
	}
	_ = b.ForEach(func(k, v []byte) error {
		var l leasepb.Lease
		if len(k) != 8 || proto.Unmarshal(v, &l) != nil {
			return nil
		}
		id := int64(binary.BigEndian.Uint64(k))
		out[id] = &leaseAgg{id: id, ttl: l.TTL, remaining: l.RemainingTTL, resources: map[string]int64{}}
		return nil
	})
	return out
}

func add(u *result.DBUsage, s keyStat) {
	u.StoredBytes += float64(s.stored)
	if s.tomb {
		u.DeletedKeys++
		u.HistoryRevisions += s.revs
		u.HistoryBytes += float64(s.data)
		return
	}
	u.Keys++
	u.LiveBytes += float64(s.lastData)
	u.HistoryRevisions += s.revs - 1
	u.HistoryBytes += float64(s.data - s.lastData)
	if s.lease != 0 {
		u.LeasedKeys++
	}
}

// summarise fills out from the keys' stats: usage by resource and by
// namespace, the most churned keys, the leases, and notes on compaction.
func summarise(keys []string, stats []keyStat, leases map[int64]*leaseAgg, o Options, out *result.DB) {
	res, nss, churn := aggregate(keys, stats, leases, o, out)
	resources(res, out)
	namespaces(nss, o.Top, out)
	churned(keys, stats, churn, o, out)
	topLeases(leases, o.Top, out)
	if out.CompactRevision == 0 && out.Totals.HistoryRevisions > 0 {
		out.Notes = append(out.Notes, "no compaction has run on this database: every revision since the start is kept (kube-apiserver compacts every 5 minutes; etcd's --auto-compaction-retention)")
	}
	if out.ScheduledCompactRevision > out.CompactRevision {
		out.Notes = append(out.Notes, fmt.Sprintf("a compaction to revision %d was scheduled and did not finish (the last finished at %d): etcd finishes it when it starts again", out.ScheduledCompactRevision, out.CompactRevision))
	}
}

// resID tells a resource by its prefix and name.
type resID struct{ prefix, name string }

// resAgg is one resource's usage and the namespaces it has keys in.
type resAgg struct {
	r   result.DBResource
	nss map[string]bool
}

// aggregate adds each key's stats to its resource's, its namespace's, the
// totals and its lease's; it returns the resources (by prefix and name),
// the namespaces, and the keys (by index) with more than one revision.
func aggregate(keys []string, stats []keyStat, leases map[int64]*leaseAgg, o Options, out *result.DB) (map[resID]*resAgg, map[string]*result.DBNamespace, []int) {
	res := map[resID]*resAgg{}
	nss := map[string]*result.DBNamespace{}
	var churn []int
	for i, key := range keys {
		s := stats[i]
		pl := classify(key, o.KubePrefixes)
		id := resID{pl.Prefix, pl.Resource}
		ra := res[id]
		if ra == nil {
			ra = &resAgg{r: result.DBResource{Name: pl.Resource, Class: pl.Class, Prefix: pl.Prefix}, nss: map[string]bool{}}
			res[id] = ra
		}
		add(&ra.r.DBUsage, s)
		add(&out.Totals, s)
		if pl.Namespace != "" {
			ra.nss[pl.Namespace] = true
			ns := nss[pl.Namespace]
			if ns == nil {
				ns = &result.DBNamespace{Name: pl.Namespace}
				nss[pl.Namespace] = ns
			}
			add(&ns.DBUsage, s)
		}
		if s.revs > 1 {
			churn = append(churn, i)
		}
		if !s.tomb && s.lease != 0 {
			if l, ok := leases[s.lease]; ok {
				l.keys++
				l.resources[pl.Resource]++
				out.Leases.Keys++
			} else {
				out.Leases.Missing++
			}
		}
	}
	return res, nss, churn
}

// resources lists the resources in out, the largest first.
func resources(res map[resID]*resAgg, out *result.DB) {
	// Resources of one name under two prefixes (OpenShift's) are told
	// apart by their prefix.
	names := map[string]int{}
	for _, ra := range res {
		names[ra.r.Name]++
	}
	for _, ra := range res {
		ra.r.Namespaces = len(ra.nss)
		if names[ra.r.Name] > 1 && ra.r.Class != result.DBClassOther {
			ra.r.Name = ra.r.Prefix
		}
		out.Resources = append(out.Resources, ra.r)
	}
	sort.Slice(out.Resources, func(i, j int) bool {
		a, b := out.Resources[i], out.Resources[j]
		if a.Bytes() != b.Bytes() {
			return a.Bytes() > b.Bytes()
		}
		return a.Name < b.Name
	})
}

// namespaces lists the top largest namespaces in out, and counts them all.
func namespaces(nss map[string]*result.DBNamespace, top int, out *result.DB) {
	out.NamespacesTotal = len(nss)
	for _, ns := range nss {
		out.Namespaces = append(out.Namespaces, *ns)
	}
	sort.Slice(out.Namespaces, func(i, j int) bool {
		a, b := out.Namespaces[i], out.Namespaces[j]
		if a.Bytes() != b.Bytes() {
			return a.Bytes() > b.Bytes()
		}
		return a.Name < b.Name
	})
	if len(out.Namespaces) > top {
		out.Namespaces = out.Namespaces[:top]
	}
}

// churned lists in out the o.Top keys of churn with the most revisions
// (then the most history).
func churned(keys []string, stats []keyStat, churn []int, o Options, out *result.DB) {
	sort.Slice(churn, func(i, j int) bool {
		a, b := stats[churn[i]], stats[churn[j]]
		if a.revs != b.revs {
			return a.revs > b.revs
		}
		if ha, hb := a.data-a.lastData, b.data-b.lastData; ha != hb {
			return ha > hb
		}
		return keys[churn[i]] < keys[churn[j]]
	})
	for _, i := range churn[:min(len(churn), o.Top)] {
		s := stats[i]
		hist := s.data - s.lastData
		if s.tomb {
			hist = s.data
		}
		out.Churn = append(out.Churn, result.DBKey{Key: keys[i], Resource: classify(keys[i], o.KubePrefixes).Resource,
			Revisions: s.revs, HistoryBytes: float64(hist), Deleted: s.tomb})
	}
}

// topLeases counts the leases in out (those without keys too) and lists
// the top ones with the most keys, each with the resource most of them
// are of.
func topLeases(leases map[int64]*leaseAgg, top int, out *result.DB) {
	var ls []*leaseAgg
	for _, l := range leases {
		ls = append(ls, l)
		if l.keys == 0 {
			out.Leases.Empty++
		}
	}
	out.Leases.Count = int64(len(leases))
	sort.Slice(ls, func(i, j int) bool {
		if ls[i].keys != ls[j].keys {
			return ls[i].keys > ls[j].keys
		}
		return ls[i].id < ls[j].id
	})
	for _, l := range ls[:min(len(ls), top)] {
		if l.keys == 0 {
			break
		}
		res, n := "", int64(0)
		for r, k := range l.resources {
			if k > n || k == n && r < res {
				res, n = r, k
			}
		}
		out.Leases.Top = append(out.Leases.Top, result.DBLease{ID: fmt.Sprintf("%x", l.id), TTL: l.ttl, RemainingTTL: l.remaining, Keys: l.keys, Resource: res})
	}
}
