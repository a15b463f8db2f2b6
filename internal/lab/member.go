package lab

import (
	"context"
	"errors"
	"fmt"
	"github.com/etcdperf/etcdperf/internal/cluster"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// DefaultStartTimeout bounds how long starting embedded etcd may take.
const DefaultStartTimeout = 30 * time.Second

// MemberConfig describes one embedded etcd member.
type MemberConfig struct {
	Name string
	// DataDir is etcd's --data-dir; etcd creates it (mode 0700).
	DataDir string
	// ClientURL and PeerURL are the member's loopback URLs, e.g.
	// http://127.0.0.1:23790; https needs TLS.
	ClientURL, PeerURL string
	// InitialCluster is etcd's --initial-cluster (name=peerURL,...); empty
	// for a single member.
	InitialCluster string
	// ClusterToken is etcd's --initial-cluster-token.
	ClusterToken string
	// LogFile receives etcd's log; empty drops it.
	LogFile string
	// TLS, when set, serves the client URL over TLS.
	TLS *ServerTLS
	// StartTimeout bounds the start; 0 means DefaultStartTimeout.
	StartTimeout time.Duration
	// ExitWithParent makes a member process (ServeMember) stop when the
	// process that started it is gone.
	ExitWithParent bool
	// AutoCompaction, when positive, compacts the member's history
	// periodically, keeping this much of it (etcd's periodic
	// auto-compaction).
	AutoCompaction time.Duration
	// QuotaBackendBytes is etcd's --quota-backend-bytes (0: etcd's
	// default, 2 GiB).
	QuotaBackendBytes int64
	// HeartbeatMs and ElectionMs are etcd's --heartbeat-interval and
	// --election-timeout in milliseconds (0: etcd's defaults, 100 and
	// 1000).
	HeartbeatMs, ElectionMs uint
	// Fault is what a member process (ServeMember) suffers on purpose: a
	// slow view of its data dir (see StartSlowDisk), a CPU quota, a slow
	// link in front of its peer port.
	Fault
	// listenPeerURL is where etcd listens for its peers when that is not
	// PeerURL (a slow link listens there instead).
	listenPeerURL string
	// ListenMetricsURL, when set, is etcd's --listen-metrics-urls: a port
	// that serves /metrics alone.
	ListenMetricsURL string
}

// ServerTLS is the client-side TLS of an embedded member (etcd's
// --cert-file, --key-file, --trusted-ca-file, --client-cert-auth).
type ServerTLS struct {
	CertFile, KeyFile, TrustedCAFile string
	ClientCertAuth                   bool
}

// EmbeddedMember is an etcd member running in this process.
type EmbeddedMember struct {
	cfg  MemberConfig
	etcd *embed.Etcd
	once sync.Once
}

// StartMember starts an etcd member in this process and waits until it
// serves clients (for a multi-member cluster, until the cluster has a
// quorum), at most cfg.StartTimeout.
func StartMember(ctx context.Context, cfg MemberConfig) (*EmbeddedMember, error) {
	cluster.QuietGRPC()
	ec, err := embedConfig(cfg)
	if err != nil {
		return nil, err
	}
	e, err := startEtcd(ec)
	if err != nil {
		return nil, fmt.Errorf("start embedded etcd %s in %s: %w%s", cfg.Name, cfg.DataDir, err, logTail(cfg.LogFile))
	}
	m := &EmbeddedMember{cfg: cfg, etcd: e}
	timeout := cfg.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-e.Server.ReadyNotify():
		return m, nil
	case err := <-e.Err():
		m.Close()
		return nil, fmt.Errorf("embedded etcd %s in %s stopped while starting: %w%s", cfg.Name, cfg.DataDir, err, logTail(cfg.LogFile))
	case <-t.C:
		m.Close()
		return nil, fmt.Errorf("embedded etcd %s in %s did not become ready within %s%s", cfg.Name, cfg.DataDir, timeout, logTail(cfg.LogFile))
	case <-ctx.Done():
		m.Close()
		return nil, ctx.Err()
	}
}

// startEtcd starts etcd, turning a panic while it starts (etcd panics
// when it cannot create its WAL, e.g. on a full disk) into an error; the
// log says why.
func startEtcd(ec *embed.Config) (e *embed.Etcd, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("etcd panicked while starting: %v", p)
		}
	}()
	return embed.StartEtcd(ec)
}

// Err reports a fatal error of the running member.
func (m *EmbeddedMember) Err() <-chan error { return m.etcd.Err() }

