// Command logsperf measures how fast `etcdperf logs` reads a large etcd
// log, side by side with what operators run today: grep counting the
// "took too long" warnings in the same file.
//
// It writes a synthetic log of a loaded cluster (testutil.WriteEtcdLog:
// zap JSON and capnslog lines shaped like real ones) of --size bytes into
// --dir, reads it --runs times with each tool in ABBA order (the file is in
// the page cache for both after the first read), prints the throughput of
// each and their median ratio, and removes the file.
//
//	go run ./bench/logsperf --size 1g --runs 3
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"time"

	"github.com/etcdperf/etcdperf/internal/etcdlog"
	"github.com/etcdperf/etcdperf/internal/pipeline"
	"github.com/etcdperf/etcdperf/internal/testutil"
	"github.com/etcdperf/etcdperf/internal/units"
)

func main() {
	dir := flag.String("dir", os.TempDir(), "directory for the generated log")
	size := flag.String("size", "1g", "size of the generated log (k, m, g)")
	runs := flag.Int("runs", 3, "reads per tool")
	flag.Parse()
	n, err := units.ParseSize(*size)
	if err == nil {
		err = run(*dir, n, *runs)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "logsperf:", err)
		os.Exit(2)
	}
}

func run(dir string, size int64, runs int) error {
	if _, err := exec.LookPath("grep"); err != nil {
		return fmt.Errorf("grep is needed for the comparison: %w", err)
	}
	f, err := os.CreateTemp(dir, ".etcdperf-logsperf-*.log")
	if err != nil {
		return err
	}
	path := f.Name()
	defer os.Remove(path)
	w := bufio.NewWriterSize(f, 1<<20)
	lines, err := testutil.WriteEtcdLog(w, size)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	mb := float64(st.Size()) / 1e6
	fmt.Printf("%s: %d lines, %.0f MB\n", path, lines, mb)

	etcdperf := func() (time.Duration, error) {
		start := time.Now()
		res, err := pipeline.Logs(context.Background(), pipeline.LogsOptions{Paths: []string{path},
			Scan: etcdlog.ScanOptions{Summary: etcdlog.SummaryOptions{MaxEvents: 1000}}})
		if err != nil {
			return 0, err
		}
		if res.Logs.Lines != lines || res.Logs.Unparsed != 0 {
			return 0, fmt.Errorf("etcdperf read %d lines (%d unparsed), %d written", res.Logs.Lines, res.Logs.Unparsed, lines)
		}
		return time.Since(start), nil
	}
	grep := func() (time.Duration, error) {
		start := time.Now()
		out, err := exec.Command("grep", "-c", "took too long", path).Output()
		if err != nil || len(out) < 2 {
			return 0, fmt.Errorf("grep: %v %q", err, out)
		}
		return time.Since(start), nil
	}
	var ours, theirs []float64
	for i := 0; i < runs; i++ {
		order := []func() (time.Duration, error){etcdperf, grep}
		if i%2 == 1 {
			order = []func() (time.Duration, error){grep, etcdperf}
		}
		for j, fn := range order {
			d, err := fn()
			if err != nil {
				return err
			}
			isOurs := (i%2 == 0) == (j == 0)
			name := "grep -c     "
			if isOurs {
				name = "etcdperf logs"
				ours = append(ours, d.Seconds())
			} else {
				theirs = append(theirs, d.Seconds())
			}
			fmt.Printf("run %d %s %7.2fs %7.0f MB/s\n", i+1, name, d.Seconds(), mb/d.Seconds())
		}
	}
	mo, mt := median(ours), median(theirs)
	fmt.Printf("median: etcdperf logs %.0f MB/s (%.1fs), grep -c %.0f MB/s (%.1fs); etcdperf/grep time ratio %.2f\n",
		mb/mo, mo, mb/mt, mt, mo/mt)
	fmt.Printf("at this rate 1 GB takes %.1fs\n", 1000/(mb/mo))
	return nil
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}
