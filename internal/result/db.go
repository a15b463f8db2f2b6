package result

// DB is what an etcd database file holds, as `etcdperf db` read it from a
// snapshot or a copy of a member's member/snap/db: its keys, their bytes
// and their history per Kubernetes resource and per namespace, the keys
// with the most revisions, the leases, and the file against its B-tree in
// use. Sizes are bytes.
type DB struct {
	// Path is the file read.
	Path string `json:"path"`
	// FileSize is the file's size; Size the B-tree's pages up to its
	// high-water mark (etcd's etcd_mvcc_db_total_size_in_bytes, what the
	// quota is held against), SizeInUse that less the free pages
	// (etcd_mvcc_db_total_size_in_use_in_bytes).
	FileSize  float64 `json:"file_size"`
	Size      float64 `json:"size"`
	SizeInUse float64 `json:"size_in_use"`
	// PageSize is bbolt's page size; Pages the high-water mark in pages;
	// FreePages the pages past the two meta pages that its tree does not
	// reach (what bbolt's Stats().FreePageN counts for a file without a
	// free list, as etcd writes them); PendingPages 0 (kept for Results
	// of earlier versions, which read bbolt's PendingPageN).
	PageSize     int   `json:"page_size"`
	Pages        int64 `json:"pages"`
	FreePages    int64 `json:"free_pages"`
	PendingPages int64 `json:"pending_pages"`
	// Reclaimable is what a defragmentation gives back: the file less the
	// pages in use (at least; the rewrite also packs half-empty pages).
	Reclaimable float64 `json:"reclaimable"`
	// Snapshot says the file ends with the SHA-256 etcd's snapshot stream
	// appends (etcdctl snapshot save); SnapshotHash is "ok" or "mismatch".
	Snapshot     bool   `json:"snapshot,omitempty"`
	SnapshotHash string `json:"snapshot_hash,omitempty"`
	// Quota is the backend quota the file is held against
	// (--quota-backend-bytes); QuotaSource says where it comes from.
	Quota       float64 `json:"quota"`
	QuotaSource string  `json:"quota_source"`
	// Revision is the newest revision in the file; CompactRevision the
	// last compaction that finished (meta finishedCompactRev) and
	// ScheduledCompactRevision the last one scheduled, which differs when
	// one did not finish.
	Revision                 int64 `json:"revision"`
	CompactRevision          int64 `json:"compact_revision"`
	ScheduledCompactRevision int64 `json:"scheduled_compact_revision,omitempty"`
	// ConsistentIndex and Term are the raft position the file was
	// written at (meta bucket).
	ConsistentIndex uint64 `json:"consistent_index"`
	Term            uint64 `json:"term,omitempty"`
	// Totals are over every key of the file.
	Totals DBUsage `json:"totals"`
	// KubePrefixes are the prefixes read as kube-apiserver's
	// (--etcd-prefix); the others are grouped by their first segment.
	KubePrefixes []string `json:"kube_prefixes"`
	// Resources holds one row per Kubernetes resource and per group of
	// other keys, most bytes (live and history) first.
	Resources []DBResource `json:"resources"`
	// Namespaces holds the namespaces with most bytes, up to --top;
	// NamespacesTotal counts them all.
	Namespaces      []DBNamespace `json:"namespaces,omitempty"`
	NamespacesTotal int           `json:"namespaces_total"`
	// Churn lists the keys with the most revisions kept, up to --top.
	Churn []DBKey `json:"churn,omitempty"`
	// Leases are the lease bucket's leases and the keys attached to them.
	Leases DBLeases `json:"leases"`
	// Buckets are bbolt's buckets with their keys and bytes in use.
	Buckets []DBBucket `json:"buckets"`
	// Alarms are the alarms raised in the cluster (NOSPACE, CORRUPT) as
	// the file holds them.
	Alarms []string `json:"alarms,omitempty"`
	// Notes say what the reader must know to trust the numbers.
	Notes []string `json:"notes,omitempty"`
}

// DBUsage is what a set of keys holds. Bytes are the keys' and values'
// lengths as clients see them; StoredBytes what etcd stores for them in
// its key bucket (revision keys and encoded KeyValues, without bbolt's
// page overhead).
type DBUsage struct {
	// Keys are the live keys (their latest revision is not a deletion);
	// LiveBytes their latest revisions' keys and values.
	Keys      int64   `json:"keys"`
	LiveBytes float64 `json:"live_bytes"`
	// HistoryRevisions are the revisions kept that are not the latest of
	// their key (kept since the last compaction), deletions included;
	// HistoryBytes their keys and values.
	HistoryRevisions int64   `json:"history_revisions"`
	HistoryBytes     float64 `json:"history_bytes"`
	// DeletedKeys are keys whose latest revision is a deletion, kept until
	// a compaction passes it.
	DeletedKeys int64   `json:"deleted_keys,omitempty"`
	StoredBytes float64 `json:"stored_bytes"`
	// LeasedKeys are live keys attached to a lease.
	LeasedKeys int64 `json:"leased_keys,omitempty"`
}

