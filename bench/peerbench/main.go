// Command peerbench compares etcdperf's load generator with other clients
// on the same etcd and the same workload:
//
//	put --key-size=8 --sequential-keys --val-size=256, 100 conns, 100 clients,
//	--target-leader, 200,000 requests
//
// against one etcd member on tmpfs (`etcdperf server` on /dev/shm). Four
// clients, in an order rotated every round:
//
//   - etcdperf: `etcdperf bench put` on its lean HTTP/2 path (internal/grpcwire);
//   - etcdperf --etcd-client: the same through etcd's gRPC client;
//   - grpc-go: bench/peerbench/grpcput, a bare grpc.ClientConn.Invoke loop
//     (grpc-go's default codec, no etcd client, no interceptors);
//   - benchmark: etcd's own benchmark tool (v3.6, built from the Go module
//     proxy by the wrapper module in etcdbench/).
//
// It reports each client's medians over the rounds (client CPU seconds per
// 100k requests, user+system of the child process from its rusage;
// throughput; peak RSS) and, as ratios, each against etcd's benchmark and
// etcdperf's lean path against plain grpc-go (what the hand-written
// transport buys); then the peak RSS of etcdperf at --big requests against
// that at --total.
//
//	go run ./bench/peerbench --rounds 3
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
	rounds := flag.Int("rounds", 3, "rounds of the four clients, in an order rotated every round")
	total := flag.Int("total", 200000, "requests per run")
	big := flag.Int("big", 2000000, "requests of etcdperf's memory run (0: skip)")
	shm := flag.String("dir", "/dev/shm", "tmpfs directory for etcd's data")
	flag.Parse()
	if err := run(*rounds, *total, *big, *shm); err != nil {
		fmt.Fprintln(os.Stderr, "peerbench:", err)
		os.Exit(2)
	}
}

// client is one of the compared load generators.
type client struct {
	name string
	run  func(ep string, total int) (sample, error)
}

func run(rounds, total, big int, shm string) error {
	tmp, err := os.MkdirTemp("", "peerbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ours := filepath.Join(tmp, "etcdperf")
	grpcput := filepath.Join(tmp, "grpcput")
	peer := filepath.Join(tmp, "benchmark")
	fmt.Println("building etcdperf, grpcput and etcd's benchmark tool (v3.6 from the module proxy)...")
	for _, b := range [][2]string{{ours, "./cmd/etcdperf"}, {grpcput, "./bench/peerbench/grpcput"}} {
		if out, err := exec.Command("go", "build", "-o", b[0], b[1]).CombinedOutput(); err != nil {
			return fmt.Errorf("build %s (run from the repository root): %v\n%s", b[1], err, out)
		}
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

	clients := []client{
		{"etcdperf", func(ep string, n int) (sample, error) { return runOurs(ours, ep, n) }},
		{"etcdperf --etcd-client", func(ep string, n int) (sample, error) { return runOurs(ours, ep, n, "--etcd-client") }},
		{"grpc-go", func(ep string, n int) (sample, error) { return runGRPC(grpcput, ep, n) }},
		{"benchmark", func(ep string, n int) (sample, error) { return runPeer(peer, ep, n) }},
	}
	fmt.Printf("conditions: %d CPUs (GOMAXPROCS %d), etcd (etcdperf server, v3.7.3) on %s, %s\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), shm, loadavg())
	fmt.Printf("workload: put --key-size=8 --sequential-keys --val-size=256 --conns=100 --clients=100 --target-leader --total=%d\n\n", total)
	fmt.Printf("%-5s %-22s %10s %12s %12s %10s\n", "round", "client", "req/s", "CPU-s/100k", "peak RSS", "errors")
	got := make([][]sample, len(clients))
	for r := 0; r < rounds; r++ {
		for k := range clients {
			i := (k + r) % len(clients)
			s, err := clients[i].run(ep, total)
			if err != nil {
				return err
			}
			got[i] = append(got[i], s)
			fmt.Printf("%-5d %-22s %10.0f %12.2f %10.1f MiB %10d\n", r+1, clients[i].name, s.tput, per100k(s, total), float64(s.rss)/(1<<20), s.errors)
		}
	}
	med := func(i int, f func(sample) float64) float64 {
		var v []float64
		for _, s := range got[i] {
			v = append(v, f(s))
		}
		return median(v)
	}
	cpu := func(s sample) float64 { return per100k(s, total) }
	tput := func(s sample) float64 { return s.tput }
	rss := func(s sample) float64 { return float64(s.rss) }
	peerI := len(clients) - 1
	fmt.Printf("\nmedians over %d rounds, and ratios to etcd's benchmark tool:\n", rounds)
	fmt.Printf("  %-22s %12s %8s %10s %8s %10s %8s\n", "client", "CPU-s/100k", "ratio", "req/s", "ratio", "peak RSS", "ratio")
	for i, c := range clients {
		fmt.Printf("  %-22s %12.2f %7.2fx %10.0f %7.2fx %6.1f MiB %7.2fx\n", c.name,
			med(i, cpu), med(i, cpu)/med(peerI, cpu), med(i, tput), med(i, tput)/med(peerI, tput), med(i, rss)/(1<<20), med(i, rss)/med(peerI, rss))
	}
	fmt.Printf("\nwhat the lean HTTP/2 path buys over plain grpc-go Invoke: %.2fx less client CPU per request, %.2fx the throughput\n",
		med(2, cpu)/med(0, cpu), med(0, tput)/med(2, tput))
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

func runOurs(bin, ep string, total int, extra ...string) (sample, error) {
	args := append([]string{"bench", "put", "--endpoints=" + ep, "--target-leader", "--conns=100", "--clients=100",
		"--key-size=8", "--sequential-keys", "--val-size=256", "--total=" + strconv.Itoa(total), "--compact", "-o", "json"}, extra...)
	cmd := exec.Command(bin, args...)
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

func runGRPC(bin, ep string, total int) (sample, error) {
	cmd := exec.Command(bin, "--endpoint="+ep, "--conns=100", "--clients=100", "--key-size=8", "--val-size=256", "--total="+strconv.Itoa(total))
	s, out, err := measure(cmd)
	if err != nil {
		return s, err
	}
	var res struct {
		Throughput float64 `json:"throughput"`
		Errors     int64   `json:"errors"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return s, fmt.Errorf("grpcput's output: %v", err)
	}
	s.tput, s.errors = res.Throughput, res.Errors
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
