package lab

import (
	"context"
	"fmt"
	"github.com/etcdperf/etcdperf/internal/cluster"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/etcdperf/etcdperf/internal/cgroup"
	"github.com/etcdperf/etcdperf/internal/netfault"
)

// ReadyLine starts the line a member process prints on its standard output
// once it serves clients; the client URL follows.
const ReadyLine = "etcdperf-server ready"

// BindMemberFlags defines the flags of `etcdperf server` on fs, filling
// cfg. They are the one definition of the member process's command line;
// MemberConfig.Args writes it.
func BindMemberFlags(fs *pflag.FlagSet, cfg *MemberConfig) {
	fs.StringVar(&cfg.Name, "name", "etcdperf-1", "member name (etcd --name)")
	fs.StringVar(&cfg.DataDir, "data-dir", "", "etcd's data directory (etcd --data-dir); created if missing")
	fs.StringVar(&cfg.ClientURL, "listen-client-url", "http://127.0.0.1:2379", "client URL to listen on and advertise (loopback)")
	fs.StringVar(&cfg.PeerURL, "listen-peer-url", "http://127.0.0.1:2380", "peer URL to listen on and advertise (loopback)")
	fs.StringVar(&cfg.InitialCluster, "initial-cluster", "", "name=peerURL,... of every member (default: this member alone)")
	fs.StringVar(&cfg.ClusterToken, "initial-cluster-token", "etcdperf", "etcd --initial-cluster-token")
	fs.StringVar(&cfg.LogFile, "log-file", "", "file for etcd's log (default: dropped)")
	fs.DurationVar(&cfg.StartTimeout, "start-timeout", DefaultStartTimeout, "give up when the member is not ready by then")
	fs.DurationVar(&cfg.AutoCompaction, "auto-compaction", 0, "compact etcd's history periodically, keeping this much of it, e.g. 10s (etcd --auto-compaction-mode=periodic --auto-compaction-retention)")
	fs.Int64Var(&cfg.QuotaBackendBytes, "quota-backend-bytes", 0, "the database's size quota in bytes (etcd --quota-backend-bytes; 0: etcd's default, 2 GiB): past it etcd raises the NOSPACE alarm")
	fs.UintVar(&cfg.HeartbeatMs, "heartbeat-interval", 0, "etcd's --heartbeat-interval in milliseconds (0: etcd's default, 100)")
	fs.UintVar(&cfg.ElectionMs, "election-timeout", 0, "etcd's --election-timeout in milliseconds (0: etcd's default, 1000)")
	fs.BoolVar(&cfg.ExitWithParent, "exit-with-parent", false, "stop when the process that started this one goes away (set by etcdperf for its members)")
	fs.DurationVar(&cfg.SlowFsync, "slow-fsync", 0, "run etcd on a slow view of --data-dir in which every fsync/fdatasync takes this much longer (etcdperf slowdisk in a child process; needs root and /dev/fuse)")
	fs.Float64Var(&cfg.CPULimit, "cpu-limit", 0, "let the member use at most this many CPUs, e.g. 0.1 (a CPU cgroup of its own: cgroup v1 cpu.cfs_quota_us or v2 cpu.max; needs root)")
	fs.Var(delayValue{&cfg.PeerDelay}, "peer-latency", "put the peer port behind a slow link: D[,JITTER] more per round trip of the other members to this one, e.g. 200ms or 200ms,20ms; @AFTER makes it slow only that long after the member starts, e.g. 1.1s@15s")
	fs.Int64Var(&cfg.IOPSLimit, "iops-limit", 0, "let the member do at most this many write operations per second on the disk of --data-dir, e.g. 200, as a volume's IOPS limit (a blkio/io cgroup of its own: cgroup v1 blkio.throttle.write_iops_device or v2 io.max; needs root)")
	fs.Var(bpsValue{&cfg.WriteBPSLimit}, "write-bps-limit", "let the member write at most this many bytes per second on the disk of --data-dir, e.g. 10m (k, m, g: powers of 1024), as a volume's throughput limit (the same cgroup: blkio.throttle.write_bps_device or io.max; needs root)")
	fs.Int64Var(&cfg.VolumeIOPS, "volume-iops-limit", 0, "run the member on a volume of its own capped at this many write operations per second below it, e.g. 1500, as a cloud volume: ext4 on a loop device mounted on --data-dir (empty or missing), over a file beside it, whose writes to the disk under that file are capped (a blkio/io cgroup); the member's own device shows its writes queued, and no cgroup caps them (needs root, loop devices, mkfs.ext4)")
	fs.Var(bpsValue{&cfg.VolumeWriteBPS}, "volume-write-bps-limit", "the same volume, capped at this many bytes written per second below it, e.g. 10m")
	fs.Int64Var(&cfg.BurstIOPS, "burst-iops", 0, "a burst bucket, as AWS gp2 volumes have: cap the member's writes at this many operations per second while it has credits (--burst-credits), at --baseline-iops once they are spent; credits are earned at the baseline (the cap of --iops-limit, or with --burst-volume the volume's of --volume-iops-limit, rewritten as the bucket's state changes; needs root)")
	fs.Int64Var(&cfg.BaselineIOPS, "baseline-iops", 0, "with --burst-iops, the cap once the credits are spent, and the rate they are earned at")
	fs.Int64Var(&cfg.BurstCredits, "burst-credits", 0, "with --burst-iops, the credits the bucket starts with and holds at most: one per write operation")
	fs.BoolVar(&cfg.BurstVolume, "burst-volume", false, "with --burst-iops, put the bucket on a volume of the member's own capped below it (as --volume-iops-limit)")
}

