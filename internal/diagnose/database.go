package diagnose

import (
	"fmt"
	"slices"
	"strings"

	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// The rules over the members' databases, whichever command read them (a
// load check's members, metrics, a scale run's largest member): how near
// the backend quota they are, and how much of them is free pages.
func init() {
	Register(
		Rule{ID: "db_snapshot_damaged", Apply: dbSnapshotDamaged},
		Rule{ID: "db_members", Apply: dbMembers},
		Rule{ID: "db_near_quota", Apply: dbNearQuota},
		Rule{ID: "db_fragmented", Apply: dbFragmented},
	)
}

// dbNearQuota warns when a member's database passes db_quota_used's limit
// of --quota-backend-bytes (the level at which scale stops), critical past
// db_quota_alarm, where etcd's own alert pages: at the quota etcd raises
// the NOSPACE alarm and refuses every write. (db_quota_used's warning
// level, half the quota, is the scale check's early notice; a cluster
// half full is no finding.)
func dbNearQuota(r *result.Result) []result.Finding {
	warn, limit := LimitOf(r, limits.DBQuotaUsed), LimitOf(r, limits.DBQuotaAlarm)
	f := result.Finding{ID: "db_near_quota", Severity: result.Warning}
	var names []string
	for _, m := range Members(r) {
		if m.Quota <= 0 || m.DBSize < warn*m.Quota {
			continue
		}
		share := m.DBSize / m.Quota
		if share >= limit {
			f.Severity = result.Critical
		}
		names = append(names, m.Name)
		f.Evidence = append(f.Evidence, result.Evidence{
			What:     fmt.Sprintf("%s: database %s of its %s quota (%.0f%%), %s in use", m.Name, units.Bytes(m.DBSize), units.Bytes(m.Quota), share*100, units.Bytes(m.DBSizeInUse)),
			Observed: share, Limit: limit, Unit: "ratio",
			Source: "etcd_mvcc_db_total_size_in_bytes, " + m.QuotaSource,
		})
	}
	if len(names) == 0 {
		return nil
	}
	f.Title = fmt.Sprintf("The database of %s is close to its quota: at the quota etcd raises the NOSPACE alarm and refuses writes (mvcc: database space exceeded)", strings.Join(names, ", "))
	f.Recommendation = "Compact the history (etcd's --auto-compaction-retention; kube-apiserver compacts every 5 minutes), then defragment the members one at a time " +
		"(etcdctl defrag) to give the space back; raise --quota-backend-bytes (at most 8 GiB is advised) only if the data really needs it."
	return []result.Finding{f}
}

// dbFragmented advises a defragmentation when much of a large database
// is free pages, which count against the quota until then.
func dbFragmented(r *result.Result) []result.Finding {
	size, inUse := LimitOf(r, limits.DBFragmentedSize), LimitOf(r, limits.DBInUse)
	f := result.Finding{ID: "db_fragmented", Severity: result.Info}
	var titles, names []string
	for _, m := range Members(r) {
		if m.DBSize < size || m.DBSizeInUse <= 0 || m.DBSizeInUse >= inUse*m.DBSize {
			continue
		}
		names = append(names, m.Name)
		titles = append(titles, fmt.Sprintf("%s's database file is %s but only %s of it is in use", m.Name, units.Bytes(m.DBSize), units.Bytes(m.DBSizeInUse)))
		f.Evidence = append(f.Evidence,
			result.Evidence{What: "database size of " + m.Name, Observed: m.DBSize, Unit: "bytes", Source: "etcd_mvcc_db_total_size_in_bytes"},
			result.Evidence{What: "database size in use of " + m.Name, Observed: m.DBSizeInUse, Limit: inUse * m.DBSize, Unit: "bytes", Source: "etcd_mvcc_db_total_size_in_use_in_bytes"})
	}
	if len(names) == 0 {
		return nil
	}
	f.Title = strings.Join(titles, "; ") + ": the rest is free pages that count against the quota"
	f.Recommendation = "Defragment the members one at a time (etcdctl defrag --endpoints ONE) after a compaction, outside peak hours: " +
		"the file shrinks to what is in use, and a defragmentation blocks the member while it runs."
	return []result.Finding{f}
}

// dbSnapshotDamaged: a snapshot whose content no longer matches the
// SHA-256 etcd appended to it was changed or cut after etcd wrote it:
// etcdutl snapshot restore refuses it, and what was read from it may not
// be what the member held.
func dbSnapshotDamaged(r *result.Result) []result.Finding {
	d := r.DB
	if d == nil || d.SnapshotHash != "mismatch" {
		return nil
	}
	return []result.Finding{{
		ID:       "db_snapshot_damaged",
		Severity: result.Critical,
		Title:    fmt.Sprintf("The snapshot %s is damaged: its content does not match the SHA-256 etcd wrote at its end", d.Path),
		Evidence: []result.Evidence{{What: "SHA-256 of the file's content against the hash etcd's snapshot stream appended (the last 32 bytes)", Source: d.Path}},
		Recommendation: "Do not restore from it (etcdutl snapshot restore refuses it; --skip-hash-check restores whatever it now holds): take a new snapshot " +
			"(etcdctl snapshot save), or copy this one again from where it was kept, and check the storage it sat on.",
	}}
}

// dbMembers judges a comparison of members' databases: a file that cannot
// be read (critical), files whose key-value history differs from the
// majority's over the revisions they all hold (critical: diverged), and
// the one to restore from: the newest raft position (consistent index,
// then term) among those that agree.
func dbMembers(r *result.Result) []result.Finding {
	c := r.DBMembers
	if c == nil {
		return nil
	}
	var out []result.Finding
	for _, f := range c.Files {
		if f.Error != "" {
			out = append(out, result.Finding{ID: "db_members_unreadable", Severity: result.Critical,
				Title:          fmt.Sprintf("%s could not be read: %s", f.Path, f.Error),
				Evidence:       []result.Evidence{{What: f.Error, Source: f.Path}},
				Recommendation: "Copy the member's member/snap/db again while the member is stopped, or take a snapshot of a running member (etcdctl snapshot save)."})
		}
	}
	var hs []uint32
	for _, f := range c.Files {
		if f.Hashed {
			hs = append(hs, f.Hash)
		}
	}
	majority, agreed, differ := majorityHash(hs)
	var diverged []string
	var ev []result.Evidence
	for _, f := range c.Files {
		if !f.Hashed {
			continue
		}
		ev = append(ev, result.Evidence{What: fmt.Sprintf("%s: consistent index %d, term %d, revisions %d to %d, hash of revisions %d-%d: %d",
			f.Path, f.ConsistentIndex, f.Term, f.CompactRevision, f.Revision, c.HashFrom+1, c.HashTo, f.Hash), Source: f.Path})
		if differ && (f.Hash != majority || !agreed) {
			diverged = append(diverged, f.Path)
		}
	}
	if len(diverged) > 0 {
		title := fmt.Sprintf("%s diverged: its key-value history over revisions %d-%d differs from the other members'", strings.Join(diverged, ", "), c.HashFrom+1, c.HashTo)
		if !agreed {
			title = fmt.Sprintf("The members' key-value histories over revisions %d-%d differ and no majority agrees: %s", c.HashFrom+1, c.HashTo, strings.Join(diverged, ", "))
		}
		out = append(out, result.Finding{ID: "db_members_diverged", Severity: result.Critical, Title: title, Evidence: ev,
			Recommendation: "Do not restore from a diverged member's data (etcd-io/etcd#12535, #13766): restore the cluster from a member that agrees with the " +
				"majority, and follow etcd's data corruption guide (https://etcd.io/docs/v3.5/op-guide/data_corruption/)."})
	}
	var newest *result.DBMember
	for i, f := range c.Files {
		if f.Error != "" || slices.Contains(diverged, f.Path) {
			continue
		}
		if newest == nil || f.ConsistentIndex > newest.ConsistentIndex || f.ConsistentIndex == newest.ConsistentIndex && f.Term > newest.Term {
			newest = &c.Files[i]
		}
	}
	if newest != nil && len(c.Files) > 1 {
		var behind []string
		for _, f := range c.Files {
			if f.Error == "" && f.Path != newest.Path && f.ConsistentIndex < newest.ConsistentIndex {
				behind = append(behind, fmt.Sprintf("%s is %d entries behind", f.Path, newest.ConsistentIndex-f.ConsistentIndex))
			}
		}
		term := fmt.Sprintf(", term %d", newest.Term)
		if newest.Term == 0 {
			term = "" // etcd 3.4 does not record it in the file
		}
		title := fmt.Sprintf("Restore from %s: the newest raft position of the files (consistent index %d%s, revision %d)", newest.Path, newest.ConsistentIndex, term, newest.Revision)
		if len(behind) > 0 {
			title += "; " + strings.Join(behind, ", ")
		}
		out = append(out, result.Finding{ID: "db_members_newest", Severity: result.Info, Title: title, Evidence: ev,
			Recommendation: "When a cluster has lost its quorum, restore it from the newest member's data: etcdutl snapshot restore on that file " +
				"(--skip-hash-check for a copy of member/snap/db), or restart that member with --force-new-cluster, then add the others back " +
				"with fresh data dirs (etcd disaster recovery guide, https://etcd.io/docs/v3.5/op-guide/recovery/)."})
	}
	return out
}
