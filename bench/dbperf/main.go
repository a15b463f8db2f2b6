// Command dbperf measures how fast `etcdperf db` reads a large snapshot,
// and how much memory of its own it takes, side by side with etcd's own
// tool on the same file: `etcdutl snapshot status`, which also reads every
// key to hash it.
//
// It fills an etcd (embedded, in --dir) with --keys keys of --value bytes,
// saves a snapshot of it, stops it, builds etcdutl from the Go module
// proxy through the wrapper module bench/etcdutl (into --dir), then
// reads the snapshot --runs times with each tool in ABBA order (the file
// is in the page cache for both after the first read). Per read: the wall
// time, the peak resident memory, and the peak of the part that is the
// process's own (RssAnon: beyond the file's mapped pages, RssFile), polled
// from /proc every 10ms. It prints the medians, their ratios, and removes
// what it wrote.
//
//	go run ./bench/dbperf --keys 1000000 --value 800 --runs 3 --dir /var/tmp
//
// With --snapshot FILE it reads that file (filling one there first, and
// keeping it, when it does not exist).
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/units"
)

func main() {
	dir := flag.String("dir", os.TempDir(), "directory for the etcd, the snapshot and the binaries (on the disk to read from); run from the repository's root")
	keys := flag.Int("keys", 1000000, "keys in the snapshot")
	value := flag.Int("value", 800, "bytes of each value")
	runs := flag.Int("runs", 3, "reads per tool")
	keep := flag.String("snapshot", "", "read this snapshot; when it does not exist, fill one as --keys and --value say and keep it there (for runs to come)")
	flag.Parse()
	if err := run(*dir, *keys, *value, *runs, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "dbperf:", err)
		os.Exit(1)
	}
}

func run(dir string, keys, value, runs int, keep string) error {
	work, err := os.MkdirTemp(dir, "etcdperf-dbperf-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	snap := filepath.Join(work, "snap.db")
	if keep != "" {
		snap = keep
	}
	if _, err := os.Stat(snap); err != nil {
		start := time.Now()
		if err := fill(work, snap, keys, value); err != nil {
			return err
		}
		fmt.Printf("snapshot of %d keys of %d bytes written in %s\n", keys, value, time.Since(start).Round(time.Second))
	}
	fi, err := os.Stat(snap)
	if err != nil {
		return err
	}
	fmt.Printf("snapshot %s: %s\n", snap, units.Bytes(float64(fi.Size())))

	bin := filepath.Join(work, "bin")
	for _, c := range []struct{ dir, pkg, out string }{
		{".", "./cmd/etcdperf", "etcdperf"},
		{filepath.Join("bench", "etcdutl"), "go.etcd.io/etcd/etcdutl/v3", "etcdutl"},
	} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(bin, c.out), c.pkg)
		cmd.Dir = c.dir
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build %s in %s: %w", c.pkg, c.dir, err)
		}
	}
	tools := []struct {
		name string
		args []string
	}{
		{"etcdperf db", []string{filepath.Join(bin, "etcdperf"), "db", snap, "-o", "json"}},
		{"etcdutl snapshot status", []string{filepath.Join(bin, "etcdutl"), "snapshot", "status", snap, "-w", "json"}},
	}
	got := make([][]sample, len(tools))
	for i := range runs {
		order := []int{0, 1}
		if i%2 == 1 {
			order = []int{1, 0}
		}
		for _, t := range order {
			s, err := measure(tools[t].args)
			if err != nil {
				return fmt.Errorf("%s: %w", tools[t].name, err)
			}
			fmt.Printf("  %-24s %8s  peak RSS %9s  own (RssAnon) %9s\n", tools[t].name, s.wall.Round(time.Millisecond), units.Bytes(s.rss), units.Bytes(s.anon))
			got[t] = append(got[t], s)
		}
	}
	med := func(ss []sample, f func(sample) float64) float64 {
		var xs []float64
		for _, s := range ss {
			xs = append(xs, f(s))
		}
		sort.Float64s(xs)
		return xs[len(xs)/2]
	}
	wall := func(s sample) float64 { return s.wall.Seconds() }
	rss := func(s sample) float64 { return s.rss }
	anon := func(s sample) float64 { return s.anon }
	for i, t := range tools {
		fmt.Printf("%-24s median %s, peak RSS %s, own %s (%.0f%% of the file)\n", t.name, units.Seconds(med(got[i], wall)),
			units.Bytes(med(got[i], rss)), units.Bytes(med(got[i], anon)), 100*med(got[i], anon)/float64(fi.Size()))
	}
	fmt.Printf("etcdperf db / etcdutl snapshot status: time %.2fx, peak RSS %.2fx, own memory %.2fx\n",
		med(got[0], wall)/med(got[1], wall), med(got[0], rss)/med(got[1], rss), med(got[0], anon)/med(got[1], anon))
	return nil
}

// fill writes keys into an embedded etcd in work and saves its snapshot
// to snap.
func fill(work, snap string, keys, value int) error {
	ctx := context.Background()
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	m, err := lab.StartMember(ctx, lab.MemberConfig{Name: "dbperf", DataDir: filepath.Join(work, "etcd"),
		ClientURL: "http://127.0.0.1:" + strconv.Itoa(ports[0]), PeerURL: "http://127.0.0.1:" + strconv.Itoa(ports[1]), QuotaBackendBytes: 8 << 30})
	if err != nil {
		return err
	}
	defer m.Close()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{m.Config().ClientURL}, DialTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer cli.Close()
	val := strings.Repeat("v", value)
	const perTxn, workers = 100, 8
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for first := w * perTxn; first < keys; first += workers * perTxn {
				var ops []clientv3.Op
				for k := first; k < min(keys, first+perTxn); k++ {
					ops = append(ops, clientv3.OpPut(fmt.Sprintf("/registry/configmaps/ns%d/cm%07d", k%100, k), val))
				}
				if _, err := cli.Txn(ctx).Then(ops...).Commit(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	rc, err := cli.Snapshot(ctx)
	if err != nil {
		return err
	}
	defer rc.Close()
	f, err := os.Create(snap)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, rc); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// sample is one read: its wall time, its peak resident memory and the
// peak of its own part (RssAnon), in bytes.
type sample struct {
	wall      time.Duration
	rss, anon float64
}

// measure runs args, polling its memory every 10ms until it exits.
func measure(args []string) (sample, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout = io.Discard
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return sample{}, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var s sample
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			s.wall = time.Since(start)
			if err != nil {
				return s, fmt.Errorf("%w: %s", err, stderr.String())
			}
			return s, nil
		case <-tick.C:
			rss, anon := memory(cmd.Process.Pid)
			s.rss, s.anon = max(s.rss, rss), max(s.anon, anon)
		}
	}
}

// memory reads a process's VmRSS and RssAnon from /proc, in bytes.
func memory(pid int) (rss, anon float64) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		kb, err := strconv.ParseFloat(fields[1], 64)
		if err != nil {
			continue
		}
		switch fields[0] {
		case "VmRSS:":
			rss = kb * 1024
		case "RssAnon:":
			anon = kb * 1024
		}
	}
	return rss, anon
}

// freePorts returns n loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