// bpsValue is a flag holding a write throughput cap written as a size per
// second (10m, 512k).
type bpsValue struct{ v *int64 }

func (b bpsValue) String() string {
	if b.v == nil || *b.v == 0 {
		return ""
	}
	return strconv.FormatInt(*b.v, 10)
}

func (b bpsValue) Set(s string) error {
	n, err := ParseWriteBPS(s)
	if err != nil {
		return err
	}
	*b.v = n
	return nil
}

func (bpsValue) Type() string { return "SIZE" }

// delayValue is a flag holding a netfault.Delay written as D[,JITTER].
type delayValue struct{ d *netfault.Delay }

func (v delayValue) String() string {
	if v.d == nil || v.d.Latency == 0 {
		return ""
	}
	return DelayArg(*v.d)
}

func (v delayValue) Set(s string) error {
	d, err := ParseDelay(s)
	if err != nil {
		return err
	}
	*v.d = d
	return nil
}

func (delayValue) Type() string { return "D[,JITTER][@AFTER]" }

// Args returns the command line of `etcdperf server` for c.
func (c MemberConfig) Args() []string {
	a := []string{"--name", c.Name, "--data-dir", c.DataDir, "--listen-client-url", c.ClientURL, "--listen-peer-url", c.PeerURL}
	if c.InitialCluster != "" {
		a = append(a, "--initial-cluster", c.InitialCluster)
	}
	if c.ClusterToken != "" {
		a = append(a, "--initial-cluster-token", c.ClusterToken)
	}
	if c.LogFile != "" {
		a = append(a, "--log-file", c.LogFile)
	}
	if c.StartTimeout > 0 {
		a = append(a, "--start-timeout", c.StartTimeout.String())
	}
	if c.ExitWithParent {
		a = append(a, "--exit-with-parent")
	}
	if c.AutoCompaction > 0 {
		a = append(a, "--auto-compaction", c.AutoCompaction.String())
	}
	if c.QuotaBackendBytes > 0 {
		a = append(a, "--quota-backend-bytes", strconv.FormatInt(c.QuotaBackendBytes, 10))
	}
	if c.HeartbeatMs > 0 {
		a = append(a, "--heartbeat-interval", strconv.FormatUint(uint64(c.HeartbeatMs), 10))
	}
	if c.ElectionMs > 0 {
		a = append(a, "--election-timeout", strconv.FormatUint(uint64(c.ElectionMs), 10))
	}
	if c.SlowFsync > 0 {
		a = append(a, "--slow-fsync", c.SlowFsync.String())
	}
	if c.CPULimit > 0 {
		a = append(a, "--cpu-limit", strconv.FormatFloat(c.CPULimit, 'g', -1, 64))
	}
	if c.PeerDelay.Latency > 0 {
		a = append(a, "--peer-latency", delayValue{&c.PeerDelay}.String())
	}
	if c.IOPSLimit > 0 {
		a = append(a, "--iops-limit", strconv.FormatInt(c.IOPSLimit, 10))
	}
	if c.WriteBPSLimit > 0 {
		a = append(a, "--write-bps-limit", strconv.FormatInt(c.WriteBPSLimit, 10))
	}
	if c.VolumeIOPS > 0 {
		a = append(a, "--volume-iops-limit", strconv.FormatInt(c.VolumeIOPS, 10))
	}
	if c.VolumeWriteBPS > 0 {
		a = append(a, "--volume-write-bps-limit", strconv.FormatInt(c.VolumeWriteBPS, 10))
	}
	if c.BurstIOPS > 0 {
		a = append(a, "--burst-iops", strconv.FormatInt(c.BurstIOPS, 10), "--baseline-iops", strconv.FormatInt(c.BaselineIOPS, 10),
			"--burst-credits", strconv.FormatInt(c.BurstCredits, 10))
		if c.BurstVolume {
			a = append(a, "--burst-volume")
		}
	}
	return a
}

