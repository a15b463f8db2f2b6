package cluster

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/testutil"
)

// Discover needs one endpoint to answer: the others are reported, and the
// members come from the one that answered. With none answering it fails
// as Connect does.
func TestDiscoverWithAnEndpointDown(t *testing.T) {
	ctx := context.Background()
	tg, err := Open(ctx, TargetOptions{DataDir: t.TempDir(), RunID: "discover"})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	up := tg.Members()[0].ClientURL
	down := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))
	d, err := Discover(ctx, ConnOptions{Endpoints: []string{down, up}, DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Members) != 1 || d.Members[0].Name != "etcdperf-1" || !d.Members[0].Leader || d.Members[0].MetricsURL != up+"/metrics" || d.Version == "" || len(d.Notes) != 0 {
		t.Errorf("discovered %+v", d)
	}
	if len(d.Unreachable) != 1 {
		t.Fatalf("unreachable %v", d.Unreachable)
	}
	wantReason(t, "the endpoint down", d.Unreachable[0], Unreachable, down)
	resp, err := d.HTTP.Get(d.Members[0].MetricsURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	_, err = Discover(ctx, ConnOptions{Endpoints: []string{down}, DialTimeout: time.Second})
	wantReason(t, "no endpoint up", err, Unreachable, down)
	if _, err := Discover(ctx, ConnOptions{Endpoints: []string{"nohost"}}); err == nil || !strings.Contains(err.Error(), "want host:port") {
		t.Errorf("a bad endpoint: %v", err)
	}
}