// Bytes is the live and history bytes together.
func (u DBUsage) Bytes() float64 { return u.LiveBytes + u.HistoryBytes }

// DBResource is one Kubernetes resource, or one group of other keys.
type DBResource struct {
	// Name is the resource as its key names it: "pods",
	// "services/specs", "apiextensions.k8s.io/customresourcedefinitions",
	// "cert-manager.io/certificates"; for other keys their first path
	// segment ("/myapp").
	Name string `json:"name"`
	// Class is "kubernetes" (a built-in resource), "crd" (the
	// CustomResourceDefinitions), "custom" (a custom resource, under its
	// group) or "other" (keys outside the Kubernetes prefixes).
	Class string `json:"class"`
	// Prefix is the keys' common prefix.
	Prefix string `json:"prefix"`
	DBUsage
	// Namespaces counts the namespaces the resource has keys in (0: a
	// cluster-scoped resource).
	Namespaces int `json:"namespaces,omitempty"`
}

// The classes of a DBResource.
const (
	DBClassKubernetes = "kubernetes"
	DBClassCRD        = "crd"
	DBClassCustom     = "custom"
	DBClassOther      = "other"
)

// DBNamespace is what one Kubernetes namespace holds, over its resources.
type DBNamespace struct {
	Name string `json:"name"`
	DBUsage
}

// DBKey is one key and its revisions kept (churn).
type DBKey struct {
	Key      string `json:"key"`
	Resource string `json:"resource"`
	// Revisions are the key's revisions kept, the latest included.
	Revisions    int64   `json:"revisions"`
	HistoryBytes float64 `json:"history_bytes"`
	// Deleted is true when its latest revision is a deletion.
	Deleted bool `json:"deleted,omitempty"`
}

// DBLeases are the leases of the file and the keys attached to them.
type DBLeases struct {
	// Count is the leases in the lease bucket; Keys the live keys
	// attached to one; Empty the leases no live key is attached to;
	// Missing the live keys attached to a lease the bucket does not hold.
	Count   int64 `json:"count"`
	Keys    int64 `json:"keys"`
	Empty   int64 `json:"empty"`
	Missing int64 `json:"missing,omitempty"`
	// Top lists the leases with the most keys, up to --top.
	Top []DBLease `json:"top,omitempty"`
}

// DBLease is one lease.
type DBLease struct {
	// ID is the lease's ID in hexadecimal, as etcdctl prints it.
	ID string `json:"id"`
	// TTL is its granted TTL and RemainingTTL the checkpointed remainder
	// (0: none), seconds.
	TTL          int64 `json:"ttl"`
	RemainingTTL int64 `json:"remaining_ttl,omitempty"`
	Keys         int64 `json:"keys"`
	// Resource is the resource of most of its keys.
	Resource string `json:"resource,omitempty"`
}

// DBBucket is one of bbolt's buckets (key, meta, lease, members, auth...).
type DBBucket struct {
	Name string `json:"name"`
	Keys int64  `json:"keys"`
	// InUse is the bytes its pages use; Pages the pages it spans.
	InUse float64 `json:"in_use"`
	Pages int64   `json:"pages"`
}

// DBMembers compares the databases of several members of one cluster
// (`etcdperf db FILE FILE...`): where each stands in raft and in its
// revisions, and a hash of the revisions they all hold.
type DBMembers struct {
	Files []DBMember `json:"files"`
	// HashFrom and HashTo bound the revisions hashed: after HashFrom (the
	// latest compaction of any file), up to HashTo (the oldest newest
	// revision); 0 when nothing was compared.
	HashFrom int64    `json:"hash_from,omitempty"`
	HashTo   int64    `json:"hash_to,omitempty"`
	Notes    []string `json:"notes,omitempty"`
}

// DBMember is one file of a comparison.
type DBMember struct {
	Path string `json:"path"`
	// ConsistentIndex and Term are the raft position the file was written
	// at; Revision its newest revision, CompactRevision its last finished
	// compaction.
	ConsistentIndex uint64 `json:"consistent_index"`
	Term            uint64 `json:"term,omitempty"`
	Revision        int64  `json:"revision"`
	CompactRevision int64  `json:"compact_revision"`
	// Hash is the CRC-32C of the revisions (HashFrom, HashTo]; Hashed says
	// it was computed.
	Hash   uint32 `json:"hash,omitempty"`
	Hashed bool   `json:"hashed,omitempty"`
	// Error says why the file could not be read.
	Error string `json:"error,omitempty"`
}
