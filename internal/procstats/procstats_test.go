package procstats

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseSchedstat(t *testing.T) {
	run, wait, slices, err := ParseSchedstat("5281096 9280451 4\n")
	if err != nil || run != 5281096 || wait != 9280451 || slices != 4 {
		t.Fatalf("%v %v %v %v", run, wait, slices, err)
	}
	for _, bad := range []string{"", "1 2", "1 x 3", "-1 2 3"} {
		if _, _, _, err := ParseSchedstat(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// This process's threads: the CPU time schedstat counts is the CPU time
// the kernel's rusage counts for the process, and the rates over an
// interval are CPU seconds per second. (However busy the machine: the
// comparison is of two accounts of the same time.)
func TestReadSchedSelf(t *testing.T) {
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	a, err := Host.ReadSched(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if a.Threads < 1 || a.Slices == 0 {
		t.Fatalf("%+v", a)
	}
	burn(200 * time.Millisecond)
	b, err := Host.ReadSched(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := func(r syscall.Rusage) time.Duration {
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	ran, used := b.Run-a.Run, cpu(ru1)-cpu(ru0)
	if ran <= 0 || used <= 0 || ran > used*12/10+20*time.Millisecond || used > ran*12/10+20*time.Millisecond {
		t.Errorf("schedstat counts %v on a CPU, rusage %v", ran, used)
	}
	r := SchedBetween(a, b)
	if r.CPU <= 0 || r.CPU > float64(b.Threads) || r.Wait < 0 || r.WaitPerSlice < 0 {
		t.Errorf("rates %+v", r)
	}
	if got := SchedBetween(b, a); got.CPU != 0 || got.Wait != 0 {
		t.Errorf("a later read first gave %+v, want zeros", got)
	}
	if _, err := Host.ReadSched(1 << 30); err == nil {
		t.Error("a process that does not exist was read")
	}
}

func burn(d time.Duration) {
	end := time.Now().Add(d)
	x := 0
	for time.Now().Before(end) {
		x++
	}
	_ = x
}

func TestParseListeners(t *testing.T) {
	for _, c := range []struct {
		file string
		want []string
	}{
		{"tcp", []string{"127.0.0.1:42705/50738", "0.0.0.0:2024/1611"}},
		{"tcp6", []string{":::2384/23456", "::1:2385/23457"}},
	} {
		f, err := os.Open(filepath.Join("testdata", c.file))
		if err != nil {
			t.Fatal(err)
		}
		ls, err := ParseListeners(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range ls {
			got = append(got, l.IP.String()+":"+strconv.Itoa(l.Port)+"/"+l.Inode)
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: %v, want %v", c.file, got, c.want)
		}
	}
	if _, err := ParseListeners(strings.NewReader("0: 0100007X:A6D1 00000000:0000 0A 0 0 0 0 0 1 0\n")); err == nil {
		t.Error("a bad address was accepted")
	}
}

// The process that listens on a loopback port is found: this one, on its
// own address and through a wildcard listener; a port nobody listens on
// is not.
func TestListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pid, err := Host.Listener(ln.Addr().String())
	if err != nil || pid != os.Getpid() {
		t.Fatalf("pid %d, err %v; want %d", pid, err, os.Getpid())
	}
	any, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer any.Close()
	port := any.Addr().(*net.TCPAddr).Port
	if pid, err := Host.Listener("localhost:" + strconv.Itoa(port)); err != nil || pid != os.Getpid() {
		t.Errorf("wildcard listener: pid %d, err %v", pid, err)
	}
	free, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := free.Addr().String()
	free.Close()
	if _, err := Host.Listener(addr); !errors.Is(err, ErrNotFound) {
		t.Errorf("a closed port: %v, want ErrNotFound", err)
	}
}

func TestIsLoopback(t *testing.T) {
	for h, want := range map[string]bool{"127.0.0.1": true, "127.0.0.2": true, "::1": true, "localhost": true,
		"10.0.0.1": false, "etcd-0.example": false, "": false} {
		if IsLoopback(h) != want {
			t.Errorf("IsLoopback(%q) = %v", h, !want)
		}
	}
}

// A process with a WAL and a database open: the files and the data dir
// are found from its file descriptors.
func TestOpenEtcdFiles(t *testing.T) {
	dir := t.TempDir()
	wal := filepath.Join(dir, "member", "wal")
	snap := filepath.Join(dir, "member", "snap")
	for _, d := range []string{wal, snap} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Host.OpenEtcdFiles(os.Getpid()); err == nil {
		t.Fatal("a process without etcd's files was taken for a member")
	}
	for _, p := range []string{filepath.Join(wal, "0000000000000000-0000000000000000.wal"), filepath.Join(snap, "db")} {
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
	}
	f, err := Host.OpenEtcdFiles(os.Getpid())
	if err != nil || f.WALDir != wal || f.DataDir() != dir {
		t.Errorf("%+v (data dir %q), %v", f, f.DataDir(), err)
	}
}

// This process's resident memory: more than the 64 MiB it has just
// touched, less than the host's; a process that is gone is an error.
func TestRSSSelf(t *testing.T) {
	buf := make([]byte, 64<<20)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
	rss, err := Host.RSS(os.Getpid())
	if err != nil || rss < 64<<20 {
		t.Fatalf("rss %g, %v; want at least 64 MiB", rss, err)
	}
	runtime.KeepAlive(buf)
	if _, err := Host.RSS(1 << 30); err == nil {
		t.Error("the memory of a process that does not exist")
	}
}
