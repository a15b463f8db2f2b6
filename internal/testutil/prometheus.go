package testutil

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Prometheus is a real Prometheus server (the Debian package's binary)
// that a test started on 127.0.0.1.
type Prometheus struct {
	URL string
	// User and Password are the basic-auth credentials the server
	// requires, when it was started with some.
	User, Password string
}

// PrometheusOptions configure StartPrometheus.
type PrometheusOptions struct {
	// Interval is the scrape interval (and timeout); 1s when zero.
	Interval time.Duration
	// Jobs maps a job name to its static targets (host:port).
	Jobs map[string][]string
	// ScrapeSelf adds the job "prometheus" scraping the server itself.
	ScrapeSelf bool
	// BasicAuth, when set, is "user:bcrypt-hash": the server then asks
	// for these credentials on every request (its --web.config.file).
	BasicAuth string
	// Password is the clear password of BasicAuth, used to poll readiness.
	Password string
}

// StartPrometheus starts a Prometheus server for the test with its TSDB
// in a temporary directory, and stops it (and removes the directory) at
// the end of the test. It skips the test when prometheus is not installed
// (.ci/run installs the Debian package).
func StartPrometheus(t testing.TB, o PrometheusOptions) *Prometheus {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus is not installed (apt-get install prometheus): skipping the tests against a real Prometheus")
	}
	if o.Interval == 0 {
		o.Interval = time.Second
	}
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "prometheus.yml")
	writeConfig := func(self string) {
		var cfg strings.Builder
		fmt.Fprintf(&cfg, "global:\n  scrape_interval: %s\n  scrape_timeout: %s\nscrape_configs:\n", o.Interval, o.Interval)
		jobs := maps.Clone(o.Jobs)
		if o.ScrapeSelf {
			if jobs == nil {
				jobs = map[string][]string{}
			}
			jobs["prometheus"] = []string{self}
		}
		for _, job := range slices.Sorted(maps.Keys(jobs)) {
			fmt.Fprintf(&cfg, "  - job_name: %q\n", job)
			if job == "prometheus" && o.BasicAuth != "" {
				user, _, _ := strings.Cut(o.BasicAuth, ":")
				fmt.Fprintf(&cfg, "    basic_auth:\n      username: %q\n      password: %q\n", user, o.Password)
			}
			cfg.WriteString("    static_configs:\n      - targets: [")
			for i, tg := range jobs[job] {
				if i > 0 {
					cfg.WriteString(", ")
				}
				fmt.Fprintf(&cfg, "%q", tg)
			}
			cfg.WriteString("]\n")
		}
		if err := os.WriteFile(cfgPath, []byte(cfg.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p := &Prometheus{}
	args := []string{"--config.file=" + cfgPath, "--storage.tsdb.path=" + filepath.Join(dir, "data"), "--log.level=warn"}
	if o.BasicAuth != "" {
		user, hash, _ := strings.Cut(o.BasicAuth, ":")
		web := filepath.Join(dir, "web.yml")
		if err := os.WriteFile(web, fmt.Appendf(nil, "basic_auth_users:\n  %s: %q\n", user, hash), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--web.config.file="+web)
		p.User, p.Password = user, o.Password
	}
	// The port may be taken between FreePort and the server's bind: try a
	// few ports.
	for attempt := 0; attempt < 3; attempt++ {
		port := FreePort(t)
		addr := "127.0.0.1:" + strconv.Itoa(port)
		p.URL = "http://" + addr
		writeConfig(addr)
		cmd := exec.Command(bin, append(args, "--web.listen-address="+addr)...)
		var logs strings.Builder
		cmd.Stdout, cmd.Stderr = &logs, &logs
		exited, stop, err := startServer(cmd, 10*time.Second, nil)
		if err != nil {
			t.Fatalf("start prometheus: %v", err)
		}
		if p.waitReady(exited, 30*time.Second) {
			t.Cleanup(stop)
			return p
		}
		stop()
		if !strings.Contains(logs.String(), "address already in use") {
			t.Fatalf("prometheus did not become ready:\n%s", logs.String())
		}
	}
	t.Fatal("prometheus: no free port after 3 tries")
	return nil
}

func (p *Prometheus) waitReady(exited <-chan error, timeout time.Duration) bool {
	return pollReady(exited, timeout, 100*time.Millisecond, func() bool {
		req, _ := http.NewRequest(http.MethodGet, p.URL+"/-/ready", nil)
		if p.User != "" {
			req.SetBasicAuth(p.User, p.Password)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// pollReady asks ready every interval until it says yes (true), the
// server exits or the timeout passes (false).
func pollReady(exited <-chan error, timeout, interval time.Duration, ready func() bool) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		if ready() {
			return true
		}
		time.Sleep(interval)
	}
	return false
}

// Query evaluates an instant PromQL query and returns the values of its
// series by their instance label ("" when absent).
func (p *Prometheus) Query(ctx context.Context, expr string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+"/api/v1/query?query="+url.QueryEscape(expr), nil)
	if err != nil {
		return nil, err
	}
	if p.User != "" {
		req.SetBasicAuth(p.User, p.Password)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("query %s: %w", expr, err)
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", expr, body.Error)
	}
	out := map[string]float64{}
	for _, r := range body.Data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("query %s: value %v", expr, r.Value[1])
		}
		out[r.Metric["instance"]] = v
	}
	return out, nil
}

// WaitFor polls an instant query until ok accepts its result, for at most
// timeout; it fails the test when that does not happen.
func (p *Prometheus) WaitFor(t testing.TB, timeout time.Duration, expr string, ok func(map[string]float64) bool) map[string]float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last map[string]float64
	var lastErr error
	for {
		last, lastErr = p.Query(ctx, expr)
		if lastErr == nil && ok(last) {
			return last
		}
		select {
		case <-ctx.Done():
			t.Fatalf("prometheus: %s did not reach the expected value within %s: last %v, %v", expr, timeout, last, lastErr)
			return nil
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// startServer starts a server process that dies with the test process.
// exited receives its end (after done runs); stop ends it: SIGTERM, then
// SIGKILL after grace.
func startServer(cmd *exec.Cmd, grace time.Duration, done func()) (exited <-chan error, stop func(), err error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	ch := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		if done != nil {
			done()
		}
		ch <- err
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-ch:
			case <-time.After(grace):
				cmd.Process.Kill()
				<-ch
			}
		})
	}
	return ch, stop, nil
}
