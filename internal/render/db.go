package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

func init() {
	RegisterText(result.KindDB, dbText)
	RegisterCSV(result.KindDB, DBCSV)
}

// dbText is the file against its B-tree and its quota, then what fills it:
// per resource, per namespace, the keys with most revisions, the leases.
func dbText(w io.Writer, r *result.Result) error {
	if r.DBMembers != nil {
		dbMembersText(w, r.DBMembers)
		return nil
	}
	d := r.DB
	if d == nil {
		return nil
	}
	what := "a database file"
	if d.Snapshot {
		what = "an etcd snapshot, its SHA-256 " + map[string]string{"ok": "verified", "mismatch": "NOT matching its content"}[d.SnapshotHash]
	}
	fmt.Fprintf(w, "etcdperf db: %s (%s)\n", d.Path, what)
	pages := func(n int64) string { return fmt.Sprintf("%d pages of %s", n, units.Bytes(float64(d.PageSize))) }
	free := float64(d.FreePages+d.PendingPages) * float64(d.PageSize)
	fmt.Fprintf(w, "  file %s: B-tree %s (%s), in use %s, free %s (%s, as bbolt counts them)\n",
		units.Bytes(d.FileSize), units.Bytes(d.Size), pages(d.Pages), units.Bytes(d.SizeInUse), units.Bytes(free), pages(d.FreePages+d.PendingPages))
	fmt.Fprintf(w, "  a defragmentation gives back %s (%.0f%% of the file): the file shrinks to about %s\n",
		units.Bytes(d.Reclaimable), pct(d.Reclaimable, d.FileSize), units.Bytes(d.SizeInUse))
	fmt.Fprintf(w, "  quota %s (%s): %.1f%% used, %s of headroom; %s after a defragmentation\n",
		units.Bytes(d.Quota), d.QuotaSource, pct(d.Size, d.Quota), units.Bytes(d.Quota-d.Size), units.Bytes(d.Quota-d.SizeInUse))
	rev := fmt.Sprintf("  revision %d", d.Revision)
	if d.CompactRevision > 0 {
		rev += fmt.Sprintf(", compacted at %d (%d revisions since)", d.CompactRevision, d.Revision-d.CompactRevision)
	} else {
		rev += ", never compacted"
	}
	fmt.Fprintf(w, "%s, consistent index %d, term %d\n", rev, d.ConsistentIndex, d.Term)
	t := d.Totals
	fmt.Fprintf(w, "  %d keys, %s live; %d revisions of history, %s", t.Keys, units.Bytes(t.LiveBytes), t.HistoryRevisions, units.Bytes(t.HistoryBytes))
	if t.DeletedKeys > 0 {
		fmt.Fprintf(w, "; %d deleted keys kept until a compaction", t.DeletedKeys)
	}
	fmt.Fprintf(w, "; %d leases hold %d keys\n", d.Leases.Count, d.Leases.Keys)
	for _, a := range d.Alarms {
		fmt.Fprintf(w, "  alarm raised: %s\n", a)
	}

	fmt.Fprintln(w)
	rows := [][]string{{"resource", "class", "keys", "live", "history revs", "history", "share", "namespaces"}}
	total := t.Bytes()
	for _, rs := range d.Resources {
		ns := ""
		if rs.Namespaces > 0 {
			ns = strconv.Itoa(rs.Namespaces)
		}
		rows = append(rows, []string{printable(rs.Name), rs.Class, strconv.FormatInt(rs.Keys, 10), units.Bytes(rs.LiveBytes),
			strconv.FormatInt(rs.HistoryRevisions, 10), units.Bytes(rs.HistoryBytes), fmt.Sprintf("%.1f%%", pct(rs.Bytes(), total)), ns})
	}
	writeColumns(w, rows)

	if len(d.Namespaces) > 0 {
		fmt.Fprintln(w)
		rows = [][]string{{"namespace", "keys", "live", "history revs", "history"}}
		for _, ns := range d.Namespaces {
			rows = append(rows, []string{printable(ns.Name), strconv.FormatInt(ns.Keys, 10), units.Bytes(ns.LiveBytes),
				strconv.FormatInt(ns.HistoryRevisions, 10), units.Bytes(ns.HistoryBytes)})
		}
		writeColumns(w, rows)
		if d.NamespacesTotal > len(d.Namespaces) {
			fmt.Fprintf(w, "(the %d namespaces with most bytes of %d; --top lists more)\n", len(d.Namespaces), d.NamespacesTotal)
		}
	}
	if len(d.Churn) > 0 {
		fmt.Fprintf(w, "\nkeys with the most revisions kept (churn since the last compaction):\n")
		rows = [][]string{{"revisions", "history", "key"}}
		for _, k := range d.Churn {
			key := printable(k.Key)
			if k.Deleted {
				key += " (deleted)"
			}
			rows = append(rows, []string{strconv.FormatInt(k.Revisions, 10), units.Bytes(k.HistoryBytes), key})
		}
		writeColumns(w, rows)
	}
	if len(d.Leases.Top) > 0 {
		fmt.Fprintf(w, "\nleases with the most keys (%d leases, %d with no key", d.Leases.Count, d.Leases.Empty)
		if d.Leases.Missing > 0 {
			fmt.Fprintf(w, "; %d keys name a lease the file does not hold", d.Leases.Missing)
		}
		fmt.Fprintln(w, "):")
		rows = [][]string{{"lease", "ttl", "keys", "resource"}}
		for _, l := range d.Leases.Top {
			rows = append(rows, []string{l.ID, units.Seconds(float64(l.TTL)), strconv.FormatInt(l.Keys, 10), printable(l.Resource)})
		}
		writeColumns(w, rows)
	}
	var bs []string
	for _, b := range d.Buckets {
		bs = append(bs, fmt.Sprintf("%s %d (%s)", b.Name, b.Keys, units.Bytes(b.InUse)))
	}
	fmt.Fprintf(w, "\nbbolt buckets, keys and bytes in use: %s\n", strings.Join(bs, ", "))
	for _, n := range d.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

func pct(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return 100 * a / b
}

// printable quotes a key or a name that holds bytes a terminal would not
// show as they are.
func printable(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) || r == unicode.ReplacementChar {
			return strconv.Quote(s)
		}
	}
	return s
}

