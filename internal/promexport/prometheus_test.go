package promexport

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/etcdperf/etcdperf/internal/testutil"
)

// TestAgainstRealPrometheus runs the client against a real Prometheus
// (the Debian package) that requires basic auth and scrapes itself and a
// short-lived target: a target that stops makes Prometheus mark its series
// stale, a real gap that the table must keep aligned.
func TestAgainstRealPrometheus(t *testing.T) {
	var stopped atomic.Bool
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if stopped.Load() {
			http.Error(w, "gone", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "# TYPE demo_gauge gauge\ndemo_gauge{kind=\"a,b\"} 7\n")
	}))
	defer target.Close()

	pw := make([]byte, 12)
	rand.Read(pw)
	password := hex.EncodeToString(pw)
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	prom := testutil.StartPrometheus(t, testutil.PrometheusOptions{
		Jobs:       map[string][]string{"demo": {strings.TrimPrefix(target.URL, "http://")}},
		ScrapeSelf: true,
		BasicAuth:  "tester:" + string(hash),
		Password:   password,
	})
	start := time.Now()
	// A few scrapes of the target, then it stops answering.
	prom.WaitFor(t, 20*time.Second, `sum(count_over_time(demo_gauge[1m]))`, func(m map[string]float64) bool { return m[""] >= 3 })
	stopped.Store(true)
	stoppedAt := float64(time.Now().UnixMilli()) / 1000
	prom.WaitFor(t, 20*time.Second, `sum(count_over_time(up{job="demo"}[1m]) - sum_over_time(up{job="demo"}[1m]))`, func(m map[string]float64) bool { return m[""] >= 3 })

	c, err := New(Options{URL: prom.URL, User: "tester", Password: password, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r := Resolved{Start: start.Add(-2 * time.Second), End: time.Now(), Step: time.Second}
	qs := []Query{{Name: "demo", Expr: "demo_gauge"}, {Name: "up", Expr: "up"}, {Name: "none", Expr: "no_such_metric"}}
	answers, err := c.Fetch(ctx, qs, r)
	if err != nil {
		t.Fatal(err)
	}
	sec, err := Section(c.URL(), r, answers)
	if err != nil {
		t.Fatal(err)
	}
	tb := sec.Table
	col := map[string]int{}
	for j, c := range tb.Columns {
		col[c.Name] = j
	}
	demo, ok := col[`demo{instance=`+strings.TrimPrefix(target.URL, "http://")+`,job=demo,kind="a,b"}`]
	upDemo, ok2 := col[`up{instance=`+strings.TrimPrefix(target.URL, "http://")+`,job=demo}`]
	upSelf, ok3 := col[`up{instance=`+strings.TrimPrefix(prom.URL, "http://")+`,job=prometheus}`]
	if !ok || !ok2 || !ok3 || len(tb.Columns) != 3 {
		t.Fatalf("columns %v", col)
	}
	if len(sec.Notes) != 1 || !strings.Contains(sec.Notes[0], "none returned no series") || sec.Queries[2].Series != 0 {
		t.Errorf("notes %v, queries %+v", sec.Notes, sec.Queries)
	}
	var values, gapsAfter, upZero int
	for i, row := range tb.Rows {
		if len(row) != len(tb.Columns) {
			t.Fatalf("row %d: %d cells for %d columns", i, len(row), len(tb.Columns))
		}
		if i > 0 && tb.Time[i]-tb.Time[i-1] != 1 {
			t.Errorf("rows %d and %d are %vs apart, want the 1s step", i-1, i, tb.Time[i]-tb.Time[i-1])
		}
		d := row[demo]
		if d.Present && d.V != 7 {
			t.Errorf("demo_gauge = %v at %v", d.V, tb.Time[i])
		}
		if d.Present {
			values++
		}
		// A scrape after the target stopped marks the series stale.
		if tb.Time[i] > stoppedAt+1.5 {
			if d.Present {
				t.Errorf("demo_gauge has a sample at %v, after its target stopped at %v", tb.Time[i], stoppedAt)
			}
			gapsAfter++
		}
		if row[upDemo].Present && row[upDemo].V == 0 {
			upZero++
			if d.Present {
				t.Errorf("demo_gauge has a sample at %v while its target was down", tb.Time[i])
			}
		}
		if !row[upSelf].Present && i > 2 {
			t.Errorf("the self-scrape has a gap at %v", tb.Time[i])
		}
	}
	if values < 3 || gapsAfter < 1 || upZero < 1 {
		t.Errorf("demo_gauge: %d values then %d gaps; up==0 at %d rows", values, gapsAfter, upZero)
	}

	t.Run("bad query shows Prometheus' error", func(t *testing.T) {
		_, err := c.Fetch(ctx, []Query{{Name: "bad", Expr: "rate(up[5m)"}}, r)
		var qe *QueryError
		if !errors.As(err, &qe) || qe.Type != "bad_data" || !strings.Contains(err.Error(), "parse error") || !strings.Contains(err.Error(), "rate(up[5m)") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("empty result", func(t *testing.T) {
		_, err := c.Fetch(ctx, []Query{{Name: "none", Expr: "no_such_metric"}}, r)
		if !errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), "none") {
			t.Errorf("error %v", err)
		}
		_, err = c.ReadHistory(ctx, HistoryOptions{Range: r, Window: time.Minute})
		if !errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), "etcd_server_has_leader") {
			t.Errorf("history without etcd: %v", err)
		}
	})
	t.Run("wrong password", func(t *testing.T) {
		bad, _ := New(Options{URL: prom.URL, User: "tester", Password: "not-" + password})
		_, err := bad.Fetch(ctx, qs[:1], r)
		if err == nil || !strings.Contains(err.Error(), "credentials refused") || strings.Contains(err.Error(), password) {
			t.Errorf("error %v", err)
		}
		anon, _ := New(Options{URL: prom.URL})
		if _, err := anon.Fetch(ctx, qs[:1], r); err == nil || !strings.Contains(err.Error(), "401") {
			t.Errorf("without credentials: %v", err)
		}
	})
	t.Run("not the API's base URL", func(t *testing.T) {
		wrong, _ := New(Options{URL: prom.URL + "/somewhere", User: "tester", Password: password})
		if _, err := wrong.Fetch(ctx, qs[:1], r); err == nil || !strings.Contains(err.Error(), "no Prometheus API") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		gone, _ := New(Options{URL: "http://127.0.0.1:" + fmt.Sprint(testutil.FreePort(t))})
		if _, err := gone.Fetch(ctx, qs[:1], r); err == nil || !strings.Contains(err.Error(), "connection refused") {
			t.Errorf("error %v", err)
		}
	})
}

