package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// TestDBFiles: etcdperf db reads a snapshot; a running member's file is
// refused at once (exit 2, one line, the file unchanged, no Result
// written); so are a truncated snapshot, a text file and an empty file.
func TestDBFiles(t *testing.T) {
	em := testutil.StartEmbeddedEtcd(t)
	ctx := context.Background()
	for _, k := range []string{"/registry/pods/default/web-1", "/registry/pods/default/web-2", "/registry/minions/node-1"} {
		if _, err := em.Client.Put(ctx, k, strings.Repeat("x", 512)); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	snap := filepath.Join(dir, "snap.db")
	rc, err := em.Client.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(snap, b, 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) testutil.Run {
		t.Helper()
		cx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(cx, testutil.Binary(t), args...)
		cmd.Dir = dir
		return testutil.Wait(t, cmd, cx)
	}

	t.Run("snapshot", func(t *testing.T) {
		r := run("db", "snap.db", "-o", "json")
		var res result.Result
		if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &res) != nil || res.DB == nil {
			t.Fatalf("exit %d: %s\n%s", r.Code, r.Stderr, r.Stdout)
		}
		if d := res.DB; d.Totals.Keys != 3 || d.SnapshotHash != "ok" || len(d.Resources) != 2 || d.Resources[0].Name != "pods" || d.Resources[0].Keys != 2 {
			t.Errorf("db section %+v", d)
		}
	})

	t.Run("several members", func(t *testing.T) {
		// A later snapshot of the same member: newer, agreeing over the
		// revisions both hold.
		if _, err := em.Client.Put(ctx, "/registry/pods/default/web-3", "y"); err != nil {
			t.Fatal(err)
		}
		rc, err := em.Client.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		later, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "later.db"), later, 0o600); err != nil {
			t.Fatal(err)
		}
		r := run("db", "snap.db", "later.db")
		if r.Code != 0 || !strings.Contains(r.Stdout, "2 members' databases compared") || !strings.Contains(r.Stdout, "[info] Restore from later.db") ||
			strings.Contains(r.Stdout, "diverged") {
			t.Errorf("exit %d, stdout:\n%s\nstderr %q", r.Code, r.Stdout, r.Stderr)
		}
		// A member's file that cannot be read is said, critical: exit 1.
		if err := os.WriteFile(filepath.Join(dir, "cut.db"), []byte("not a database"), 0o600); err != nil {
			t.Fatal(err)
		}
		if r := run("db", "snap.db", "later.db", "cut.db"); r.Code != 1 || !strings.Contains(r.Stdout, "[critical] cut.db could not be read") ||
			!strings.Contains(r.Stdout, "Restore from later.db") {
			t.Errorf("an unreadable member's file: exit %d, stdout:\n%s\nstderr %q", r.Code, r.Stdout, r.Stderr)
		}
		if r := run("db", "snap.db", "snap.db", "-o", "out.json"); r.Code != 2 || !strings.Contains(r.Stderr, "snap.db is given twice") || func() bool { _, err := os.Stat(filepath.Join(dir, "out.json")); return err == nil }() {
			t.Errorf("the same file twice: exit %d, stderr %q", r.Code, r.Stderr)
		}
	})

	t.Run("locked", func(t *testing.T) {
		// The member is idle: nothing it does changes the file while
		// etcdperf tries it (its backend commits only what is written).
		time.Sleep(200 * time.Millisecond)
		before, err := os.ReadFile(em.DB)
		if err != nil {
			t.Fatal(err)
		}
		st0, _ := os.Stat(em.DB)
		start := time.Now()
		r := run("db", em.DB, "-o", "out.json")
		el := time.Since(start)
		want := "etcdperf: " + em.DB + " is locked by a running etcd member: take a snapshot instead (etcdctl snapshot save snap.db) and run etcdperf db snap.db\n"
		if r.Code != 2 || r.Stderr != want || r.Stdout != "" {
			t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", r.Code, r.Stdout, r.Stderr, want)
		}
		if el > 5*time.Second {
			t.Errorf("took %s: it must not wait on the lock", el)
		}
		after, _ := os.ReadFile(em.DB)
		st1, _ := os.Stat(em.DB)
		if !bytes.Equal(before, after) || !st0.ModTime().Equal(st1.ModTime()) || st0.Size() != st1.Size() {
			t.Errorf("the member's file changed: %d -> %d bytes, mtime %v -> %v", st0.Size(), st1.Size(), st0.ModTime(), st1.ModTime())
		}
		if _, err := os.Stat(filepath.Join(dir, "out.json")); err == nil {
			t.Error("a Result was written for a refused file")
		}
	})

	bad := map[string]struct {
		data []byte
		says string
	}{
		"truncated.db": {b[:len(b)/2], "truncated.db is truncated: its B-tree runs to "},
		"short.db":     {b[:5000], "short.db is not an etcd database (bbolt): it holds 5000 bytes, less than the two meta pages"},
		"notes.txt":    {[]byte(strings.Repeat("not a database\n", 1000)), "notes.txt is not an etcd database (bbolt): invalid database"},
		"empty.db":     {nil, "empty.db is not an etcd database (bbolt): it is empty"},
	}
	for name, c := range bad {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(dir, name), c.data, 0o600); err != nil {
				t.Fatal(err)
			}
			r := run("db", name)
			line := strings.TrimSuffix(r.Stderr, "\n")
			if r.Code != 2 || !strings.HasPrefix(line, "etcdperf: "+c.says) || strings.Contains(line, "\n") || r.Stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line starting %q", r.Code, r.Stdout, r.Stderr, c.says)
			}
			after, _ := os.ReadFile(filepath.Join(dir, name))
			if !bytes.Equal(after, c.data) {
				t.Error("the file changed")
			}
		})
	}
}