// ServeMember runs one member until ctx ends or etcd fails, and with
// cfg.ExitWithParent until the parent process goes away (a member started
// by etcdperf must not outlive it). It
// writes ReadyLine and the client URL to ready once etcd serves clients.
// The member's data stays; the parent removes it. With cfg.SlowFsync the
// data dir holds the files in real/ and etcd runs on the slow view of
// them mounted on slow/, which is unmounted after etcd stops. With
// cfg.CPULimit the process moves into a CPU cgroup of its own (after
// starting the slow view's server, which keeps its CPU), and back out
// when etcd has stopped. With cfg.IOPSLimit or cfg.WriteBPSLimit it moves
// into a blkio/io cgroup of its own whose writes to the disk of the data
// dir are capped (on cgroup v2, the same group as its CPU limit), and back
// out likewise. With cfg.VolumeIOPS or cfg.VolumeWriteBPS a volume of its
// own (MountVolume) is mounted on the data dir first, and the cap is on
// the writes to the disk under the volume's file; the volume is removed
// after the process left its cgroup. With cfg.PeerDelay etcd listens for its peers on another
// loopback port, and a slow link listens on the peer URL.
func ServeMember(ctx context.Context, cfg MemberConfig, ready io.Writer) (err error) {
	parent := os.Getppid()
	var undo undoStack
	// The stack as it is when the member stops, not as it is now (empty).
	defer func() { undo.run(&err) }()
	if cfg.LogFile != "" {
		f, err := os.OpenFile(cfg.LogFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return fmt.Errorf("log file: %w", err)
		}
		undo.pushQuiet(func() { f.Close() })
		cluster.GRPCLogTo(f)
		undo.pushQuiet(func() { cluster.GRPCLogTo(nil) })
	}
	// A parent that dies while the member starts must stop the start too.
	ctx, cancel := context.WithCancel(ctx)
	undo.pushQuiet(cancel)
	if cfg.ExitWithParent {
		go watchParent(ctx, parent, cancel)
	}
	if err := cfg.setUp(ctx, &undo); err != nil {
		return err
	}
	m, err := StartMember(ctx, cfg)
	if err != nil {
		return err
	}
	defer m.Close()
	if _, err := fmt.Fprintf(ready, "%s %s\n", ReadyLine, cfg.ClientURL); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		// A member its live parent stops hands its leadership over first
		// (the deferred Close). One whose parent is gone, now or while it
		// stops, stops at once: its peers are stopping too, and nobody
		// waits for a hand-over.
		if cfg.ExitWithParent {
			done := make(chan struct{})
			go abandonWhenOrphaned(m, parent, done)
			m.Close()
			close(done)
		}
		return nil
	case err := <-m.Err():
		return fmt.Errorf("etcd member %s failed: %w", cfg.Name, err)
	}
}

// undoStack is what a member process set up, undone last first once the
// member has stopped (run).
type undoStack []func() error

func (u *undoStack) push(f func() error) { *u = append(*u, f) }

func (u *undoStack) pushQuiet(f func()) { u.push(func() error { f(); return nil }) }

// run undoes everything; the first error is *err's when it held none.
func (u undoStack) run(err *error) {
	for i := len(u) - 1; i >= 0; i-- {
		if uerr := u[i](); uerr != nil && *err == nil {
			*err = uerr
		}
	}
}

