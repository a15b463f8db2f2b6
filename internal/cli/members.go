package cli

import (
	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/lab"
)

// memberFlags are the embedded cluster's size and its members' faults.
type memberFlags struct {
	members int
	faults  []string
}

// faultHelp is --fault's usage, shared by every command with --members.
const faultHelp = "embedded etcd: make a member slow on purpose, MEMBER:KIND=VALUE with MEMBER 1..N or all and KIND " +
	"slow-fsync (e.g. 15ms more per fsync; root, /dev/fuse), cpu-limit (e.g. 0.1 CPU; a CPU cgroup), peer-latency " +
	"(e.g. 200ms[,20ms] more per round trip to its peer port), iops-limit (e.g. 200 write operations/s on the disk of --data-dir; " +
	"a blkio/io cgroup: the cap sits above the device, which looks fast and idle while the cgroup's counters show the cap), write-bps-limit " +
	"(e.g. 10m bytes written/s; the same), volume-iops (e.g. 1500 write operations/s: its data on a volume of its own capped below it, as a cloud " +
	"volume's cap: ext4 on a loop device over a file beside its data dir; its device shows the writes queued, utilisation high, await rising, " +
	"IOPS flat, and no cgroup shows the cap; root, loop devices, mkfs.ext4) or volume-write-bps (e.g. 10m; the same volume) " +
	"(repeatable; e.g. --fault 3:cpu-limit=0.1 --fault all:iops-limit=200 --fault 1:volume-iops=1500)"

func addMemberFlags(cmd *cobra.Command) *memberFlags {
	mf := &memberFlags{}
	cmd.Flags().IntVar(&mf.members, "members", 1, "embedded etcd: members (several run as separate processes)")
	cmd.Flags().StringArrayVar(&mf.faults, "fault", nil, faultHelp)
	return mf
}

// options checks the flags and fills the target's members and faults.
// There is an embedded cluster when co has no endpoints (neither
// --endpoints nor ETCDCTL_ENDPOINTS): --members and --fault given with
// endpoints are refused rather than silently dropped.
func (mf *memberFlags) options(cmd *cobra.Command, co cluster.ConnOptions, t *lab.TargetOptions) error {
	if len(co.Endpoints) > 0 {
		for _, f := range []string{"members", "fault"} {
			if cmd.Flags().Changed(f) {
				return embeddedOnly("--"+f, co)
			}
		}
		return nil
	}
	if mf.members < 1 || mf.members > 9 {
		return usageError("--members must be between 1 and 9, got %d", mf.members)
	}
	faults, err := lab.ParseFaults(mf.faults, mf.members)
	if err != nil {
		return usageError("%v", err)
	}
	t.Members, t.Faults = mf.members, faults
	return nil
}
