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
	cmd := &cobra.Command{
		Use:     "manifest (--node NAME... | --storage-class SC --size 10Gi | --mode node-doctor [--node NAME...]) [flags] [-- ETCDPERF ARGS...]",
		Short:   "Print the YAML of a Job that runs etcdperf on a node's etcd disk, a StorageClass or control-plane etcd (--mode node-doctor)",
		Long:    k8sManifestLong,
		Example: k8sManifestExample,
		Args: func(cmd *cobra.Command, args []string) error {
			if dash := cmd.ArgsLenAtDash(); dash != 0 && len(args) > 0 {
				return usageError("%s takes no arguments, got %q; arguments for etcdperf in the pod go after -- (see '%s --help')", cmd.CommandPath(), args, cmd.CommandPath())
			}
			return nil
		},
	}
	f := addManifestFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		file, err := f.complete(cmd, args)
		if err != nil {
			return err
		}
		return f.run(cmd, file)
	}
	return cmd
}

// manifestFlags are k8s manifest's flags as given; o holds the ones that
// are the Job's options as they are.
type manifestFlags struct {
	o        k8s.Options
	mode     string
	size     quantityValue
	dataDir  string
	requests string
	limits   string
	output   string
	runAs    int64
}

func addManifestFlags(cmd *cobra.Command) *manifestFlags {
	f := &manifestFlags{}
	o := &f.o
	fl := cmd.Flags()
	fl.StringSliceVar(&o.Nodes, "node", nil, "node whose etcd disk to probe (repeatable or comma-separated: one pod per node)")
	fl.StringVar(&o.StorageClass, "storage-class", "", "StorageClass of a fresh volume to probe (with --size)")
	fl.Var(&f.size, "size", "size of the volume with --storage-class, a Kubernetes quantity (e.g. 10Gi)")
	fl.StringVar(&f.mode, "mode", string(k8s.ModeDisk), "what the pod runs: disk (the WAL fdatasync probe), doctor, or node-doctor (doctor --node on the control-plane nodes' own etcd)")
	fl.StringVar(&o.DataDirParent, "data-dir-parent", "", "with --mode node-doctor: node directory holding etcd's data dir, mounted writable for the probe (default "+k8s.DefaultDataDirParent+")")
	fl.StringVarP(&o.Namespace, "namespace", "n", "", "namespace of the Job (default: the one kubectl uses)")
	fl.StringVar(&o.Name, "name", "", "name of the Job (default etcdperf-<mode>-<node or storage class>)")
	fl.StringVar(&o.Image, "image", k8s.DefaultImage(version.String()), "container image with etcdperf in its PATH (the repository's Dockerfile builds it)")
	fl.StringVar(&f.dataDir, "etcd-data-dir", k8s.DefaultEtcdDataDir, "etcd's data dir on the node, with --node")
	fl.StringVar(&o.HostDir, "host-dir", "", "node directory in which the pod creates etcdperf-probe, with --node (default: the parent of --etcd-data-dir)")
	fl.Int64Var(&f.runAs, "run-as-user", 0, "uid of the pod with --node: the owner of --host-dir (root owns /var/lib)")
	fl.IntVar(&o.Parallel, "parallel", 0, "number of pods, each with its own volume, with --storage-class; with --mode node-doctor and no --node, the number of control-plane nodes to run on, one pod each (with --node: one per node)")
	fl.DurationVar(&o.TTL, "ttl", k8s.DefaultTTL, "delete the Job and its pods this long after it finishes")
	fl.DurationVar(&o.Deadline, "deadline", k8s.DefaultDeadline, "end the Job after this long, whatever its pods are doing")
	fl.StringVar(&f.requests, "requests", "", "container resource requests, e.g. cpu=250m,memory=64Mi (default: the mode's)")
	fl.StringVar(&f.limits, "limits", "", "container resource limits, e.g. cpu=2,memory=256Mi (default: the mode's)")
	fl.StringVar(&o.PriorityClass, "priority-class", "", "PriorityClass of the pods (default: the cluster's default priority, which preempts nothing)")
	fl.StringVarP(&f.output, "output", "o", "yaml", "yaml for stdout, or a file to write (.yaml or .yml)")

	return f
}

