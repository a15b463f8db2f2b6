package cli

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/slowfs"
)

func newSlowdiskCmd() *cobra.Command {
	var (
		cfg      slowfs.Config
		src, mnt string
	)
	cmd := &cobra.Command{
		Use:   "slowdisk --src DIR --mnt MNT --fsync-delay 15ms",
		Short: "Mount a deliberately slow view of a directory (FUSE), to reproduce etcd on a slow disk",
		Long: `Mount MNT as a pass-through view of SRC in which every fsync and fdatasync
(and, with --write-delay, every write) is delayed. Put an etcd data dir under
MNT to see what a slow disk does to etcd and to the controllers that use it:
"apply request took too long" from about 15ms, "failed to send out heartbeat on
time" with 3 members, "etcdserver: request timed out" with enough delay.

It runs in the foreground until Ctrl-C or SIGTERM, then unmounts (retrying
while files are open, and detaching lazily as a last resort); further signals
do not interrupt the unmount. It needs root and /dev/fuse. The files live in SRC; nothing is left in MNT. Keep the FUSE
server in its own process, as this command does: serving it from inside the
etcd process can deadlock on the memory map of etcd's database file (bbolt).

etcd logs "slow fdatasync" only above 1s, so a 15ms delay shows up in its
metrics (etcd_disk_wal_fsync_duration_seconds) and in apply warnings, not in
that message.`,
		Example: `  # A disk whose fsync takes 15ms more than the real one
  mkdir -p /tmp/slow-src /tmp/slow
  etcdperf slowdisk --src /tmp/slow-src --mnt /tmp/slow --fsync-delay 15ms &

  # What etcdperf disk says about it (FAIL: fdatasync p99 over 10ms)
  etcdperf disk --dir /tmp/slow

  # Irregular latency: 5ms plus up to 40ms of jitter, on writes too
  etcdperf slowdisk --src /data/src --mnt /data/slow --fsync-delay 5ms --jitter 40ms --write-delay 1ms`,
		Args: noArgs,
	}
	fl := cmd.Flags()
	fl.StringVar(&src, "src", "", "directory that holds the real files (required)")
	fl.StringVar(&mnt, "mnt", "", "mount point of the slow view; created when missing, and removed afterwards if it was (required)")
	fl.DurationVar(&cfg.FsyncDelay, "fsync-delay", 15*time.Millisecond, "delay added to every fsync/fdatasync")
	fl.DurationVar(&cfg.WriteDelay, "write-delay", 0, "delay added to every write (turns off kernel pass-through)")
	fl.DurationVar(&cfg.Jitter, "jitter", 0, "random extra delay, uniform in [0, jitter), added to each delayed call")
	fl.BoolVar(&cfg.AllowOther, "allow-other", false, "let other users (e.g. an etcd running as etcd) use the mount")

	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if src == "" || mnt == "" {
			return usageError("slowdisk needs --src and --mnt (see 'etcdperf slowdisk --help')")
		}
		if err := cfg.Validate(); err != nil {
			return usageError("%v", err)
		}
		if st, err := os.Stat(src); err != nil || !st.IsDir() {
			return usageError("--src %s is not an existing directory", src)
		}
		created := false
		if _, err := os.Stat(mnt); errors.Is(err, os.ErrNotExist) {
			if err := os.Mkdir(mnt, 0o755); err != nil {
				return fmt.Errorf("create mount point %s: %w", mnt, err)
			}
			created = true
		}
		// Signals after the first one must not kill the process before it
		// has unmounted: a mount whose server is gone breaks every process
		// that uses it. A member that dies sends several (Pdeathsig fires
		// as each of its threads exits); the unmount itself is bounded.
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
		defer signal.Stop(sigs)
		m, err := slowfs.Start(src, mnt, cfg)
		if err != nil {
			if created {
				os.Remove(mnt)
			}
			return err
		}
		stderr := cmd.ErrOrStderr()
		fmt.Fprintf(stderr, "etcdperf slowdisk: %s is a slow view of %s (fsync +%s, write +%s, jitter %s); Ctrl-C to unmount\n",
			mnt, m.Src, cfg.FsyncDelay, cfg.WriteDelay, cfg.Jitter)
		unmounted := make(chan struct{})
		go func() { m.Wait(); close(unmounted) }()
		select {
		case <-cmd.Context().Done():
		case <-unmounted:
			fmt.Fprintf(stderr, "etcdperf slowdisk: %s was unmounted from outside\n", mnt)
		}
		lazy, uerr := m.Unmount()
		if created {
			os.Remove(mnt)
		}
		fmt.Fprintf(stderr, "etcdperf slowdisk: unmounted %s after delaying %d fsyncs and %d writes\n", mnt, m.Stats.Fsyncs.Load(), m.Stats.Writes.Load())
		if lazy {
			fmt.Fprintf(stderr, "etcdperf slowdisk: files were still open under %s; it was detached and disappears when they are closed\n", mnt)
		}
		return uerr
	}
	return cmd
}