// Config returns the member's configuration.
func (m *EmbeddedMember) Config() MemberConfig { return m.cfg }

// Close stops the member (its data stays on disk). A leader first hands
// its leadership to a peer, waiting up to etcd's request timeout (see
// Abandon).
func (m *EmbeddedMember) Close() {
	m.once.Do(func() {
		m.etcd.Close()
	})
}

// Abandon stops the member's server at once, without handing its
// leadership to a peer (its data stays on disk, as consistent as after a
// crash); a Close under way then ends without waiting for a hand-over.
// Close must still be called. For a member whose parent is gone, with
// peers that are stopping too: a hand-over would wait up to etcd's
// request timeout (7s by default), and longer behind a slow link.
func (m *EmbeddedMember) Abandon() {
	m.etcd.Server.HardStop()
}

func embedConfig(c MemberConfig) (*embed.Config, error) {
	if c.Name == "" || c.DataDir == "" || c.ClientURL == "" || c.PeerURL == "" {
		return nil, errors.New("an embedded member needs a name, a data dir, a client URL and a peer URL")
	}
	cu, err := url.Parse(c.ClientURL)
	if err != nil {
		return nil, fmt.Errorf("client URL %q: %w", c.ClientURL, err)
	}
	pu, err := url.Parse(c.PeerURL)
	if err != nil {
		return nil, fmt.Errorf("peer URL %q: %w", c.PeerURL, err)
	}
	ec := embed.NewConfig()
	ec.Name = c.Name
	ec.Dir = c.DataDir
	ec.ListenClientUrls = []url.URL{*cu}
	ec.AdvertiseClientUrls = []url.URL{*cu}
	ec.ListenPeerUrls = []url.URL{*pu}
	ec.AdvertisePeerUrls = []url.URL{*pu}
	if c.listenPeerURL != "" {
		lu, err := url.Parse(c.listenPeerURL)
		if err != nil {
			return nil, fmt.Errorf("peer URL %q: %w", c.listenPeerURL, err)
		}
		ec.ListenPeerUrls = []url.URL{*lu}
	}
	if c.ListenMetricsURL != "" {
		mu, err := url.Parse(c.ListenMetricsURL)
		if err != nil {
			return nil, fmt.Errorf("metrics URL %q: %w", c.ListenMetricsURL, err)
		}
		ec.ListenMetricsUrls = []url.URL{*mu}
	}
	ec.InitialCluster = c.InitialCluster
	if ec.InitialCluster == "" {
		ec.InitialCluster = c.Name + "=" + c.PeerURL
	}
	ec.ClusterState = embed.ClusterStateFlagNew
	if c.ClusterToken != "" {
		ec.InitialClusterToken = c.ClusterToken
	}
	ec.Logger = "zap"
	ec.LogLevel = "info"
	if c.LogFile != "" {
		ec.LogOutputs = []string{c.LogFile}
	} else {
		ec.LogOutputs = []string{os.DevNull}
	}
	if c.AutoCompaction > 0 {
		ec.AutoCompactionMode = "periodic"
		ec.AutoCompactionRetention = c.AutoCompaction.String()
	}
	ec.QuotaBackendBytes = c.QuotaBackendBytes
	if c.HeartbeatMs > 0 {
		ec.TickMs = c.HeartbeatMs
	}
	if c.ElectionMs > 0 {
		ec.ElectionMs = c.ElectionMs
	}
	if c.TLS != nil {
		ec.ClientTLSInfo.CertFile = c.TLS.CertFile
		ec.ClientTLSInfo.KeyFile = c.TLS.KeyFile
		ec.ClientTLSInfo.TrustedCAFile = c.TLS.TrustedCAFile
		ec.ClientTLSInfo.ClientCertAuth = c.TLS.ClientCertAuth
	}
	return ec, nil
}

// logTail returns the last error-looking line of an etcd log file, to put
// in a start error.
func logTail(path string) string {
	if path == "" {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i := len(lines) - 1; i >= 0 && i >= len(lines)-50; i-- {
		l := lines[i]
		if strings.Contains(l, `"level":"error"`) || strings.Contains(l, `"level":"fatal"`) || strings.Contains(l, `"level":"panic"`) || strings.Contains(l, "panic:") {
			return "; etcd's log says: " + truncate(l, 300)
		}
	}
	return "; last line of etcd's log: " + truncate(lines[len(lines)-1], 300)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
