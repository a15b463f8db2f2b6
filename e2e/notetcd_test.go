package e2e

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/testutil"
)

// TestNotEtcdEndpoint: an endpoint where something answers that is not
// etcd's client API (here an HTTP server that answers 404, and a TLS
// server that is not etcd) is a usage error for every command that takes
// --endpoints: exit 2, one line on stderr naming the endpoint and what
// answers there, nothing measured and no Result written.
func TestNotEtcdEndpoint(t *testing.T) {
	quiet := func(s *httptest.Server) *httptest.Server {
		s.Config.ErrorLog = log.New(io.Discard, "", 0)
		return s
	}
	plain := quiet(httptest.NewUnstartedServer(http.NotFoundHandler()))
	plain.Start()
	defer plain.Close()
	tlsSrv := quiet(httptest.NewUnstartedServer(http.NotFoundHandler()))
	tlsSrv.StartTLS()
	defer tlsSrv.Close()

	servers := []struct{ ep, says string }{
		{plain.Listener.Addr().String(), "an HTTP server answers there, not etcd's gRPC client API (GET /version: 404 Not Found)"},
		{"https://" + tlsSrv.Listener.Addr().String(), "an HTTPS server answers there, not etcd's gRPC client API"},
	}
	commands := [][]string{
		{"bench", "put"},
		{"check"},
		{"check", "datascale"},
		{"scale"},
		{"doctor"},
		{"metrics"},
	}
	for _, s := range servers {
		for _, c := range commands {
			dir := t.TempDir()
			args := append(append([]string{}, c...), "--endpoints", s.ep, "-o", "run.json", "--dial-timeout", "3s")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			cmd := exec.CommandContext(ctx, testutil.Binary(t), args...)
			cmd.Dir = dir
			start := time.Now()
			r := testutil.Wait(t, cmd, ctx)
			el := time.Since(start)
			cancel()
			line := strings.TrimSuffix(r.Stderr, "\n")
			want := "etcdperf: " + s.ep + " is not an etcd client URL: "
			if r.Code != 2 || !strings.HasPrefix(line, want) || !strings.Contains(line, s.says) || strings.Contains(line, "\n") || len(r.Progress) > 0 {
				t.Errorf("%v: exit %d, stderr %q (progress %q); want exit 2 and one line %q...%q", args, r.Code, r.Stderr, r.Progress, want, s.says)
			}
			if !strings.Contains(line, "usually port 2379") {
				t.Errorf("%v: %q does not say where etcd's client URL usually is", args, line)
			}
			if r.Stdout != "" {
				t.Errorf("%v: stdout %q", args, r.Stdout)
			}
			if left, _ := os.ReadDir(dir); len(left) > 0 {
				t.Errorf("%v: left %v in its folder", args, left)
			}
			if el > 5*time.Second {
				t.Errorf("%v took %v", args, el)
			}
		}
	}
}
