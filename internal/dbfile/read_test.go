package dbfile

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/scale"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// putAll writes the puts in transactions of at most 100 operations (etcd's
// --max-txn-ops is 128) and returns the last revision.
func putAll(t testing.TB, c *clientv3.Client, ops []clientv3.Op) int64 {
	t.Helper()
	var rev int64
	for len(ops) > 0 {
		n := min(len(ops), 100)
		r, err := c.Txn(context.Background()).Then(ops[:n]...).Commit()
		if err != nil {
			t.Fatal(err)
		}
		rev, ops = r.Header.Revision, ops[n:]
	}
	return rev
}

// snapshot saves the member's database with the Maintenance API, as
// etcdctl snapshot save does (the stream ends with its SHA-256).
func snapshot(t testing.TB, c *clientv3.Client) string {
	t.Helper()
	rc, err := c.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	path := filepath.Join(t.TempDir(), "snap.db")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, rc); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// keep copies a file a test read to $ETCDPERF_KEEP_DB (a directory), to
// look at etcdperf db's views of it (docs/db.md's examples).
func keep(t *testing.T, path, name string) {
	dir := os.Getenv("ETCDPERF_KEEP_DB")
	if dir == "" {
		return
	}
	b, err := os.ReadFile(path)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, name), b, 0o600)
	}
	if err != nil {
		t.Errorf("keep %s: %v", path, err)
	}
}

