package cli

import (
	"errors"
	"slices"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/dbfile"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/pipeline"
)

func newDBCmd() *cobra.Command {
	var (
		o         pipeline.DBOptions
		quota     int64
		prefixes  []string
		overrides []string
	)
	cmd := &cobra.Command{
		Use:   "db FILE [FILE...]",
		Short: "Read a snapshot or a copy of etcd's database: what fills it, its history, its free pages and its quota",
		Long: `Read an etcd database file - a snapshot (etcdctl snapshot save) or a copy of
a member's member/snap/db - read-only with bbolt, etcd's own storage, and say
what fills it:

  - per Kubernetes resource (/registry/pods/..., /registry/<group>/<plural>/...
    for custom resources, events, leases, CRDs) and per namespace: the live
    keys and their bytes (keys and values as clients see them), and the
    history etcd keeps for them: the revisions that are not the latest of
    their key, kept until a compaction passes them; keys outside
    Kubernetes' prefixes are grouped by their first path segment;
  - the keys with the most revisions (churn: a controller that rewrites an
    object every second);
  - the leases, and how many keys each holds;
  - the file against its B-tree in use: bbolt's free pages, which count
    against the quota until a defragmentation gives them back, and the
    quota's headroom (--quota-backend-bytes, etcd's 2 GiB by default).

A running member locks its database: the file is refused at once (exit 2);
take a snapshot instead, which is consistent and costs the member nothing
but the copy. The file is never written, nor waited on. A snapshot's
SHA-256 (which etcdctl snapshot save appends) is checked.

The verdict is FAIL (exit 1) when the database is past db_quota_used's limit
(80% of the quota), WARN past half of it, or when a snapshot's SHA-256 does
not match its content.

Given the databases of several members of one cluster (copies of their
member/snap/db taken while they were stopped, or snapshots), db compares
them instead: the raft position each was written at (consistent index,
term), its newest and compacted revision, and a hash (CRC-32C) of the
revisions they all hold. It names the file to restore from (the newest
raft position among those that agree, as before --force-new-cluster or
etcdutl snapshot restore) and the files whose history diverged (exit 1).`,
		Example: `  # What fills a cluster's etcd
  etcdctl snapshot save snap.db
  etcdperf db snap.db

  # Against the quota the members run with, as JSON, and the table per resource as CSV
  etcdperf db snap.db --quota-backend-bytes 8GiB -o db.json -o resources.csv

  # What grew in a day, per resource
  etcdperf db monday.db -o monday.json
  etcdperf db tuesday.db -o tuesday.json
  etcdperf compare monday.json tuesday.json

  # OpenShift keeps its objects under /kubernetes.io/ and /openshift.io/ (read by
  # default); an API server with its own --etcd-prefix
  etcdperf db snap.db --etcd-prefix /my-cluster/registry

  # A cluster that lost its quorum: which member's data to restore from
  etcdperf db m1/member/snap/db m2/member/snap/db m3/member/snap/db`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError("give a database file: a snapshot (etcdctl snapshot save snap.db) or a copy of a member's member/snap/db; several members' to compare them (see '%s --help')", cmd.CommandPath())
			}
			return nil
		},
	}
	out := addOutputFlag(cmd)
	fl := cmd.Flags()
	fl.Var(sizeValue{&quota}, "quota-backend-bytes", "the members' --quota-backend-bytes (default etcd's 2 GiB)")
	fl.StringArrayVar(&prefixes, "etcd-prefix", nil, "where kube-apiserver keeps its objects, its --etcd-prefix (repeatable; default /registry, /kubernetes.io and /openshift.io)")
	fl.IntVar(&o.Read.Top, "top", dbfile.DefaultTop, "how many namespaces, keys with most revisions and leases to list")
	fl.StringArrayVar(&overrides, "limit", nil, "override a limit: NAME=VALUE[,WARN], e.g. db_quota_used=90%,70% or db_fragmented_size=50m (repeatable)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		sinks, err := out.sinks()
		if err != nil {
			return err
		}
		if o.Read.Top < 1 || o.Read.Top > 10000 {
			return usageError("--top must be between 1 and 10000, got %d", o.Read.Top)
		}
		if cmd.Flags().Changed("quota-backend-bytes") && quota < 1<<20 {
			return usageError("--quota-backend-bytes %d is too small: etcd's quota is a size such as 2GiB or 8GiB", quota)
		}
		o.Read.Quota = quota
		if len(prefixes) > 0 {
			if o.Read.KubePrefixes = dbfile.NormalizePrefixes(prefixes); len(o.Read.KubePrefixes) == 0 {
				return usageError("--etcd-prefix needs a prefix such as /registry")
			}
		} else {
			o.Read.KubePrefixes = dbfile.DefaultKubePrefixes
		}
		if o.Criteria, err = limits.Override(limits.Table, overrides); err != nil {
			return usageError("%v", err)
		}
		o.Path = args[0]
		if len(args) > 1 {
			for i, a := range args {
				if slices.Contains(args[:i], a) {
					return usageError("%s is given twice: give each member's database once", a)
				}
			}
			o.Compare = args
		}
		res, runErr := pipeline.DB(cmd.Context(), o)
		var fe *dbfile.FileError
		if errors.As(runErr, &fe) {
			return &exitError{code: ExitError, err: runErr}
		}
		return finish(cmd, sinks, res, runErr)
	}
	return cmd
}