// setUp makes what the member runs on and under, each undone (undo)
// after it stops, before what was made before it: the slow view of its
// data dir, a volume of its own, its CPU limit, the cap on its writes
// (capWrites) and the slow link to its peers. It sets cfg's data dir to
// the slow view and its peer listener to the link's.
func (cfg *MemberConfig) setUp(ctx context.Context, undo *undoStack) error {
	if cfg.SlowFsync > 0 {
		sd, err := StartSlowDisk(ctx, nil, cfg.DataDir, cfg.SlowFsync)
		if err != nil {
			return fmt.Errorf("member %s: %w", cfg.Name, err)
		}
		undo.push(sd.Stop)
		cfg.DataDir = sd.View
	}
	// The writes the cap holds back, and the disk it names.
	capKind, capLim, capDev := cfg.ioKind(), cfg.IOLimit(), cgroup.Device{}
	if lim := cfg.VolumeLimit(); lim.Any() {
		vol, err := MountVolume(ctx, cfg.DataDir)
		if err != nil {
			return fmt.Errorf("member %s: --%s: %w", cfg.Name, cfg.volumeKind(), err)
		}
		undo.push(func() error {
			if err := vol.Remove(); err != nil {
				return fmt.Errorf("member %s: %w", cfg.Name, err)
			}
			return nil
		})
		capKind, capLim, capDev = cfg.volumeKind(), lim, vol.Backing
	}
	if cfg.CPULimit > 0 {
		lim, err := cgroup.Host.Limit(os.Getpid(), cfg.CPULimit)
		if err != nil {
			return fmt.Errorf("member %s: --cpu-limit: %w", cfg.Name, err)
		}
		undo.push(lim.Release)
	}
	if capLim.Any() {
		if err := cfg.capWrites(ctx, undo, capKind, capLim, capDev); err != nil {
			return err
		}
	}
	if cfg.PeerDelay.Latency > 0 {
		link, listen, err := slowLink(*cfg)
		if err != nil {
			return fmt.Errorf("member %s: --peer-latency: %w", cfg.Name, err)
		}
		undo.pushQuiet(func() { link.Close() })
		cfg.listenPeerURL = listen
	}
	return nil
}

// capWrites moves the process into a cgroup whose writes to dev (the
// disk of the data dir when dev is zero) are capped at lim (kind names
// the flag), with a burst bucket that rewrites the cap when the fault
// asks for one; both are undone (the bucket first) after the member stops.
func (cfg *MemberConfig) capWrites(ctx context.Context, undo *undoStack, kind string, lim cgroup.IOLimit, dev cgroup.Device) error {
	if dev == (cgroup.Device{}) {
		var err error
		if dev, err = cgroup.Host.DeviceOf(cfg.DataDir); err != nil {
			return fmt.Errorf("member %s: --%s: %w", cfg.Name, kind, err)
		}
	}
	capped, err := cgroup.Host.LimitIO(os.Getpid(), dev, lim)
	if err != nil {
		return fmt.Errorf("member %s: --%s on %s (%s): %w", cfg.Name, kind, dev, dev.Name, err)
	}
	undo.push(capped.Release)
	if cfg.BurstIOPS > 0 {
		bctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			runBucket(bctx, capped, dev, cfg.Fault)
		}()
		undo.pushQuiet(func() {
			stop()
			<-done
		})
	}
	return nil
}

// slowLink starts the slow link on the member's peer URL, in front of a
// new loopback port for etcd's peer listener, which it returns as a URL.
func slowLink(cfg MemberConfig) (*netfault.Proxy, string, error) {
	u, err := url.Parse(cfg.PeerURL)
	if err != nil || u.Scheme != "http" {
		return nil, "", fmt.Errorf("the peer URL %q must be http://host:port", cfg.PeerURL)
	}
	ports, err := FreePorts(1)
	if err != nil {
		return nil, "", err
	}
	inner := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	p, err := netfault.Listen(u.Host, inner, cfg.PeerDelay)
	if err != nil {
		return nil, "", err
	}
	return p, "http://" + inner, nil
}

// abandonWhenOrphaned abandons m as soon as this process is re-parented
// (Pdeathsig's SIGTERM may come when only the thread that started it
// ended, before the rest of the parent), until done.
func abandonWhenOrphaned(m *EmbeddedMember, parent int, done <-chan struct{}) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		if os.Getppid() != parent {
			m.Abandon()
			return
		}
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}

// watchParent cancels when this process is re-parented: the process that
// started it is gone. Pdeathsig does the same faster; this covers a parent
// that died before the child could ask for it.
func watchParent(ctx context.Context, parent int, cancel func()) {
	if parent <= 1 {
		return
	}
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if os.Getppid() != parent {
				cancel()
				return
			}
		}
	}
}

// ServeArgs runs `etcdperf server` with its command-line arguments (the
// flags of BindMemberFlags) until SIGTERM or SIGINT. Test binaries use it
// to act as a member process (see TargetOptions.ServerCommand).
func ServeArgs(args []string, stdout io.Writer) error {
	var cfg MemberConfig
	fs := pflag.NewFlagSet("server", pflag.ContinueOnError)
	BindMemberFlags(fs, &cfg)
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return ServeMember(ctx, cfg, stdout)
}
