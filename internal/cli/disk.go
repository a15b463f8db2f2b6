package cli

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/diskprobe"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/pipeline"
)

func newDiskCmd() *cobra.Command {
	var (
		o         = diskprobe.Options{BlockSize: diskprobe.DefaultBlockSize, Size: diskprobe.DefaultSize}
		bs        = int64(diskprobe.DefaultBlockSize)
		sync      string
		rw        string
		engine    string
		overrides []string
		ioeng     string
	)
	cmd := &cobra.Command{
		Use:   "disk",
		Short: "Measure a directory's storage the way etcd's WAL uses it (fdatasync latency)",
		Long: `Measure the storage under a directory the way etcd's write-ahead log uses it:
small sequential writes into a pre-allocated file, each followed by fdatasync,
which is what the etcd community's fio test does:

  fio --rw=write --ioengine=sync --fdatasync=1 --size=22m --bs=2300

etcd calls fdatasync after every WAL append; when its 99th percentile passes
10ms, etcd logs "apply request took too long", misses heartbeats and loses
leaders. The verdict is PASS below 8ms, WARN from 8ms (little headroom) and
FAIL from 10ms; on tmpfs it says that fdatasync is a no-op there.

The probe writes only its own, uniquely named files (.etcdperf-probe-*) in the
directory and removes them at the end, on errors and on Ctrl-C. It needs
--size free bytes per job. It stops after --size bytes or --runtime, whichever
comes first; with --runtime alone it writes for that long, starting a new
pre-allocated file when one is full, as etcd cuts WAL segments.`,
		Example: `  # The directory etcd will use (the verdict is in the last line)
  etcdperf disk --dir /var/lib/etcd

  # The same with the real fio, parsed into the same report
  etcdperf disk --dir /var/lib/etcd --engine fio

  # Write for 30s regardless of size, and keep the Result as JSON
  etcdperf disk --dir /var/lib/etcd --runtime 30s -o result.json

  # Four parallel writers with O_DIRECT and 4 KiB blocks
  etcdperf disk --dir /mnt/nvme --jobs 4 --direct --bs 4k

  # Judge by a stricter limit than etcd's 10ms
  etcdperf disk --limit disk_sync_p99=5ms`,
		Args: noArgs,
	}
	out := addOutputFlag(cmd)
	fl := cmd.Flags()
	fl.StringVar(&o.Dir, "dir", ".", "directory on the storage to test (etcd's data dir, or a directory beside it)")
	fl.Var(sizeValue{&bs}, "bs", "size of each write, like fio's --bs (2300 is a typical WAL append)")
	fl.Var(sizeValue{&o.Size}, "size", "bytes each job writes (k, m, g are powers of 1024, as in fio)")
	fl.DurationVar(&o.Runtime, "runtime", diskprobe.DefaultRuntime, "stop after this long even if --size is not reached (0: no limit)")
	fl.BoolVar(&o.Prealloc, "prealloc", true, "pre-allocate the file with fallocate, as fio and etcd do")
	fl.StringVar(&sync, "sync", string(diskprobe.SyncFdatasync), "how each write is made durable: fdatasync, fsync, odsync (O_DSYNC) or none")
	fl.BoolVar(&o.Direct, "direct", false, "use O_DIRECT (needs --bs a multiple of the device's block size)")
	fl.StringVar(&rw, "rw", string(diskprobe.Sequential), "write pattern: write (sequential, like the WAL) or randwrite")
	fl.IntVar(&o.Jobs, "jobs", 1, "parallel writers, each on its own file")
	// fio's names, for its users: --numjobs is --jobs; --ioengine sync or
	// psync is what the probe does anyway (one synchronous write at a time).
	fl.IntVar(&o.Jobs, "numjobs", 1, "fio's name for --jobs")
	fl.StringVar(&ioeng, "ioengine", "", "as fio's --ioengine: sync or psync, the only ones etcd's WAL uses (one synchronous write at a time); the probe always writes so")
	fl.StringVar(&engine, "engine", pipeline.EngineNative, "native (built in) or fio (runs the installed fio with the same parameters)")
	fl.StringArrayVar(&overrides, "limit", nil, "override a limit: NAME=VALUE[,WARN], e.g. disk_sync_p99=5ms (repeatable)")

	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		sinks, err := out.sinks()
		if err != nil {
			return err
		}
		if fl.Changed("ioengine") && ioeng != "sync" && ioeng != "psync" {
			return usageError("--ioengine %q: etcd's WAL writes one synchronous write at a time, so the probe takes sync or psync only", ioeng)
		}
		if bs > 1<<30 {
			return usageError("--bs %d is too large", bs)
		}
		o.BlockSize = int(bs)
		o.Sync = diskprobe.SyncMode(sync)
		o.RW = diskprobe.Pattern(rw)
		o.TimeBased = fl.Changed("runtime") && !fl.Changed("size") && o.Runtime > 0
		if err := o.Validate(); err != nil {
			return usageError("%v", err)
		}
		if engine != pipeline.EngineNative && engine != pipeline.EngineFio {
			return usageError("--engine must be native or fio, got %q", engine)
		}
		criteria, err := limits.Override(limits.Table, overrides)
		if err != nil {
			return usageError("%v", err)
		}
		prog := &diskprobe.Progress{}
		total := o.Size * int64(o.Jobs)
		stop := func() {}
		if engine == pipeline.EngineNative {
			stop = startProgress(cmd, o.Runtime, func(el time.Duration) string {
				if o.TimeBased {
					return bytesProgress(prog.Bytes(), 1<<62, el, o.Runtime)
				}
				return bytesProgress(prog.Bytes(), total, el, o.Runtime)
			})
		}
		res, runErr := pipeline.Disk(cmd.Context(), pipeline.DiskOptions{Probe: o, Engine: engine, Criteria: criteria, Progress: prog})
		stop()
		var pe *diskprobe.Error
		if errors.As(runErr, &pe) {
			runErr = &exitError{code: ExitError, err: runErr}
		}
		return finish(cmd, sinks, res, runErr)
	}
	return cmd
}
