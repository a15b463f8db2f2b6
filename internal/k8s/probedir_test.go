package k8s

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestProbeDirBesideEtcd(t *testing.T) {
	parent := t.TempDir()
	etcd := filepath.Join(parent, "etcd")
	if err := os.Mkdir(etcd, 0o700); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, ProbeDirName)
	pd, err := CreateProbeDir(dir, etcd)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
		t.Fatalf("probe dir: %v %v", st, err)
	}
	if pd.Path != dir || !strings.Contains(pd.Device, ":") {
		t.Errorf("ProbeDir %+v", pd)
	}
	// A second run on the same node uses it as it is.
	pd2, err := CreateProbeDir(dir, etcd)
	if err != nil {
		t.Fatalf("existing directory: %v", err)
	}
	// While the other run's file is there, the directory stays.
	f := filepath.Join(dir, ".etcdperf-probe-other")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := pd2.Remove(); !errors.Is(err, ErrNotEmpty) || !strings.Contains(err.Error(), dir) {
		t.Errorf("Remove of a busy directory: %v, want ErrNotEmpty naming it", err)
	}
	if _, err := os.Stat(f); err != nil {
		t.Errorf("another run's file was removed: %v", err)
	}
	os.Remove(f)
	if err := pd.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("probe dir still there: %v", err)
	}
	if err := pd.Remove(); err != nil {
		t.Errorf("second Remove: %v", err)
	}
	// etcd's directory was never touched.
	if ents, _ := os.ReadDir(etcd); len(ents) > 0 {
		t.Errorf("files in etcd's dir: %v", ents)
	}
}

func TestProbeDirRefuses(t *testing.T) {
	parent := t.TempDir()
	etcd := filepath.Join(parent, "etcd")
	os.Mkdir(etcd, 0o700)

	// A symbolic link could send the probe's writes anywhere.
	link := filepath.Join(parent, "link", ProbeDirName)
	os.Mkdir(filepath.Dir(link), 0o755)
	if err := os.Symlink(etcd, link); err != nil {
		t.Fatal(err)
	}
	if _, err := CreateProbeDir(link, etcd); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("symlink: %v", err)
	}
	// A file in the way.
	file := filepath.Join(parent, "file")
	os.WriteFile(file, nil, 0o600)
	if _, err := CreateProbeDir(file, etcd); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("file: %v", err)
	}
	// No etcd data dir here: a wrong node or a wrong --etcd-data-dir.
	dir := filepath.Join(parent, ProbeDirName)
	if _, err := CreateProbeDir(dir, filepath.Join(parent, "missing")); err == nil || !strings.Contains(err.Error(), "--etcd-data-dir") {
		t.Errorf("missing data dir: %v", err)
	}
	// A missing parent.
	if _, err := CreateProbeDir(filepath.Join(parent, "no", "such"), ""); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing parent: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused run created %s", dir)
	}
}

// TestProbeDirOtherDisk is the case of an etcd data dir that is a mount of
// its own: the parent is another file system, and probing it would measure
// the wrong disk.
func TestProbeDirOtherDisk(t *testing.T) {
	parent := t.TempDir()
	other := "/dev/shm"
	var a, b unix.Stat_t
	if unix.Stat(parent, &a) != nil || unix.Stat(other, &b) != nil || a.Dev == b.Dev {
		t.Skipf("skipped: needs %s on another file system than %s", other, parent)
	}
	dir := filepath.Join(parent, ProbeDirName)
	_, err := CreateProbeDir(dir, other)
	if err == nil || !strings.Contains(err.Error(), "another disk than etcd's") || !strings.Contains(err.Error(), "--host-dir") {
		t.Fatalf("got %v, want a refusal that points to --host-dir", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("created %s although it would measure another disk", dir)
	}
}