// DBCSV writes the table per resource: one row per resource or group of
// other keys, sizes in bytes.
func DBCSV(w io.Writer, r *result.Result) error {
	d := r.DB
	if d == nil {
		return fmt.Errorf("the result has no db section")
	}
	cw := csv.NewWriter(w)
	exact := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	cw.Write([]string{"resource", "class", "prefix", "keys", "live_bytes", "history_revisions", "history_bytes", "deleted_keys", "stored_bytes", "leased_keys", "namespaces"})
	for _, rs := range d.Resources {
		cw.Write([]string{rs.Name, rs.Class, rs.Prefix, strconv.FormatInt(rs.Keys, 10), exact(rs.LiveBytes), strconv.FormatInt(rs.HistoryRevisions, 10),
			exact(rs.HistoryBytes), strconv.FormatInt(rs.DeletedKeys, 10), exact(rs.StoredBytes), strconv.FormatInt(rs.LeasedKeys, 10), strconv.Itoa(rs.Namespaces)})
	}
	cw.Flush()
	return cw.Error()
}

// dbMembersText is a comparison of members' databases: one row per file.
func dbMembersText(w io.Writer, c *result.DBMembers) {
	fmt.Fprintf(w, "etcdperf db: %d members' databases compared\n", len(c.Files))
	width := len("file")
	for _, f := range c.Files {
		width = max(width, len(f.Path))
	}
	hash := "hash"
	if c.HashTo > 0 {
		hash = fmt.Sprintf("hash of revisions %d-%d", c.HashFrom+1, c.HashTo)
	}
	fmt.Fprintf(w, "  %-*s  %16s  %6s  %12s  %12s  %s\n", width, "file", "consistent index", "term", "compacted at", "revision", hash)
	for _, f := range c.Files {
		if f.Error != "" && !f.Hashed && f.Revision == 0 {
			fmt.Fprintf(w, "  %-*s  could not be read: %s\n", width, f.Path, f.Error)
			continue
		}
		h := "-"
		if f.Hashed {
			h = fmt.Sprint(f.Hash)
		}
		fmt.Fprintf(w, "  %-*s  %16d  %6d  %12d  %12d  %s\n", width, f.Path, f.ConsistentIndex, f.Term, f.CompactRevision, f.Revision, h)
	}
	for _, n := range c.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}
