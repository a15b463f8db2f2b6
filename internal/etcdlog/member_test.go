package etcdlog

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
)

// A member's log file is read from the time given on, and the params say
// where it came from; a file that cannot be read is said in the params
// and gives no logs; a member with neither a file nor a unit is not read.
func TestMemberLogReadSince(t *testing.T) {
	since := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	lines := []string{
		`{"level":"warn","ts":"2026-11-22T07:59:00Z","caller":"etcdserver/util.go:170","msg":"apply request took too long","took":"201ms"}`,
		`{"level":"warn","ts":"2026-11-22T08:01:00Z","caller":"etcdserver/util.go:170","msg":"apply request took too long","took":"180ms"}`,
		`{"level":"warn","ts":"2026-11-22T08:02:00Z","caller":"etcdserver/util.go:170","msg":"apply request took too long","took":"150ms"}`,
	}
	path := filepath.Join(t.TempDir(), "etcd.log")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var p result.NodeLogParams
	logs := MemberLog{File: path}.ReadSince(context.Background(), since, &p)
	if logs == nil || p.LogFile != path || p.LogError != "" || p.LogJournal != "" {
		t.Fatalf("a log file: logs %v, params %+v", logs, p)
	}
	if n := logs.Classes[SlowApply.ID()]; n != 2 {
		t.Errorf("slow applies since %s: %d, want 2 (the one before is left out)", since, n)
	}

	var missing result.NodeLogParams
	gone := filepath.Join(t.TempDir(), "nothing.log")
	if logs := (MemberLog{File: gone}).ReadSince(context.Background(), since, &missing); logs != nil || missing.LogFile != gone || !strings.Contains(missing.LogError, "nothing.log") {
		t.Errorf("a missing file: logs %v, params %+v", logs, missing)
	}

	var none result.NodeLogParams
	if logs := (MemberLog{}).ReadSince(context.Background(), since, &none); logs != nil || none != (result.NodeLogParams{}) {
		t.Errorf("no file, no unit: logs %v, params %+v", logs, none)
	}
}