// validate checks the flags by their values alone (given says which were
// given by name) and sets the Job's options they make; args are the
// arguments for etcdperf in the pod. The arguments of doctor are checked
// with doctor's own flags.
func (f *manifestFlags) validate(given func(string) bool, args []string) error {
	o := &f.o
	o.Mode, o.Size, o.Args = k8s.Mode(f.mode), f.size.q, args
	if given("etcd-data-dir") {
		o.EtcdDataDir = f.dataDir
	}
	if given("run-as-user") {
		o.RunAsUser = &f.runAs
	}
	switch {
	case given("ttl") && o.TTL == 0:
		return usageError("--ttl 0 would delete the Job, and the logs that hold its Results, as soon as it finishes; give a duration, e.g. --ttl 10m")
	case given("deadline") && o.Deadline == 0:
		return usageError("--deadline 0 would let a pod that never starts keep the Job forever; give a duration, e.g. --deadline 30m")
	}
	var err error
	if o.Requests, err = parseResourcesFlag("--requests", f.requests); err != nil {
		return err
	}
	if o.Limits, err = parseResourcesFlag("--limits", f.limits); err != nil {
		return err
	}
	if err := k8s.CheckArgs(o.Mode, o.Args); err != nil {
		return usageError("%v", err)
	}
	if o.Mode == k8s.ModeDisk || o.Mode == "" {
		return checkDiskArgs(o.Args)
	}
	if o.Mode != k8s.ModeDoctor && o.Mode != k8s.ModeNodeDoctor {
		return nil
	}
	soak, err := checkDoctorArgs(o.Args, o.Mode == k8s.ModeNodeDoctor)
	if err != nil {
		return err
	}
	// A soak makes doctor as much longer: the Job's deadline grows with
	// it, or a deadline given by name must leave it the time.
	if !given("deadline") {
		o.Deadline = k8s.DefaultDeadline + soak
	} else if soak > 0 && o.Deadline <= soak {
		return usageError("--deadline %s ends the Job before doctor's --soak %s does: give --deadline %s or more, or leave it out (then it is %s)",
			units.ShortDuration(o.Deadline), units.ShortDuration(soak), units.ShortDuration(k8s.DefaultDeadline+soak), units.ShortDuration(k8s.DefaultDeadline+soak))
	}
	return nil
}

// complete checks -o and the flags; it returns the file to write (none:
// stdout).
func (f *manifestFlags) complete(cmd *cobra.Command, args []string) (string, error) {
	file, err := manifestOutput(f.output)
	if err != nil {
		return "", err
	}
	if file != "" {
		if err := checkWritable("-o", file); err != nil {
			return "", err
		}
	}
	if cmd.ArgsLenAtDash() != 0 {
		args = nil
	}
	return file, f.validate(cmd.Flags().Changed, args)
}

// run prints the Job's YAML, or writes it to file.
func (f *manifestFlags) run(cmd *cobra.Command, file string) error {
	job, err := k8s.Job(f.o)
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
	if err == nil && !k8s.ImagePublished && !cmd.Flags().Changed("image") {
		fmt.Fprintf(cmd.ErrOrStderr(), "etcdperf: note: no release has published %s yet, so pods with it stay in ImagePullBackOff: "+
			"build and push the image (docker build -t REGISTRY/etcdperf:TAG . && docker push REGISTRY/etcdperf:TAG) and pass --image REGISTRY/etcdperf:TAG\n", f.o.Image)
	}
	return err
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
func checkDoctorArgs(args []string, node bool) (time.Duration, error) {
	if len(args) == 0 {
		return 0, nil
	}
	dc := &cobra.Command{Use: "doctor"}
	f := addDoctorFlags(dc)
	if err := dc.ParseFlags(args); err != nil {
		return 0, usageError("the arguments after -- are for 'etcdperf doctor' in the pod: %v (see 'etcdperf doctor --help')", err)
	}
	if rest := dc.Flags().Args(); len(rest) > 0 {
		return 0, usageError("the arguments after -- are for 'etcdperf doctor' in the pod, which takes no arguments, got %q", rest)
	}
	if err := f.validate(dc.Flags().Changed, node); err != nil {
		return 0, usageError("the arguments after -- are for 'etcdperf doctor' in the pod: %v", err)
	}
	return f.capacity.soak.duration, nil
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
