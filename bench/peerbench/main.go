// Command peerbench compares `etcdperf bench put` with etcd's own benchmark
// tool (v3.6, built from the Go module proxy by the wrapper module in
// etcdbench/) on the field's seed workload:
//
//	put --key-size=8 --sequential-keys --val-size=256, 100 conns, 100 clients,
//	--target-leader, 200,000 requests
//
// against one etcd member on tmpfs (`etcdperf server` on /dev/shm), in ABBA
// order. It reports, as ratios etcdperf/benchmark (medians over the pairs),
// the client CPU seconds per 100k requests (user+system of the child
// process, from its rusage), the throughput, and the peak RSS; then the
// peak RSS of etcdperf at --big requests against that at --total.
//
//	go run ./bench/peerbench --pairs 3
//
// Targets (issue 3): CPU per 100k <= 0.5x the peer's, throughput >= the
// peer's, RSS at 2,000,000 requests within 10 MiB of RSS at 200,000.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type sample struct {
	cpu    time.Duration // user + system
	rss    int64         // bytes
	tput   float64       // requests per second
	errors int64
}

func main() {
	pairs := flag.Int("pairs", 3, "etcdperf/benchmark pairs, alternated ABBA")
	total := flag.Int("total", 200000, "requests per run")
	big := flag.Int("big", 2000000, "requests of etcdperf's memory run (0: skip)")
	shm := flag.String("dir", "/dev/shm", "tmpfs directory for etcd's data")
	flag.Parse()
	if err := run(*pairs, *total, *big, *shm); err != nil {
		fmt.Fprintln(os.Stderr, "peerbench:", err)
		os.Exit(2)
	}
}

func run(pairs, total, big int, shm string) error {
	tmp, err := os.MkdirTemp("", "peerbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ours := filepath.Join(tmp, "etcdperf")
	peer := filepath.Join(tmp, "benchmark")
	fmt.Println("building etcdperf and etcd's benchmark tool (v3.6 from the module proxy)...")
	if out, err := exec.Command("go", "build", "-o", ours, "./cmd/etcdperf").CombinedOutput(); err != nil {
		return fmt.Errorf("build etcdperf (run from the repository root): %v\n%s", err, out)
	}
	b := exec.Command("go", "build", "-o", peer, "go.etcd.io/etcd/v3/tools/benchmark")
	b.Dir = filepath.Join("bench", "peerbench", "etcdbench")
	if out, err := b.CombinedOutput(); err != nil {
		return fmt.Errorf("build etcd's benchmark: %v\n%s", err, out)
	}

	data, err := os.MkdirTemp(shm, "peerbench-etcd-")
	if err != nil {
		return fmt.Errorf("etcd's data on tmpfs: %w", err)
	}
	defer os.RemoveAll(data)
	ep, stop, err := startServer(ours, data)
	if err != nil {
		return err
	}
	defer stop()

	fmt.Printf("conditions: %d CPUs (GOMAXPROCS %d), etcd (etcdperf server, v3.7.3) on %s, %s\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), shm, loadavg())
	fmt.Printf("workload: put --key-size=8 --sequential-keys --val-size=256 --conns=100 --clients=100 --target-leader --total=%d\n\n", total)
	fmt.Printf("%-4s %-10s %10s %12s %12s %10s\n", "pair", "tool", "req/s", "CPU-s/100k", "peak RSS", "errors")
	var cpuR, tputR, rssR []float64
	for i := 0; i < pairs; i++ {
		order := []string{"etcdperf", "benchmark"}
		if i%2 == 1 {
			order = []string{"benchmark", "etcdperf"}
		}
		var o, p sample
		for _, tool := range order {
			var s sample
			var err error
			if tool == "etcdperf" {
				s, err = runOurs(ours, ep, total)
				o = s
			} else {
				s, err = runPeer(peer, ep, total)
				p = s
			}
			if err != nil {
				return err
			}
			fmt.Printf("%-4d %-10s %10.0f %12.2f %10.1f MiB %10d\n", i+1, tool, s.tput, per100k(s, total), float64(s.rss)/(1<<20), s.errors)
		}
		cpuR = append(cpuR, per100k(o, total)/per100k(p, total))
		tputR = append(tputR, o.tput/p.tput)
		rssR = append(rssR, float64(o.rss)/float64(p.rss))
	}
	fmt.Printf("\nmedians over %d pairs (etcdperf / benchmark):\n", pairs)
	fmt.Printf("  client CPU per 100k requests: %.2fx  (target <= 0.5x)\n", median(cpuR))
	fmt.Printf("  throughput:                   %.2fx  (target >= 1x)\n", median(tputR))
	fmt.Printf("  peak RSS:                     %.2fx\n", median(rssR))
	if big > 0 {
		small, err := runOurs(ours, ep, total)
		if err != nil {
			return err
		}
		large, err := runOurs(ours, ep, big)
		if err != nil {
			return err
		}
		d := float64(large.rss-small.rss) / (1 << 20)
		fmt.Printf("\netcdperf peak RSS: %.1f MiB at %d requests, %.1f MiB at %d: %+.1f MiB (target within 10 MiB), %.0f req/s at %d\n",
			float64(small.rss)/(1<<20), total, float64(large.rss)/(1<<20), big, d, large.tput, big)
	}
	return nil
}

func per100k(s sample, total int) float64 { return s.cpu.Seconds() * 100000 / float64(total) }

// startServer runs `etcdperf server` on dir and returns its endpoint.
func startServer(bin, dir string) (string, func(), error) {
	ports := make([]int, 2)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", nil, err
		}
		ports[i] = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	ep := fmt.Sprintf("127.0.0.1:%d", ports[0])
	cmd := exec.Command(bin, "server", "--data-dir", filepath.Join(dir, "member"),
		"--listen-client-url", "http://"+ep, "--listen-peer-url", fmt.Sprintf("http://127.0.0.1:%d", ports[1]),
		"--log-file", filepath.Join(dir, "etcd.log"), "--exit-with-parent")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "etcdperf-server ready") {
				ready <- true
				io.Copy(io.Discard, out)
				return
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			stop()
			return "", nil, errors.New("etcdperf server exited before it was ready")
		}
	case <-time.After(30 * time.Second):
		stop()
		return "", nil, errors.New("etcdperf server was not ready within 30s")
	}
	return ep, stop, nil
}

