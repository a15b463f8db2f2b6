package promexport

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/prometheus/common/model"
)

// etcd's metrics of what a cluster holds and writes.
const (
	// dbInUse is the part of the database's file that holds data (etcd
	// 3.4 and later); dbTotal the file's size, free pages included.
	dbInUse = "etcd_mvcc_db_total_size_in_use_in_bytes"
	dbTotal = "etcd_mvcc_db_total_size_in_bytes"
	// walBytes counts the bytes a member wrote to its WAL (etcd 3.4.13,
	// the oldest release the captures in promscrape's testdata hold,
	// exports it already): each committed proposal is one entry, its
	// request (key, value, header) in etcd's framing.
	walBytes  = "etcd_disk_wal_write_bytes_total"
	proposals = "etcd_server_proposals_committed_total"
)

// DBSize is the largest database of the cluster over the range, from
// etcd's own gauge.
type DBSize struct {
	Bytes float64
	// Metric is the gauge it came from: the part in use (dbInUse), or the
	// file's size (dbTotal) where etcd exports no in-use figure.
	Metric string
	// InUse says that Bytes is the data's size, not the file's.
	InUse bool
}

// MeanWrite is the mean size of the cluster's writes over the range: the
// bytes a member wrote to its WAL per proposal it committed (keys, values
// and etcd's framing of each entry).
type MeanWrite struct {
	Bytes float64
	// Writes is the proposals the member committed over the range.
	Writes float64
}

// DBSize reads the largest database size of any member over the range:
// the part in use where etcd exports it, else the file's size. It returns
// an error saying which metrics are missing when Prometheus has neither.
func (c *Client) DBSize(ctx context.Context, r Resolved, selector string) (*DBSize, error) {
	b := builder{selector: selector}
	for _, m := range []string{dbInUse, dbTotal} {
		v, err := c.instantMax(ctx, "db_size", fmt.Sprintf("max(max_over_time(%s[%s]))", b.sel(m), period(r)), r)
		if err != nil {
			return nil, err
		}
		if !math.IsNaN(v) {
			return &DBSize{Bytes: v, Metric: m, InUse: m == dbInUse}, nil
		}
	}
	return nil, fmt.Errorf("%w at %s for %s or %s%s between %s and %s: check the time range and that it scrapes etcd",
		ErrNoData, c.url, dbInUse, dbTotal, selectorNote(selector), r.Start.UTC().Format(time.RFC3339), r.End.UTC().Format(time.RFC3339))
}

// MeanWrite reads the mean bytes per write of the member that wrote the
// most per write over the range (members write the same entries; the
// largest figure is the safe one). Writes is 0 when the cluster committed
// nothing; an error says which metric is missing.
func (c *Client) MeanWrite(ctx context.Context, r Resolved, selector string) (*MeanWrite, error) {
	b := builder{selector: selector}
	p := period(r)
	writes, err := c.instantMax(ctx, "writes", fmt.Sprintf("max(increase(%s[%s]))", b.sel(proposals), p), r)
	if err != nil {
		return nil, err
	}
	if math.IsNaN(writes) {
		return nil, fmt.Errorf("%w at %s for %s%s between %s and %s: check the time range and that it scrapes etcd",
			ErrNoData, c.url, proposals, selectorNote(selector), r.Start.UTC().Format(time.RFC3339), r.End.UTC().Format(time.RFC3339))
	}
	if writes <= 0 {
		return &MeanWrite{}, nil
	}
	// Both counters of a member come from the same scrapes: increase()
	// extrapolates them alike to the range's ends (but for counters that
	// started near zero in the range: a member started minutes before is
	// off by a few percent), and their ratio is the mean. A member that
	// committed nothing gives no ratio (a division by zero is dropped).
	mean, err := c.instantMax(ctx, "mean_write",
		fmt.Sprintf("max(increase(%s[%s]) / (increase(%s[%s]) > 0))", b.sel(walBytes), p, b.sel(proposals), p), r)
	if err != nil {
		return nil, err
	}
	if math.IsNaN(mean) {
		return nil, fmt.Errorf("%w at %s for %s%s between %s and %s (etcd 3.4.13 and later export it; its proposals are there)",
			ErrNoData, c.url, walBytes, selectorNote(selector), r.Start.UTC().Format(time.RFC3339), r.End.UTC().Format(time.RFC3339))
	}
	return &MeanWrite{Bytes: mean, Writes: writes}, nil
}

// instantMax evaluates an expression of one value at the range's end;
// NaN when it has none (no series).
func (c *Client) instantMax(ctx context.Context, name, expr string, r Resolved) (float64, error) {
	v, _, err := c.Instant(ctx, Query{Name: name, Expr: expr}, r.End)
	if err != nil {
		return 0, err
	}
	if len(v) == 0 || math.IsNaN(float64(v[0].Value)) || math.IsInf(float64(v[0].Value), 0) {
		return math.NaN(), nil
	}
	return float64(v[0].Value), nil
}

// period is the range as a PromQL duration.
func period(r Resolved) string {
	return model.Duration(max(r.End.Sub(r.Start).Round(time.Second), time.Second)).String()
}

// quotaGauge is etcd's --quota-backend-bytes as a member exports it.
const quotaGauge = "etcd_server_quota_backend_bytes"

// Databases reads each member's database over the range, by instance:
// its file's size and the part in use at the range's end (the last
// sample in it), its quota, and the file's growth over the range (the
// slope of a least-squares line through its samples, as PromQL's deriv
// and etcd's own growth alert, predict_linear, fit it). Members whose
// file size Prometheus does not hold are left out.
func (c *Client) Databases(ctx context.Context, r Resolved, selector string) ([]result.PromDatabase, error) {
	b := builder{selector: selector}
	p := period(r)
	byInstance := func(name, expr string) (map[string]float64, error) {
		v, _, err := c.Instant(ctx, Query{Name: name, Expr: expr}, r.End)
		if err != nil {
			return nil, err
		}
		out := map[string]float64{}
		for _, s := range v {
			if f := float64(s.Value); !math.IsNaN(f) && !math.IsInf(f, 0) {
				out[string(s.Metric["instance"])] = f
			}
		}
		return out, nil
	}
	last := func(m string) string { return fmt.Sprintf("max by (instance) (last_over_time(%s[%s]))", b.sel(m), p) }
	size, err := byInstance("db_size", last(dbTotal))
	if err != nil || len(size) == 0 {
		return nil, err
	}
	inUse, err := byInstance("db_size_in_use", last(dbInUse))
	if err != nil {
		return nil, err
	}
	quota, err := byInstance("db_quota", last(quotaGauge))
	if err != nil {
		return nil, err
	}
	growth, err := byInstance("db_growth", fmt.Sprintf("max by (instance) (deriv(%s[%s]))", b.sel(dbTotal), p))
	if err != nil {
		return nil, err
	}
	var out []result.PromDatabase
	for inst, s := range size {
		out = append(out, result.PromDatabase{Instance: inst, Size: s, InUse: inUse[inst], Quota: quota[inst], Growth: growth[inst]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Instance < out[j].Instance })
	return out, nil
}
