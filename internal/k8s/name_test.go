package k8s

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/etcdperf/etcdperf/internal/diskprobe"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/pipeline"
	"github.com/etcdperf/etcdperf/internal/result"
)

func TestNameResult(t *testing.T) {
	// A real Result of `etcdperf disk -o json`, of a small probe here.
	res, err := pipeline.Disk(context.Background(), pipeline.DiskOptions{
		Probe: diskprobe.Options{
			Dir: t.TempDir(), BlockSize: diskprobe.DefaultBlockSize, Size: 64 << 10, Prealloc: true,
			Sync: diskprobe.SyncFdatasync, RW: diskprobe.Sequential, Jobs: 1,
		},
		Engine: pipeline.EngineNative, Criteria: limits.Table,
	})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := result.Encode(&out, res); err != nil {
		t.Fatal(err)
	}
	orig := out.Bytes()
	named := NameResult(orig, "cp-1")
	var a, b map[string]any
	if err := json.Unmarshal(orig, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(named, &b); err != nil {
		t.Fatalf("named output is not JSON: %v\n%s", err, named)
	}
	if b["name"] != "cp-1" {
		t.Errorf("name %v", b["name"])
	}
	// Nothing else changed.
	delete(b, "name")
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the Result changed beyond its name:\n%s\n---\n%s", orig, named)
	}
	// Left as they are: no name asked, a Result with a name, text, two
	// Results, a JSON that is no Result.
	for _, c := range []struct{ out, name string }{
		{string(orig), ""},
		{string(named), "cp-2"},
		{"etcdperf disk: /var/lib/etcd-probe (ext4)\n", "cp-1"},
		{string(orig) + string(orig), "cp-1"},
		{`{"kind": "disk"}`, "cp-1"},
	} {
		if got := NameResult([]byte(c.out), c.name); string(got) != c.out {
			t.Errorf("NameResult(%.40q, %q) changed it to %.80q", c.out, c.name, got)
		}
	}
}
