package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/discover"
	"github.com/etcdperf/etcdperf/internal/diskprobe"
	"github.com/etcdperf/etcdperf/internal/render"
	"github.com/etcdperf/etcdperf/internal/result"
)

// nodeFlags are doctor's flags for the member on this node.
type nodeFlags struct {
	on        bool
	root      string
	logFile   string
	tuningOut string
}

func addNodeFlags(cmd *cobra.Command) *nodeFlags {
	n := &nodeFlags{}
	cmd.Flags().BoolVar(&n.on, "node", false, "judge the etcd member that runs on this node (found as etcdperf discover finds it), without load unless --load is given")
	cmd.Flags().StringVar(&n.root, "root", "/", "with --node, read the node's files under this directory")
	cmd.Flags().StringVar(&n.logFile, "log-file", "", "with --node, the member's log to read (default: the one found on the node: kubelet's pod log, or the journal of etcd's or k3s' systemd unit)")
	cmd.Flags().StringVar(&n.tuningOut, "tuning-out", "", "with --node, write etcd's flags to change as the node's layout takes them to this file "+
		"(a kubeadm ClusterConfiguration, k3s' or RKE2's config.yaml etcd-arg, a systemd environment file or etcd's config file); nothing is changed on the node")
	return n
}

// writeTuning writes --tuning-out: the tuning's changes as the node's
// layout takes them.
func (n *nodeFlags) writeTuning(res *result.Result) error {
	if n.tuningOut == "" || res == nil {
		return nil
	}
	t := res.Tuning
	for _, run := range res.Runs {
		if run.Tuning != nil && t == nil {
			t = run.Tuning
		}
	}
	body, ok := render.TuningFile(t)
	if !ok {
		return nil
	}
	if err := result.WriteFileAtomic(n.tuningOut, []byte(body)); err != nil {
		return &exitError{code: ExitError, err: fmt.Errorf("--tuning-out %s: %w", n.tuningOut, err)}
	}
	return nil
}

// conflicts refuses the flags that make no sense with --node.
func (n *nodeFlags) conflicts(cmd *cobra.Command) error {
	if !n.on {
		for _, f := range []string{"root", "log-file", "tuning-out"} {
			if cmd.Flags().Changed(f) {
				return usageError("--%s is for --node: etcdperf doctor --node --%s %s", f, f, cmd.Flags().Lookup(f).Value)
			}
		}
		return nil
	}
	for _, f := range []string{"data-dir", "noise", "simulate-fsync-delay", "members", "fault"} {
		if fl := cmd.Flags().Lookup(f); fl != nil && fl.Changed {
			return usageError("--%s cannot be used with --node: --node judges the member that runs on this node, on its own disk", f)
		}
	}
	if n.tuningOut != "" {
		return checkWritable("--tuning-out", n.tuningOut)
	}
	return nil
}

// resolve finds the member and checks, before anything is measured, that
// it can be reached and that its disk has room for the probe.
func (n *nodeFlags) resolve(cmd *cobra.Command, co cluster.ConnOptions, probe diskprobe.Options, skipDisk bool) (*discover.Node, error) {
	node, err := discover.Resolve(n.root, co)
	if err != nil {
		return nil, usageError("--node: %v", err)
	}
	if n.logFile != "" {
		if _, err := os.Stat(n.logFile); err != nil {
			return nil, usageError("--log-file %s: %v", n.logFile, err)
		}
		node.LogFile = n.logFile
	}
	if !skipDisk {
		if err := node.CheckProbeBeside(); err != nil {
			return nil, usageError("--node: %v", err)
		}
		probe.Dir = node.ProbeParent()
		if err := diskprobe.CheckDir(probe); err != nil {
			return nil, usageError("--node: the disk probe beside %s: %v", node.DataDir, err)
		}
	}
	if !quiet(cmd) {
		taken := fmt.Sprintf("etcdperf: judging %s at %s", node.Name(), strings.Join(node.Conn.Endpoints, ","))
		if len(node.Others) > 0 {
			taken += "; also found, not judged: " + strings.Join(node.Others, ", ")
		}
		fmt.Fprintln(cmd.ErrOrStderr(), taken)
	}
	return node, nil
}
