// Command diskparity measures how closely `etcdperf disk` agrees with fio.
//
// It alternates the two on one directory (ABBA order, so that neither always
// runs first after the other's file was deleted), with the same size and
// block size, lets the file system settle between runs (sync, then a
// pause: on a mount with "discard", freeing the previous run's blocks
// slows the next run's first journal commits), and prints the median ratio
// of their fdatasync p99 and p50.
//
//	go run ./bench/diskparity --dir /var/lib/etcd-test --pairs 5
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	"github.com/etcdperf/etcdperf/internal/fio"
	"github.com/etcdperf/etcdperf/internal/result"
)

func main() {
	dir := flag.String("dir", ".", "directory on the storage to measure")
	pairs := flag.Int("pairs", 5, "number of probe/fio pairs")
	size := flag.String("size", "22m", "bytes per run, as fio's --size")
	bs := flag.Int("bs", 2300, "block size, as fio's --bs")
	settle := flag.Duration("settle", 2*time.Second, "pause between runs")
	flag.Parse()
	if err := run(*dir, *pairs, *size, *bs, *settle); err != nil {
		fmt.Fprintln(os.Stderr, "diskparity:", err)
		os.Exit(2)
	}
}

func run(dir string, pairs int, size string, bs int, settle time.Duration) error {
	if _, err := exec.LookPath("fio"); err != nil {
		return fio.ErrNotInstalled
	}
	tmp, err := os.MkdirTemp("", "diskparity-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "etcdperf")
	build := exec.Command("go", "build", "-o", bin, "./cmd/etcdperf")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build etcdperf (run from the repository root): %v\n%s", err, out)
	}
	fmt.Printf("dir=%s size=%s bs=%d pairs=%d\n", dir, size, bs, pairs)
	fmt.Printf("%-5s %12s %12s %8s %12s %12s %8s\n", "pair", "probe p99", "fio p99", "ratio", "probe p50", "fio p50", "ratio")
	var r99, r50 []float64
	for i := 0; i < pairs; i++ {
		var p, f *result.Latency
		order := []string{"probe", "fio"}
		if i%2 == 1 {
			order = []string{"fio", "probe"}
		}
		for _, which := range order {
			settleFS(settle)
			var err error
			if which == "probe" {
				p, err = probe(bin, dir, size, bs)
			} else {
				f, err = runFio(dir, size, bs)
			}
			if err != nil {
				return err
			}
		}
		r99 = append(r99, p.P99/f.P99)
		r50 = append(r50, p.P50/f.P50)
		fmt.Printf("%-5d %10.1fµs %10.1fµs %8.3f %10.1fµs %10.1fµs %8.3f\n", i+1, p.P99*1e6, f.P99*1e6, p.P99/f.P99, p.P50*1e6, f.P50*1e6, p.P50/f.P50)
	}
	m99, m50 := median(r99), median(r50)
	fmt.Printf("median ratio probe/fio: p99 %.3f, p50 %.3f\n", m99, m50)
	if m99 < 0.90 || m99 > 1.10 {
		fmt.Println("p99 ratio is OUTSIDE 0.90-1.10")
		os.Exit(1)
	}
	fmt.Println("p99 ratio is within 0.90-1.10")
	return nil
}

func settleFS(d time.Duration) {
	_ = exec.Command("sync").Run()
	time.Sleep(d)
}

func probe(bin, dir, size string, bs int) (*result.Latency, error) {
	out, err := exec.Command(bin, "disk", "--dir", dir, "--size", size, "--bs", fmt.Sprint(bs), "--runtime", "0", "-o", "json").Output()
	if err != nil && len(out) == 0 {
		return nil, fmt.Errorf("etcdperf disk: %w", err)
	}
	res, derr := result.Decode(bytes.NewReader(out))
	if derr != nil {
		return nil, derr
	}
	return res.Disk.SyncLatency, nil
}

// runFio runs fio exactly as the field write-ups do.
func runFio(dir, size string, bs int) (*result.Latency, error) {
	name := fmt.Sprintf("diskparity-%d", time.Now().UnixNano())
	defer os.Remove(filepath.Join(dir, name))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "fio", "--rw=write", "--ioengine=sync", "--fdatasync=1",
		"--directory="+dir, "--filename="+name, "--size="+size, fmt.Sprintf("--bs=%d", bs), "--name=diskparity",
		"--output-format=json").Output()
	if err != nil {
		return nil, fmt.Errorf("fio: %w", err)
	}
	rep, err := fio.Parse(out)
	if err != nil {
		return nil, err
	}
	l := rep.Jobs[0].Sync.Lat.Latency()
	return l, nil
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
