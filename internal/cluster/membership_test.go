package cluster_test

import (
	"context"
	"fmt"
	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/lab"
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
	tg, err := lab.Open(ctx, lab.TargetOptions{DataDir: t.TempDir(), RunID: "discover"})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	up := tg.Members()[0].ClientURL
	down := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))
	d, err := cluster.Discover(ctx, cluster.ConnOptions{Endpoints: []string{down, up}, DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Members) != 1 || d.Members[0].Name != "etcdperf-1" || !d.Members[0].Leader || d.Members[0].MetricsURL != up+"/metrics" || d.Version == "" || len(d.Notes) != 0 {
		t.Errorf("discovered %+v", d)
	}
	if len(d.Unreachable) != 1 {
		t.Fatalf("unreachable %v", d.Unreachable)
	}
	wantReason(t, "the endpoint down", d.Unreachable[0], cluster.Unreachable, down)
	resp, err := d.HTTP.Get(d.Members[0].MetricsURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	_, err = cluster.Discover(ctx, cluster.ConnOptions{Endpoints: []string{down}, DialTimeout: time.Second})
	wantReason(t, "no endpoint up", err, cluster.Unreachable, down)
	if _, err := cluster.Discover(ctx, cluster.ConnOptions{Endpoints: []string{"nohost"}}); err == nil || !strings.Contains(err.Error(), "want host:port") {
		t.Errorf("a bad endpoint: %v", err)
	}
}
