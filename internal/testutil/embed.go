package testutil

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
)

// Embedded is one embedded etcd member of a test.
type Embedded struct {
	Etcd   *embed.Etcd
	Client *clientv3.Client
	// Dir is its data dir; DB its database file (Dir/member/snap/db).
	Dir, DB string
}

// StartEmbeddedEtcd starts one embedded etcd member on 127.0.0.1 with its
// data in a temporary directory, and a client to it; both are closed at the
// end of the test (or earlier by Stop). Its log goes to a file, shown when
// the test fails.
func StartEmbeddedEtcd(t testing.TB) *Embedded {
	t.Helper()
	return StartEmbeddedEtcdIn(t, t.TempDir())
}

// StartEmbeddedEtcdIn is StartEmbeddedEtcd with the member's data and log
// under dir (a quiet disk of the test's own, say).
func StartEmbeddedEtcdIn(t testing.TB, dir string) *Embedded {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Name = "m1"
	cfg.Dir = filepath.Join(dir, "etcd")
	logFile := filepath.Join(dir, "etcd.log")
	cfg.LogOutputs = []string{logFile}
	cfg.LogLevel = "warn"
	client := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", FreePort(t))}
	peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", FreePort(t))}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatalf("start embedded etcd: %v", err)
	}
	em := &Embedded{Etcd: e, Dir: cfg.Dir, DB: filepath.Join(cfg.Dir, "member", "snap", "db")}
	t.Cleanup(func() {
		em.Stop()
		if t.Failed() {
			if b, err := os.ReadFile(logFile); err == nil {
				t.Logf("etcd's log:\n%s", b)
			}
		}
	})
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		t.Fatal("embedded etcd did not become ready in 30s")
	}
	em.Client, err = clientv3.New(clientv3.Config{Endpoints: []string{client.Host}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return em
}

// Stop closes the client and stops the member (once).
func (em *Embedded) Stop() {
	if em.Client != nil {
		em.Client.Close()
		em.Client = nil
	}
	if em.Etcd != nil {
		em.Etcd.Close()
		em.Etcd = nil
	}
}