// The bearer token goes in the Authorization header, and a refusal says
// which flags to check. (Prometheus itself cannot require a bearer token,
// so a plain HTTP server stands in for a proxy in front of it.)
func TestBearerToken(t *testing.T) {
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusForbidden)
	}))
	defer srv.Close()
	c, err := New(Options{URL: srv.URL, BearerToken: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Fetch(context.Background(), []Query{{Name: "up", Expr: "up"}}, Resolved{Start: time.Now().Add(-time.Minute), End: time.Now(), Step: time.Second})
	if got.Load() != "Bearer s3cret" {
		t.Errorf("Authorization %q", got.Load())
	}
	if err == nil || !strings.Contains(err.Error(), "--bearer-token-file") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error %v", err)
	}
	if _, err := New(Options{URL: srv.URL, BearerToken: "x", User: "u"}); err == nil {
		t.Error("both basic auth and a token accepted")
	}
}

func TestCheckURL(t *testing.T) {
	for _, ok := range []string{"http://prometheus:9090", "https://example.com/prometheus/", "http://127.0.0.1:9090"} {
		if _, err := CheckURL(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "prometheus:9090", "ftp://x", "http://", "http://u:p@host:9090", "http://host/api/v1", "http://host?x=1"} {
		if _, err := CheckURL(bad); err == nil {
			t.Errorf("%q accepted", bad)
		} else if strings.Contains(err.Error(), ":p@") {
			t.Errorf("%q: the error shows the password: %v", bad, err)
		}
	}
}

func TestReadToken(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if tok, err := ReadToken(write("ok", "  abc.def\n")); err != nil || tok != "abc.def" {
		t.Errorf("token %q, %v", tok, err)
	}
	for _, p := range []string{write("empty", " \n"), write("two", "a\nb\n"), dir + "/missing"} {
		if tok, err := ReadToken(p); err == nil {
			t.Errorf("%s accepted: %q", p, tok)
		}
	}
}

// https: the server's certificate is checked against --cacert, or not at
// all with --insecure-skip-tls-verify. (A plain TLS server stands in for a
// Prometheus behind TLS; it answers 404, which shows the handshake passed.)
func TestTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	srv.StartTLS()
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	r := Resolved{Start: time.Now().Add(-time.Minute), End: time.Now(), Step: time.Second}
	q := []Query{{Name: "up", Expr: "up"}}
	for _, o := range []Options{{URL: srv.URL, CACert: ca}, {URL: srv.URL, InsecureSkipVerify: true}} {
		c, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Fetch(context.Background(), q, r); err == nil || !strings.Contains(err.Error(), "no Prometheus API") {
			t.Errorf("%+v: %v", o, err)
		}
	}
	c, _ := New(Options{URL: srv.URL})
	if _, err := c.Fetch(context.Background(), q, r); err == nil || !strings.Contains(err.Error(), "--cacert") {
		t.Errorf("untrusted certificate: %v", err)
	}
	if _, err := New(Options{URL: srv.URL, CACert: filepath.Join(t.TempDir(), "missing.pem")}); err == nil {
		t.Error("a missing --cacert was accepted")
	}
}
