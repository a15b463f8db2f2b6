package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/etcdperf/etcdperf/internal/k8s"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/internal/version"
)

func newK8sCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "k8s",
		Short: "Run etcdperf in Kubernetes: a Job on a node's etcd disk, a StorageClass or control-plane etcd (--mode node-doctor)",
		Long: `Run etcdperf inside a Kubernetes cluster. 'etcdperf k8s manifest' prints a Job
that probes a node's etcd disk or a fresh volume of a StorageClass, or that
runs 'etcdperf doctor --node' on control-plane nodes (--mode node-doctor);
apply it with kubectl and read each pod's Result JSON from its log.`,
		Example: `  etcdperf k8s manifest --node cp-1 -n kube-system | kubectl apply -f -`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError("unknown command %q for '%s' (see '%s --help')", args[0], cmd.CommandPath(), cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(newK8sManifestCmd(), newK8sInDirCmd())
	return cmd
}

func newK8sManifestCmd() *cobra.Command {
	var (
		o        k8s.Options
		mode     string
		size     quantityValue
		dataDir  string
		requests string
		limits   string
		output   string
		runAs    int64
	)
	cmd := &cobra.Command{
		Use:   "manifest (--node NAME... | --storage-class SC --size 10Gi | --mode node-doctor [--node NAME...]) [flags] [-- ETCDPERF ARGS...]",
		Short: "Print the YAML of a Job that runs etcdperf on a node's etcd disk, a StorageClass or control-plane etcd (--mode node-doctor)",
		Long: `Print the YAML of a Kubernetes Job that runs etcdperf in the cluster, for
'kubectl apply -f -'. Each pod prints its Result JSON (-o json) to its log, and
'etcdperf report -' reads those logs as they are (one run per node, named after
it).

On a node's etcd disk (--node NAME, repeatable or comma-separated):
  One pod per node, pinned to it by name, tolerating the control-plane taints.
  The node's directory holding etcd's data dir (the parent of --etcd-data-dir,
  /var/lib by default) is mounted at /host/var/lib; the pod creates
  /var/lib/etcdperf-probe in it, probes that directory, and removes it. It
  writes nothing else: the probe's files are its own, uniquely named, and
  removed; etcd's data dir is mounted read-only over the writable mount. Before
  writing, the pod checks that the probe directory is on the same file system as
  etcd's data: when the data dir is a mount of its own (a dedicated disk), it
  stops and says to pass --host-dir with the data dir itself, where the probe
  directory goes beside member/.
  The pod runs as root, because the node's /var/lib belongs to root, with every
  capability dropped, no privilege escalation and a read-only root file system
  (--run-as-user UID when --host-dir belongs to another user, e.g. etcd's).
  A hostPath volume needs a namespace whose Pod Security level is privileged
  (kube-system usually is): pass -n kube-system, or label your namespace
  pod-security.kubernetes.io/enforce=privileged.
  A node without the data dir does not start the pod ('kubectl describe pod'
  says why) and the Job ends at --deadline.

On a StorageClass (--storage-class SC --size 10Gi):
  Each pod gets a fresh volume of that class, a generic ephemeral volume that
  Kubernetes creates with the pod and deletes with it: nothing to clean up.
  The pod runs as the non-root user 65532 (fsGroup makes the volume writable)
  and passes the 'restricted' Pod Security level. Cloud disks are often faster
  when larger (gp2's IOPS grow with the size): test the size you will use.
  --parallel N runs N pods at once, each on its own volume: how the storage
  behaves when several etcd members share it.

On the control-plane nodes' own etcd (--mode node-doctor):
  Each pod runs 'etcdperf doctor --node --root /host -o json' on a node that
  runs etcd: doctor finds that node's member from its files (kubeadm's static
  pod, k3s/RKE2, OpenShift, a systemd unit), reads its certificates and logs,
  measures its process and probes the disk beside its data dir. With --node
  NAME one pod is pinned to each named node (the simplest: one Job per node).
  Without --node, --parallel N pods (default 1) go to N different nodes labelled
  node-role.kubernetes.io/control-plane, master or etcd; more pods than such
  nodes stay Pending and the Job ends at --deadline.
  The pod uses the node's network (hostNetwork: the member listens on
  127.0.0.1:2379) and PID namespace (hostPID: doctor reads the member's process
  in /proc), runs as root (the keys under /etc/kubernetes/pki are root's) with
  every capability dropped, and is not privileged. It mounts the node's /etc
  and /var/log/pods read-only under /host, and --data-dir-parent (/var/lib by
  default, the parent of /var/lib/etcd and /var/lib/rancher) writable at
  /host/var/lib: doctor creates its probe directory beside etcd's data dir
  there and removes it. Pass --data-dir-parent when the data dir is elsewhere
  (e.g. /data for /data/etcd, then mounted writable at /host/data); /var/lib
  is then mounted read-only as well, for k3s's and RKE2's files under
  /var/lib/rancher. It needs a privileged namespace, e.g. kube-system.

Modes: --mode disk (default) runs 'etcdperf disk --dir DIR -o json'; --mode
doctor runs 'etcdperf doctor --data-dir DIR -o json'; --mode node-doctor runs
'etcdperf doctor --node --root /host -o json'. Arguments after
'--' are appended to that command line; Kubernetes expands $(NODE_NAME),
$(POD_NAME) and $(JOB_COMPLETION_INDEX) in them. For doctor they are checked
with doctor's own flags before anything is printed, and a soak (-- --soak 20m)
makes the Job's default --deadline as much longer (15m and the soak).

The Job is indexed (one index per pod), never retried (a second run is another
sample; with several pods each index fails on its own), ends after --deadline,
and is deleted with its pods --ttl after it finishes. Its pods carry the label
app.kubernetes.io/instance=<job name>. Resource requests and limits default to
what the mode needs; the CPU limit of 2 for disk keeps the probe on its fast
path (Go runs on as many CPUs at once as the CPU limit, its GOMAXPROCS, and
the probe's direct system calls need one to spare).

The manifest only prints: nothing is sent to a cluster. To run a Job again,
delete it first (kubectl delete job NAME) or give the new one another --name.`,
		Example: `  # Probe the etcd disk of control-plane node cp-1, then read the Result
  etcdperf k8s manifest --node cp-1 -n kube-system | kubectl apply -f -
  kubectl -n kube-system logs -f --pod-running-timeout=5m job/etcdperf-disk-cp-1 |
    etcdperf report - -o cp-1.html

  # All three control-plane nodes at once (one pod each); when the Job has
  # finished (Complete, or Failed when a disk failed its verdict), all logs
  etcdperf k8s manifest --node cp-1,cp-2,cp-3 -n kube-system | kubectl apply -f -
  until kubectl -n kube-system get job etcdperf-disk -o jsonpath='{.status.conditions[*].type}' |
    grep -qE 'Complete|Failed'; do sleep 5; done
  kubectl -n kube-system logs -l app.kubernetes.io/instance=etcdperf-disk --tail=-1 |
    etcdperf report - -o disks.html

  # etcd's data dir is a disk of its own, mounted at /var/lib/etcd
  etcdperf k8s manifest --node cp-1 -n kube-system --host-dir /var/lib/etcd

  # A fresh 20 GiB volume of StorageClass gp3, probed for 30 seconds
  etcdperf k8s manifest --storage-class gp3 --size 20Gi -- --runtime 30s

  # Three volumes of the class at once, running doctor, written to a file
  etcdperf k8s manifest --storage-class ceph-rbd --size 10Gi --parallel 3 --mode doctor -o job.yaml

  # Does a fresh gp2 volume still carry etcd once its burst credits run out?
  # doctor's sweep, then its answer held for 20 minutes (the Job's deadline
  # becomes 35m)
  etcdperf k8s manifest --storage-class gp2 --size 100Gi --mode doctor -- --soak 20m

  # Diagnose the etcd member of control-plane node cp-1 where it runs
  etcdperf k8s manifest --mode node-doctor --node cp-1 -n kube-system | kubectl apply -f -
  kubectl -n kube-system logs -f --pod-running-timeout=5m job/etcdperf-node-doctor-cp-1

  # Delete the Job and its pods before the TTL does
  kubectl delete job etcdperf-disk-cp-1`,
		Args: func(cmd *cobra.Command, args []string) error {
			if dash := cmd.ArgsLenAtDash(); dash != 0 && len(args) > 0 {
				return usageError("%s takes no arguments, got %q; arguments for etcdperf in the pod go after -- (see '%s --help')", cmd.CommandPath(), args, cmd.CommandPath())
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&o.Nodes, "node", nil, "node whose etcd disk to probe (repeatable or comma-separated: one pod per node)")
	fl.StringVar(&o.StorageClass, "storage-class", "", "StorageClass of a fresh volume to probe (with --size)")
	fl.Var(&size, "size", "size of the volume with --storage-class, a Kubernetes quantity (e.g. 10Gi)")
	fl.StringVar(&mode, "mode", string(k8s.ModeDisk), "what the pod runs: disk (the WAL fdatasync probe), doctor, or node-doctor (doctor --node on the control-plane nodes' own etcd)")
	fl.StringVar(&o.DataDirParent, "data-dir-parent", "", "with --mode node-doctor: node directory holding etcd's data dir, mounted writable for the probe (default "+k8s.DefaultDataDirParent+")")
	fl.StringVarP(&o.Namespace, "namespace", "n", "", "namespace of the Job (default: the one kubectl uses)")
	fl.StringVar(&o.Name, "name", "", "name of the Job (default etcdperf-<mode>-<node or storage class>)")
	fl.StringVar(&o.Image, "image", k8s.DefaultImage(version.String()), "container image with etcdperf in its PATH (the repository's Dockerfile builds it)")
	fl.StringVar(&dataDir, "etcd-data-dir", k8s.DefaultEtcdDataDir, "etcd's data dir on the node, with --node")
	fl.StringVar(&o.HostDir, "host-dir", "", "node directory in which the pod creates etcdperf-probe, with --node (default: the parent of --etcd-data-dir)")
	fl.Int64Var(&runAs, "run-as-user", 0, "uid of the pod with --node: the owner of --host-dir (root owns /var/lib)")
	fl.IntVar(&o.Parallel, "parallel", 0, "number of pods, each with its own volume, with --storage-class; with --mode node-doctor and no --node, the number of control-plane nodes to run on, one pod each (with --node: one per node)")
	fl.DurationVar(&o.TTL, "ttl", k8s.DefaultTTL, "delete the Job and its pods this long after it finishes")
	fl.DurationVar(&o.Deadline, "deadline", k8s.DefaultDeadline, "end the Job after this long, whatever its pods are doing")
	fl.StringVar(&requests, "requests", "", "container resource requests, e.g. cpu=250m,memory=64Mi (default: the mode's)")
	fl.StringVar(&limits, "limits", "", "container resource limits, e.g. cpu=2,memory=256Mi (default: the mode's)")
	fl.StringVar(&o.PriorityClass, "priority-class", "", "PriorityClass of the pods (default: the cluster's default priority, which preempts nothing)")
	fl.StringVarP(&output, "output", "o", "yaml", "yaml for stdout, or a file to write (.yaml or .yml)")

	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		file, err := manifestOutput(output)
		if err != nil {
			return err
		}
		if file != "" {
			if err := checkWritable("-o", file); err != nil {
				return err
			}
		}
		o.Mode = k8s.Mode(mode)
		o.Size = size.q
		if fl.Changed("etcd-data-dir") {
			o.EtcdDataDir = dataDir
		}
		if fl.Changed("run-as-user") {
			o.RunAsUser = &runAs
		}
		if fl.Changed("ttl") && o.TTL == 0 {
			return usageError("--ttl 0 would delete the Job, and the logs that hold its Results, as soon as it finishes; give a duration, e.g. --ttl 10m")
		}
		if fl.Changed("deadline") && o.Deadline == 0 {
			return usageError("--deadline 0 would let a pod that never starts keep the Job forever; give a duration, e.g. --deadline 30m")
		}
		if o.Requests, err = parseResourcesFlag("--requests", requests); err != nil {
			return err
		}
		if o.Limits, err = parseResourcesFlag("--limits", limits); err != nil {
			return err
		}
		if cmd.ArgsLenAtDash() == 0 {
			o.Args = args
		}
		if err := k8s.CheckArgs(o.Mode, o.Args); err != nil {
			return usageError("%v", err)
		}
		if o.Mode == k8s.ModeDisk || o.Mode == "" {
			if err := checkDiskArgs(o.Args); err != nil {
				return err
			}
		} else if o.Mode == k8s.ModeDoctor || o.Mode == k8s.ModeNodeDoctor {
			soak, err := checkDoctorArgs(o.Args)
			if err != nil {
				return err
			}
			// A soak makes doctor as much longer: the Job's deadline
			// grows with it, or a deadline given by name must leave it
			// the time.
			if !fl.Changed("deadline") {
				o.Deadline = k8s.DefaultDeadline + soak
			} else if soak > 0 && o.Deadline <= soak {
				return usageError("--deadline %s ends the Job before doctor's --soak %s does: give --deadline %s or more, or leave it out (then it is %s)",
					units.ShortDuration(o.Deadline), units.ShortDuration(soak), units.ShortDuration(k8s.DefaultDeadline+soak), units.ShortDuration(k8s.DefaultDeadline+soak))
			}
		}
		job, err := k8s.Job(o)
		if err != nil {
			return usageError("%s", strings.ReplaceAll(err.Error(), "\n", "; "))
		}
		var buf bytes.Buffer
		if err := k8s.WriteYAML(&buf, job); err != nil {
			return err
		}
		if file == "" {
			_, err = cmd.OutOrStdout().Write(buf.Bytes())
		} else {
			err = result.WriteFileAtomic(file, buf.Bytes())
		}
		if err == nil && !k8s.ImagePublished && !fl.Changed("image") {
			fmt.Fprintf(cmd.ErrOrStderr(), "etcdperf: note: no release has published %s yet, so pods with it stay in ImagePullBackOff: "+
				"build and push the image (docker build -t REGISTRY/etcdperf:TAG . && docker push REGISTRY/etcdperf:TAG) and pass --image REGISTRY/etcdperf:TAG\n", o.Image)
		}
		return err
	}
	return cmd
}

// manifestOutput checks -o: "yaml" (stdout) or a .yaml/.yml file.
func manifestOutput(v string) (file string, err error) {
	switch ext := strings.ToLower(filepath.Ext(v)); {
	case v == "yaml":
		return "", nil
	case ext == ".yaml" || ext == ".yml":
		return v, nil
	}
	return "", usageError("-o %q: the manifest is YAML: use -o yaml (stdout) or a file ending in .yaml or .yml", v)
}

func parseResourcesFlag(flag, v string) (corev1.ResourceList, error) {
	if v == "" {
		return nil, nil
	}
	l, err := k8s.ParseResources(v)
	if err != nil {
		return nil, usageError("%s: %v", flag, err)
	}
	return l, nil
}

// checkDiskArgs parses the arguments meant for `etcdperf disk` in the pod
// with the disk command's own flags, so that a typo fails here and not in
// the cluster.
func checkDiskArgs(args []string) error {
	if len(args) == 0 {
		return nil
	}
	dc := newDiskCmd()
	if err := dc.ParseFlags(args); err != nil {
		return usageError("the arguments after -- are for 'etcdperf disk' in the pod: %v (see 'etcdperf disk --help')", err)
	}
	if rest := dc.Flags().Args(); len(rest) > 0 {
		return usageError("the arguments after -- are for 'etcdperf disk' in the pod, which takes no arguments, got %q", rest)
	}
	return nil
}

// checkDoctorArgs parses the arguments meant for `etcdperf doctor` in the
// pod with doctor's own flags, so that a typo fails here and not in the
// cluster, and returns the --soak they ask for (0: none).
func checkDoctorArgs(args []string) (time.Duration, error) {
	if len(args) == 0 {
		return 0, nil
	}
	dc := newDoctorCmd()
	if err := dc.ParseFlags(args); err != nil {
		return 0, usageError("the arguments after -- are for 'etcdperf doctor' in the pod: %v (see 'etcdperf doctor --help')", err)
	}
	if rest := dc.Flags().Args(); len(rest) > 0 {
		return 0, usageError("the arguments after -- are for 'etcdperf doctor' in the pod, which takes no arguments, got %q", rest)
	}
	return dc.Flags().GetDuration("soak")
}

// quantityValue is a flag holding a Kubernetes quantity (10Gi, 500M).
type quantityValue struct{ q resource.Quantity }

func (v *quantityValue) String() string {
	if v.q.IsZero() {
		return ""
	}
	return v.q.String()
}

func (v *quantityValue) Set(s string) error {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return fmt.Errorf("%q is not a Kubernetes quantity (e.g. 10Gi, 500Mi)", s)
	}
	if q.Sign() <= 0 {
		return fmt.Errorf("%q must be positive", s)
	}
	v.q = q
	return nil
}

