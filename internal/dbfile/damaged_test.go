package dbfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// smallSnapshot is a snapshot of an etcd holding a few hundred keys, some
// of them overwritten and deleted, and a lease.
func smallSnapshot(t testing.TB) []byte {
	t.Helper()
	em := testutil.StartEmbeddedEtcd(t)
	c := em.Client
	ctx := context.Background()
	lease, err := c.Grant(ctx, 600)
	if err != nil {
		t.Fatal(err)
	}
	var ops []clientv3.Op
	for i := range 300 {
		ops = append(ops, clientv3.OpPut(fmt.Sprintf("/registry/pods/ns%d/pod%d", i%7, i), strings.Repeat("v", 100+i)))
	}
	ops = append(ops, clientv3.OpPut("/registry/leases/kube-node-lease/n1", "lease", clientv3.WithLease(lease.ID)))
	putAll(t, c, ops)
	putAll(t, c, ops[:50])
	if _, err := c.Delete(ctx, "/registry/pods/ns0/", clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(snapshot(t, c))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mutate damages a copy of b as a failing disk or a cut copy would: bytes
// flipped, a run zeroed, a page overwritten with another's, or the file
// truncated.
func mutate(rng *rand.Rand, b []byte) ([]byte, string) {
	out := bytes.Clone(b)
	page := 4096
	pages := len(out) / page
	switch rng.IntN(4) {
	case 0:
		n := 1 + rng.IntN(8)
		for range n {
			i := rng.IntN(len(out))
			out[i] ^= byte(1 + rng.IntN(255))
		}
		return out, fmt.Sprintf("%d bytes flipped", n)
	case 1:
		i, n := rng.IntN(len(out)), 1+rng.IntN(2*page)
		clear(out[i:min(len(out), i+n)])
		return out, fmt.Sprintf("%d bytes zeroed at %d", n, i)
	case 2:
		from, to := rng.IntN(pages), rng.IntN(pages)
		copy(out[to*page:(to+1)*page], b[from*page:(from+1)*page])
		return out, fmt.Sprintf("page %d overwritten with page %d", to, from)
	}
	n := rng.IntN(len(out))
	return out[:n], fmt.Sprintf("truncated to %d bytes", n)
}

// A damaged file never crashes Read: 300 copies of a snapshot, each
// damaged once, are each read into a Result or refused with a FileError
// (one line naming the file and the damage); a snapshot read whole whose
// bytes changed is said to mismatch its SHA-256.
func TestReadDamaged(t *testing.T) {
	snap := smallSnapshot(t)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	read, refused := 0, 0
	for i := range 300 {
		b, how := mutate(rng, snap)
		path := filepath.Join(dir, fmt.Sprintf("damaged-%03d.db", i))
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		res, err := Read(context.Background(), path, Options{})
		var fe *FileError
		switch {
		case err == nil:
			read++
			if changed := !bytes.Equal(b, snap); changed && len(b) == len(snap) && res.Snapshot && res.SnapshotHash != "mismatch" {
				t.Errorf("%s: read whole as a snapshot whose SHA-256 matches", how)
			}
		case errors.As(err, &fe):
			refused++
			if strings.Contains(fe.Msg, "\n") || !strings.Contains(fe.Msg, path) {
				t.Errorf("%s: error %q: want one line naming the file", how, fe.Msg)
			}
		default:
			t.Errorf("%s: error %v (%T), want a Result or a FileError", how, err, err)
		}
		os.Remove(path)
	}
	t.Logf("300 damaged copies: %d read (the damage outside what is read, or said as a hash mismatch), %d refused", read, refused)
}

// A snapshot whose content changed after etcd wrote it is a critical
// finding: etcdutl would refuse to restore it.
func TestDamagedSnapshotJudged(t *testing.T) {
	snap := smallSnapshot(t)
	b := bytes.Clone(snap)
	// A byte of the first key's value: inside what is read, outside every
	// page header and key, so the file still reads whole.
	i := bytes.Index(b, []byte(strings.Repeat("v", 100)))
	if i < 0 {
		t.Fatal("no value found in the snapshot")
	}
	b[i] = 'w'
	path := filepath.Join(t.TempDir(), "changed.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := Read(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := &result.Result{Kind: result.KindDB, DB: d}
	judge.Judge(r, limits.Table)
	if d.SnapshotHash != "mismatch" || r.Verdict != result.Fail || len(r.Findings) == 0 || r.Findings[0].ID != "db_snapshot_damaged" {
		t.Errorf("hash %q, verdict %s, findings %+v; want the damage critical", d.SnapshotHash, r.Verdict, r.Findings)
	}
}

// FuzzRead reads damaged snapshots: never a panic, a Result or an error.
func FuzzRead(f *testing.F) {
	f.Add([]byte("not a database"))
	f.Add(bytes.Repeat([]byte{0}, 8192))
	// testdata/small.snap is smallSnapshot's, saved once: the fuzzing
	// workers start no etcd of their own.
	b, err := os.ReadFile(filepath.Join("testdata", "small.snap"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		m, _ := mutate(rng, b)
		f.Add(m)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "fuzz.db")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		var res *result.DB
		var err error
		done := make(chan struct{})
		go func() { res, err = Read(context.Background(), path, Options{}); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("Read of %d bytes did not end within 10s", len(b))
		}
		var fe *FileError
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("error %v (%T), want a FileError", err, err)
		}
		if err == nil && res == nil {
			t.Fatal("no Result and no error")
		}
	})
}