func measure(cmd *exec.Cmd) (sample, []byte, error) {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if cmd.ProcessState == nil {
		return sample{}, nil, err
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	s := sample{
		cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		rss: ru.Maxrss * 1024,
	}
	if err != nil {
		var ee *exec.ExitError
		// etcdperf exits 1 when a server check fails (e.g. a slow commit):
		// the measurement is still whole.
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			return s, nil, fmt.Errorf("%v: %v\n%s", cmd.Args, err, stderr.String())
		}
	}
	return s, stdout.Bytes(), nil
}

func runOurs(bin, ep string, total int) (sample, error) {
	cmd := exec.Command(bin, "bench", "put", "--endpoints="+ep, "--target-leader", "--conns=100", "--clients=100",
		"--key-size=8", "--sequential-keys", "--val-size=256", "--total="+strconv.Itoa(total), "--compact", "-o", "json")
	s, out, err := measure(cmd)
	if err != nil {
		return s, err
	}
	var res struct {
		Bench struct {
			Throughput float64          `json:"throughput"`
			Errors     map[string]int64 `json:"errors"`
		} `json:"bench"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return s, fmt.Errorf("etcdperf's output is not a Result: %v", err)
	}
	s.tput = res.Bench.Throughput
	for _, n := range res.Bench.Errors {
		s.errors += n
	}
	return s, nil
}

var rpsLine = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)

func runPeer(bin, ep string, total int) (sample, error) {
	cmd := exec.Command(bin, "--endpoints="+ep, "--target-leader", "--conns=100", "--clients=100",
		"put", "--key-size=8", "--sequential-keys", "--val-size=256", "--total="+strconv.Itoa(total))
	s, out, err := measure(cmd)
	if err != nil {
		return s, err
	}
	m := rpsLine.FindSubmatch(out)
	if m == nil {
		return s, fmt.Errorf("no Requests/sec in benchmark's output:\n%s", out)
	}
	s.tput, _ = strconv.ParseFloat(string(m[1]), 64)
	if i := bytes.Index(out, []byte("Error distribution:")); i >= 0 {
		for _, l := range strings.Split(string(out[i:]), "\n")[1:] {
			var n int64
			if _, err := fmt.Sscanf(strings.TrimSpace(l), "[%d]", &n); err == nil {
				s.errors += n
			}
		}
	}
	return s, nil
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load average unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "load average unknown"
	}
	return "load average " + strings.Join(f[:3], " ") + " at the start"
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
