package cli

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/discover"
	"github.com/etcdperf/etcdperf/internal/pipeline"
)

func newDiscoverCmd() *cobra.Command {
	var root string
	cmd := &cobra.Command{
		Use:   "discover [--root DIR]",
		Short: "Find the etcd that runs on this node: its data dir, endpoints, certificates and log",
		Long: `Find, read-only, the etcd that runs on this node from the files its installer
leaves, and print its name, data dir, client endpoints, metrics URL, the CA,
certificate and key a client on the node connects with, and where its log is.

Looked at, in this order:
  kubeadm    /etc/kubernetes/manifests/etcd.yaml (the static pod's flags);
             certificates /etc/kubernetes/pki/etcd/healthcheck-client.crt/key,
             else /etc/kubernetes/pki/apiserver-etcd-client.crt/key, CA
             /etc/kubernetes/pki/etcd/ca.crt; log /var/log/pods/kube-system_etcd-*
  k3s, RKE2  /var/lib/rancher/{k3s,rke2}/server/db/etcd/config (etcd's config
             file); certificates server/tls/etcd/client.crt/key, CA
             server/tls/etcd/server-ca.crt
  OpenShift  /etc/kubernetes/manifests/etcd-pod.yaml, else the newest
             /etc/kubernetes/static-pod-resources/etcd-pod-N/etcd-pod.yaml;
             the node's peer certificate and the serving CA under
             /etc/kubernetes/static-pod-resources/etcd-certs
  systemd    the ETCD_ variables of /etc/default/etcd, /etc/etcd/etcd.conf or
             /etc/sysconfig/etcd, and /etc/etcd/etcd.conf.yml

Listen addresses 0.0.0.0 and :: are given as 127.0.0.1, a loopback endpoint
first. Certificates that do not exist are listed as missing. A file that
cannot be read or parsed is reported and the other sources are still read.
A file that sets nothing for etcd (only comments, as Debian's etcd-server
installs /etc/default/etcd) is no find. Reading the certificates'
directories usually needs root.

It reads files, and checks whether anything listens at the client
endpoints found that are addresses of this host: in the host's listening
sockets, else with a connection opened and closed at once, nothing sent;
other hosts are never tried. Where the connection is refused it says
"found in FILE, but nothing listens at ENDPOINT".

--root DIR reads the node's files under DIR instead of / (a node's file
system mounted elsewhere, e.g. /host in a pod, or a copy of its /etc).

When no etcd is found it says so in one line, with what was looked at, and
exits 2. When etcd's configuration is found but nothing listens at any of
it, no etcd runs here: it prints what it found, says so in one line, and
exits 2.`,
		Example: `  # What runs here, and the flags to connect to it
  sudo etcdperf discover

  # A node's file system mounted at /host (in a pod with a hostPath volume)
  etcdperf discover --root /host -o json`,
		Args: noArgs,
	}
	out := addOutputFlag(cmd)
	cmd.Flags().StringVar(&root, "root", "/", "read the node's files under this directory")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		sinks, err := out.sinks()
		if err != nil {
			return err
		}
		res, runErr := pipeline.Discover(cmd.Context(), root)
		var nf *discover.NotFoundError
		var nl *discover.NotListeningError
		switch {
		case errors.As(runErr, &nf):
			return &exitError{code: ExitError, err: runErr}
		case errors.As(runErr, &nl):
			// What was found is still written: its data dir and log
			// say where to look for why it does not run.
			return finish(cmd, sinks, res, &exitError{code: ExitError, err: runErr})
		case runErr != nil:
			return usageError("%v", runErr)
		}
		return finish(cmd, sinks, res, nil)
	}
	return cmd
}
