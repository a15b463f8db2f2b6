package etcdlog

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// A journal is read with journalctl from the node's root, its lines named
// after the member; a journalctl that cannot start says so and has
// nothing to wait for.
func TestOpenJournal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	since := time.Unix(1700000000, 0)
	if _, err := exec.LookPath("journalctl"); err != nil {
		t.Skip("skipped: journalctl is missing here (apt-get install systemd)")
	}
	root := t.TempDir()
	j, err := OpenJournal(ctx, "etcd", root, "m1", since)
	if err != nil {
		t.Fatal(err)
	}
	if want := "journalctl --root " + root + " -u etcd -o json --no-pager -q --since @1700000000"; j.Source != want {
		t.Errorf("source %q, want %q", j.Source, want)
	}
	if len(j.Inputs) != 1 || j.Inputs[0].Member != "m1" {
		t.Errorf("inputs %+v, want the journal's lines as member m1's", j.Inputs)
	}
	if err := j.Wait(); err != nil {
		t.Errorf("an empty journal: %v", err)
	}

	t.Setenv("PATH", t.TempDir())
	j, err = OpenJournal(ctx, "etcd", "/", "", since)
	if err == nil || !strings.Contains(err.Error(), "read the member's journal") || strings.Contains(j.Source, "--root") {
		t.Errorf("without journalctl: %v, source %q", err, j.Source)
	}
	if err := j.Wait(); err != nil {
		t.Errorf("wait for a journalctl that did not start: %v", err)
	}
}