func (*quantityValue) Type() string { return "quantity" }

func newK8sInDirCmd() *cobra.Command {
	var dir, beside, name string
	cmd := &cobra.Command{
		Use:    "in-dir --dir DIR [--beside PATH] -- COMMAND [ARGS...]",
		Hidden: true,
		Short:  "Run an etcdperf command in a directory it creates first and removes after (the Job of 'k8s manifest --node' uses it)",
		Long: `Create DIR (one level, mode 0700; an existing directory is used as it is),
after checking that it is on the same file system as PATH (etcd's data dir),
run the etcdperf command given after '--', then remove DIR if it is empty.
With --name, the Result the command prints as JSON is given that name
(the Job passes the node's: in a pod, the host name is the pod's), so that
'etcdperf report' labels each node's run. The exit code is the command's. The Job of 'etcdperf k8s manifest --node'
runs it; there is little reason to run it by hand.`,
		Example: `  etcdperf k8s in-dir --dir /host/var/lib/etcdperf-probe --beside /host/var/lib/etcd -- \
    disk --dir /host/var/lib/etcdperf-probe -o json`,
	}
	cmd.Flags().StringVar(&dir, "dir", "", "directory to create, run in and remove")
	cmd.Flags().StringVar(&beside, "beside", "", "a path that DIR must share a file system with (etcd's data dir)")
	cmd.Flags().StringVar(&name, "name", "", "name the Result the command prints as JSON, unless it has a name (the Job passes the node's)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if cmd.ArgsLenAtDash() != 0 || len(args) == 0 {
			return usageError("give the etcdperf command to run after --, e.g. %s --dir DIR -- disk --dir DIR", cmd.CommandPath())
		}
		if dir == "" {
			return usageError("%s needs --dir", cmd.CommandPath())
		}
		pd, err := k8s.CreateProbeDir(dir, beside)
		if err != nil {
			return err
		}
		stderr := cmd.ErrOrStderr()
		where := ""
		if node := os.Getenv("NODE_NAME"); node != "" {
			where = " on node " + node
		}
		same := ""
		if beside != "" {
			same = ", the same as etcd's data " + beside
		}
		fmt.Fprintf(stderr, "etcdperf: probing %s%s (file system %s%s)\n", pd.Path, where, pd.Device, same)
		sub := NewRoot()
		sub.SetArgs(args)
		var out bytes.Buffer
		sub.SetOut(&out)
		sub.SetErr(stderr)
		runErr := sub.ExecuteContext(cmd.Context())
		if _, err := cmd.OutOrStdout().Write(k8s.NameResult(out.Bytes(), name)); err != nil && runErr == nil {
			runErr = err
		}
		if err := pd.Remove(); err != nil {
			if runErr == nil && !errors.Is(err, k8s.ErrNotEmpty) {
				return err
			}
			fmt.Fprintf(stderr, "etcdperf: %v\n", err)
		}
		return runErr
	}
	return cmd
}
