package testutil

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// KubeAPIServerVersion is the Kubernetes release bench/kubeapiserver
// builds: the one whose staging modules match this module's k8s.io/api.
const KubeAPIServerVersion = "v1.37.2"

var (
	kubeBuildOnce sync.Once
	kubeBin       string
	kubeSkip      string
	kubeErr       error
)

// KubeAPIServerPath returns Kubernetes' API server, built once from the
// Go module proxy through the wrapper module bench/kubeapiserver and kept
// in the user's cache directory (etcdperf/kube-apiserver-VERSION). skip
// says why it cannot be built here (the module proxy cannot be reached);
// err is any other failure.
func KubeAPIServerPath() (path, skip string, err error) {
	kubeBuildOnce.Do(func() {
		cache, err := os.UserCacheDir()
		if err != nil {
			kubeErr = err
			return
		}
		kubeBin = filepath.Join(cache, "etcdperf", "kube-apiserver-"+KubeAPIServerVersion)
		if st, err := os.Stat(kubeBin); err == nil && st.Mode().IsRegular() {
			return
		}
		if err := os.MkdirAll(filepath.Dir(kubeBin), 0o755); err != nil {
			kubeErr = err
			return
		}
		tmp := fmt.Sprintf("%s.%d.tmp", kubeBin, os.Getpid())
		// The version Kubernetes' own build stamps in (its /version says it).
		v := "k8s.io/component-base/version."
		major, minor, _ := strings.Cut(strings.TrimPrefix(KubeAPIServerVersion, "v"), ".")
		minor, _, _ = strings.Cut(minor, ".")
		ldflags := fmt.Sprintf("-X %sgitVersion=%s -X %sgitMajor=%s -X %sgitMinor=%s", v, KubeAPIServerVersion, v, major, v, minor)
		cmd := exec.Command("go", "build", "-ldflags", ldflags, "-o", tmp, "k8s.io/kubernetes/cmd/kube-apiserver")
		cmd.Dir = filepath.Join(moduleRoot(), "bench", "kubeapiserver")
		out, err := cmd.CombinedOutput()
		if err != nil {
			os.Remove(tmp)
			if s := string(out); strings.Contains(s, "dial tcp") || strings.Contains(s, "proxy.golang.org") || strings.Contains(s, "no such host") {
				kubeSkip = fmt.Sprintf("Kubernetes' API server %s cannot be built here (the Go module proxy cannot be reached): %s", KubeAPIServerVersion, firstLine(s))
				return
			}
			kubeErr = fmt.Errorf("build kube-apiserver %s in bench/kubeapiserver: %v\n%s", KubeAPIServerVersion, err, out)
			return
		}
		kubeErr = os.Rename(tmp, kubeBin)
	})
	return kubeBin, kubeSkip, kubeErr
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// KubeAPIServer is a real Kubernetes API server that a test started on
// 127.0.0.1 against an etcd.
type KubeAPIServer struct {
	// URL is https://127.0.0.1:PORT; Token a bearer token of a member of
	// system:masters; Kubeconfig a file with both (the server's
	// certificate is self-signed: insecure-skip-tls-verify).
	URL, Token, Kubeconfig string
	// Log is the server's output.
	Log string
}

// StartKubeAPIServer starts Kubernetes' API server on 127.0.0.1 with its
// objects in etcd at etcdURL (under a prefix of its own), and stops it at
// the end of the test. It skips the test where the server cannot be
// built. Any token is a member of system:masters; every request is
// allowed.
func StartKubeAPIServer(t testing.TB, etcdURL string) *KubeAPIServer {
	t.Helper()
	bin, skip, err := KubeAPIServerPath()
	if err != nil {
		t.Fatal(err)
	}
	if skip != "" {
		t.Skip(skip)
	}
	dir := t.TempDir()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	saKey := writePEM(t, dir, "sa.key", "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key))
	token := "etcdperf-test-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(token+`,etcdperf-test,etcdperf-test,"system:masters"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &KubeAPIServer{Token: token, Log: filepath.Join(dir, "kube-apiserver.log")}
	for attempt := 0; attempt < 3; attempt++ {
		port := FreePort(t)
		s.URL = "https://127.0.0.1:" + strconv.Itoa(port)
		logf, err := os.Create(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin,
			"--etcd-servers="+etcdURL, "--etcd-prefix=/registry-"+filepath.Base(dir),
			"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(port), "--cert-dir="+filepath.Join(dir, "certs"),
			"--token-auth-file="+tokens, "--authorization-mode=AlwaysAllow",
			"--service-account-key-file="+saKey, "--service-account-signing-key-file="+saKey,
			"--service-account-issuer=https://kubernetes.default.svc", "--service-cluster-ip-range=10.96.0.0/16",
			"--allow-privileged=true", "--v=1")
		cmd.Stdout, cmd.Stderr = logf, logf
		exited, stop, err := startServer(cmd, 15*time.Second, func() { logf.Close() })
		if err != nil {
			logf.Close()
			t.Fatalf("start kube-apiserver: %v", err)
		}
		if s.waitReady(exited, 90*time.Second) {
			t.Cleanup(stop)
			s.Kubeconfig = filepath.Join(dir, "kubeconfig")
			kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: test
  user: {token: %q}
contexts:
- name: test
  context: {cluster: test, user: test}
current-context: test
`, s.URL, s.Token)
			if err := os.WriteFile(s.Kubeconfig, []byte(kc), 0o600); err != nil {
				t.Fatal(err)
			}
			return s
		}
		stop()
		b, _ := os.ReadFile(s.Log)
		if !bytes.Contains(b, []byte("address already in use")) {
			t.Fatalf("kube-apiserver did not become ready in 90s; its log ends:\n%s", tail(b, 3000))
		}
	}
	t.Fatal("kube-apiserver: no free port after 3 tries")
	return nil
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// Client is an HTTP client for the server (its certificate is
// self-signed).
func (s *KubeAPIServer) Client() *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
}

// Do sends a request with the server's token and returns the status and
// the body.
func (s *KubeAPIServer) Do(ctx context.Context, method, path, contentType string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

func (s *KubeAPIServer) waitReady(exited <-chan error, timeout time.Duration) bool {
	return pollReady(exited, timeout, 250*time.Millisecond, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		code, _, err := s.Do(ctx, http.MethodGet, "/readyz", "", nil)
		return err == nil && code == http.StatusOK
	})
}
