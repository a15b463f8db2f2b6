package cli

// k8sManifestLong is k8sManifest's help.
const k8sManifestLong = `Print the YAML of a Kubernetes Job that runs etcdperf in the cluster, for
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
delete it first (kubectl delete job NAME) or give the new one another --name.`

// k8sManifestExample is k8sManifest's examples.
const k8sManifestExample = `  # Probe the etcd disk of control-plane node cp-1, then read the Result
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
  kubectl delete job etcdperf-disk-cp-1`