// A snapshot of an etcd filled with etcdperf scale's Kubernetes-shaped
// objects: the counts per resource come back exactly, and so do the bytes
// of keys and values, live and history (updates, deletions after a
// compaction), the namespaces, the churned keys and the leases.
func TestReadScaleSnapshot(t *testing.T) {
	em := testutil.StartEmbeddedEtcd(t)
	c := em.Client
	ctx := context.Background()
	counts, err := scale.ParseObjects("pods=300,services=40,events=60,configmaps=30,secrets=30,nodes=5")
	if err != nil {
		t.Fatal(err)
	}
	objs := scale.NewObjects("/", counts, 10, 7)
	var leases [2]clientv3.LeaseID
	for i := range leases {
		g, err := c.Grant(ctx, 3600)
		if err != nil {
			t.Fatal(err)
		}
		leases[i] = g.ID
	}
	want := map[string]*result.DBUsage{}
	data := func(k int, idx int64) (key string, n int64) {
		key = string(objs.Key(nil, k, idx))
		return key, int64(len(key) + objs.Size(k, idx))
	}
	var ops []clientv3.Op
	for k, cnt := range counts {
		u := &result.DBUsage{}
		want[cnt.Kind.Resource] = u
		for idx := range cnt.N {
			key, n := data(k, idx)
			var opts []clientv3.OpOption
			if cnt.Kind.Leased {
				opts = append(opts, clientv3.WithLease(leases[idx%2]))
				u.LeasedKeys++
			}
			ops = append(ops, clientv3.OpPut(key, string(objs.Value(nil, k, idx, time.Now())), opts...))
			u.Keys++
			u.LiveBytes += float64(n)
		}
	}
	other := map[string]string{
		"/myapp/config/a": "xx", "/myapp/config/b": "yyy", "flat": "v",
		"/registry/apiextensions.k8s.io/customresourcedefinitions/certificates.cert-manager.io": "crd",
		"/registry/cert-manager.io/certificates/ns-000/web-tls":                                 "cr",
	}
	for k, v := range other {
		ops = append(ops, clientv3.OpPut(k, v))
	}
	compactAt := putAll(t, c, ops)
	if _, err := c.Compact(ctx, compactAt, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	// Pods 0-9 are rewritten 3 times (the same sizes: a status update),
	// configmaps 0-4 deleted: history after the compaction.
	pods, cms := 0, 3
	for range 3 {
		ops = nil
		for idx := range int64(10) {
			key, n := data(pods, idx)
			ops = append(ops, clientv3.OpPut(key, string(objs.Value(nil, pods, idx, time.Now()))))
			want["pods"].HistoryRevisions++
			want["pods"].HistoryBytes += float64(n)
		}
		putAll(t, c, ops)
	}
	ops = nil
	for idx := range int64(5) {
		key, n := data(cms, idx)
		ops = append(ops, clientv3.OpDelete(key))
		u := want["configmaps"]
		u.Keys--
		u.LiveBytes -= float64(n)
		u.DeletedKeys++
		u.HistoryRevisions += 2 // the put the compaction kept, and the deletion
		u.HistoryBytes += float64(n + int64(len(key)))
	}
	last := putAll(t, c, ops)
	path := snapshot(t, c)
	keep(t, path, "scale-snap.db")

	start := time.Now()
	d, err := Read(ctx, path, Options{Top: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("read %.0f KiB in %s", d.FileSize/1024, time.Since(start))
	got := map[string]result.DBResource{}
	for _, r := range d.Resources {
		got[r.Name] = r
	}
	for name, w := range want {
		g := got[name]
		gu := g.DBUsage
		gu.StoredBytes = 0
		if gu != *w {
			t.Errorf("%s: got %+v\nwant %+v", name, gu, *w)
		}
		if g.Class != result.DBClassKubernetes || g.Prefix != "/registry/"+name+"/" {
			t.Errorf("%s: class %q prefix %q", name, g.Class, g.Prefix)
		}
		if ns := g.Namespaces; (name == "minions") != (ns == 0) || name != "minions" && ns != 10 {
			t.Errorf("%s: %d namespaces", name, ns)
		}
		if g.StoredBytes < g.Bytes() {
			t.Errorf("%s: stored %g bytes, less than its keys and values %g", name, g.StoredBytes, g.Bytes())
		}
	}
	for name, class := range map[string]string{"/myapp": result.DBClassOther, "(top level)": result.DBClassOther,
		"apiextensions.k8s.io/customresourcedefinitions": result.DBClassCRD, "cert-manager.io/certificates": result.DBClassCustom} {
		if g, ok := got[name]; !ok || g.Class != class || g.Keys == 0 {
			t.Errorf("%s: %+v, want class %s", name, g, class)
		}
	}
	if got["/myapp"].Keys != 2 || got["/myapp"].LiveBytes != float64(len("/myapp/config/a")+2+len("/myapp/config/b")+3) {
		t.Errorf("/myapp: %+v", got["/myapp"])
	}
	if len(got) != len(want)+4 {
		t.Errorf("%d resources, want %d: %+v", len(got), len(want)+4, d.Resources)
	}
	if d.Revision != last || d.CompactRevision != compactAt || d.ScheduledCompactRevision != 0 {
		t.Errorf("revision %d compacted %d (scheduled %d), want %d and %d", d.Revision, d.CompactRevision, d.ScheduledCompactRevision, last, compactAt)
	}
	if !d.Snapshot || d.SnapshotHash != "ok" || d.FileSize != d.Size+32 || d.SizeInUse <= 0 || d.SizeInUse > d.Size {
		t.Errorf("file: snapshot %v %q, file %g, size %g, in use %g", d.Snapshot, d.SnapshotHash, d.FileSize, d.Size, d.SizeInUse)
	}
	if d.NamespacesTotal != 10 || len(d.Namespaces) != 5 {
		t.Errorf("namespaces: %d listed of %d", len(d.Namespaces), d.NamespacesTotal)
	}
	if len(d.Churn) != 5 || d.Churn[0].Revisions != 4 || d.Churn[0].Resource != "pods" || !strings.HasPrefix(d.Churn[0].Key, "/registry/pods/") {
		t.Errorf("churn: %+v", d.Churn)
	}
	if l := d.Leases; l.Count != 2 || l.Keys != 60 || l.Empty != 0 || len(l.Top) != 2 || l.Top[0].Keys != 30 || l.Top[0].Resource != "events" || l.Top[0].TTL != 3600 {
		t.Errorf("leases: %+v", l)
	}
	var keyBucket bool
	for _, b := range d.Buckets {
		keyBucket = keyBucket || b.Name == "key" && b.Keys == d.Totals.Keys+d.Totals.HistoryRevisions
	}
	if !keyBucket {
		t.Errorf("buckets %+v: the key bucket should hold %d revisions", d.Buckets, d.Totals.Keys+d.Totals.HistoryRevisions)
	}
}

// A database fragmented by deletes: most keys deleted, then compacted.
// The free pages are bbolt's own count, the size in use is what etcd
// reported for it, and a defragmentation would give most of the file back.
func TestReadFragmented(t *testing.T) {
	em := testutil.StartEmbeddedEtcd(t)
	c := em.Client
	ctx := context.Background()
	val := strings.Repeat("v", 2048)
	var ops []clientv3.Op
	for i := range 2000 {
		ops = append(ops, clientv3.OpPut(fmt.Sprintf("/frag/%05d", i), val))
	}
	putAll(t, c, ops)
	r, err := c.Delete(ctx, "/frag/00000", clientv3.WithRange("/frag/01800"))
	if err != nil || r.Deleted != 1800 {
		t.Fatalf("delete: %v %+v", err, r)
	}
	// A compaction at the deletions' revision would keep their
	// tombstones: compact one revision later.
	p, err := c.Put(ctx, "/frag/last", "v")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compact(ctx, p.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	// etcd counts the pages its last commit freed as in use until the
	// next commit, the one it makes on stopping: a small write after the
	// compaction makes that last commit a small one, so that the file
	// read after the stop and etcd's reading before it differ by a few
	// pages, not by the compaction's.
	if _, err := c.Put(ctx, "/frag/settle", "v"); err != nil {
		t.Fatal(err)
	}
	// etcd's backend commits every 100ms, later on a busy host: the size
	// in use is etcd's once three readings 200ms apart agree.
	var st *clientv3.StatusResponse
	for same, deadline := 0, time.Now().Add(10*time.Second); same < 3 && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		s, err := c.Status(ctx, c.Endpoints()[0])
		if err != nil {
			t.Fatal(err)
		}
		if same++; st == nil || s.DbSizeInUse != st.DbSizeInUse || s.DbSize != st.DbSize {
			same = 1
		}
		st = s
	}
	em.Stop()

	d, err := Read(ctx, em.DB, Options{})
	if err != nil {
		t.Fatal(err)
	}
	keep(t, em.DB, "fragmented.db")
	bdb, err := bolt.Open(em.DB, 0o400, &bolt.Options{ReadOnly: true, PreLoadFreelist: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	bs := bdb.Stats()
	bdb.Close()
	if d.FreePages != int64(bs.FreePageN) || d.PendingPages != int64(bs.PendingPageN) {
		t.Errorf("free pages %d+%d, bbolt counts %d+%d", d.FreePages, d.PendingPages, bs.FreePageN, bs.PendingPageN)
	}
	page := float64(d.PageSize)
	if d.Size != float64(st.DbSize) || d.SizeInUse < float64(st.DbSizeInUse)-8*page || d.SizeInUse > float64(st.DbSizeInUse)+8*page {
		t.Errorf("size %g in use %g; etcd said %d and %d", d.Size, d.SizeInUse, st.DbSize, st.DbSizeInUse)
	}
	if d.Totals.Keys != 202 || d.Totals.HistoryRevisions != 0 || d.Reclaimable < 0.6*d.FileSize || d.FreePages < d.Pages/2 {
		t.Errorf("keys %d, history %d, reclaimable %g of %g, free pages %d of %d", d.Totals.Keys, d.Totals.HistoryRevisions, d.Reclaimable, d.FileSize, d.FreePages, d.Pages)
	}
	t.Logf("file %g, size %g, in use %g (etcd: %d, %d), free pages %d of %d", d.FileSize, d.Size, d.SizeInUse, st.DbSize, st.DbSizeInUse, d.FreePages, d.Pages)
}

// A running member's file is refused at once, naming the way out.
func TestReadLockedByMember(t *testing.T) {
	em := testutil.StartEmbeddedEtcd(t)
	start := time.Now()
	_, err := Read(context.Background(), em.DB, Options{})
	fe, ok := err.(*FileError)
	if !ok || !fe.Locked || !strings.Contains(err.Error(), "etcdctl snapshot save snap.db") {
		t.Fatalf("got %v", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("refused after %s: it must not wait on the lock", el)
	}
	_, err = Read(context.Background(), em.Dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "member's data directory") {
		t.Errorf("a data dir: %v", err)
	}
}
